package org.zrm.changesource.pg.internal.types;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Maps a Postgres column default expression ({@code pg_get_expr(adbin)}) to a SQLite default for
 * {@code ALTER TABLE … ADD COLUMN} (upstream {@code mapPostgresToLiteDefault}): a conservative
 * allow-list; anything else must be backfilled from upstream.
 */
public final class LiteDefaults {

    private static final Pattern NUMERIC = Pattern.compile("^-?\\d+(\\.\\d+)?$");
    private static final Pattern BOOLEAN = Pattern.compile("^(true|false)$");
    private static final Pattern QUOTED_WITH_CAST = Pattern.compile("^('.*')::(\\w+)$");
    private static final Pattern EMPTY_ARRAY_CONSTRUCTOR = Pattern.compile("^ARRAY\\s*\\[\\s*\\]::\\w+\\[\\]$",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern EMPTY_ARRAY_LITERAL = Pattern.compile("^'\\{\\}'::\\w+\\[\\]$");

    private LiteDefaults() {}

    /**
     * @return the SQLite default expression, or {@code null} if there is no default
     * @throws UnsupportedColumnDefaultException if the default cannot be expressed in SQLite
     */
    public static String mapPostgresToLiteDefault(String table, String column, String defaultExpression) {
        if (defaultExpression == null || defaultExpression.isEmpty()) {
            return null;
        }
        if (NUMERIC.matcher(defaultExpression).matches()) {
            return defaultExpression;
        }
        if (BOOLEAN.matcher(defaultExpression).matches()) {
            return "true".equals(defaultExpression) ? "1" : "0";
        }
        Matcher m = QUOTED_WITH_CAST.matcher(defaultExpression);
        if (m.matches()) {
            return m.group(1);
        }
        if (EMPTY_ARRAY_CONSTRUCTOR.matcher(defaultExpression).matches()
                || EMPTY_ARRAY_LITERAL.matcher(defaultExpression).matches()) {
            return "'[]'";
        }
        throw new UnsupportedColumnDefaultException(
                "Unsupported default value for " + table + "." + column + ": " + defaultExpression);
    }

    /** A default that SQLite cannot reproduce; the column must be backfilled instead. */
    public static final class UnsupportedColumnDefaultException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public UnsupportedColumnDefaultException(String message) {
            super(message);
        }
    }
}

package org.zrm.replica;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Maps a Postgres column default ({@code pg_get_expr(adbin)}, or the {@code dflt} of a protocol
 * column) to a SQLite default for {@code ALTER TABLE … ADD COLUMN} (upstream
 * {@code mapPostgresToLiteDefault}). This is a conservative allow-list of defaults SQLite
 * reproduces exactly: numeric and boolean literals, quoted literals cast to a simple type, and
 * empty arrays. Any other default must be backfilled from upstream instead.
 */
public final class LiteDefaults {

    // The patterns are upstream's JavaScript regular expressions. They are matched against the
    // whole input (Matcher.matches), as JavaScript's ^…$ without the m flag is; JavaScript's '.'
    // stops only at \n, \r, U+2028 and U+2029 (Java's '.' also at U+0085), so the quoted part
    // spells that set out. A quoted default spanning lines is therefore unsupported, as upstream.
    private static final Pattern NUMERIC = Pattern.compile("^-?\\d+(\\.\\d+)?$");
    private static final Pattern BOOLEAN = Pattern.compile("^(true|false)$");
    private static final Pattern QUOTED_WITH_CAST = Pattern.compile("^('[^\\n\\r\\u2028\\u2029]*')::(\\w+)$");
    private static final Pattern EMPTY_ARRAY_CONSTRUCTOR = Pattern.compile("^ARRAY\\s*\\[\\s*\\]::\\w+\\[\\]$",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern EMPTY_ARRAY_LITERAL = Pattern.compile("^'\\{\\}'::\\w+\\[\\]$");

    private LiteDefaults() {}

    /**
     * Maps one default.
     *
     * @param table the table, for the error message
     * @param column the column, for the error message
     * @param defaultExpression the Postgres default expression; {@code null} or empty for none
     * @return the SQLite default expression, or {@code null} if there is no default
     * @throws UnsupportedColumnDefaultException if SQLite cannot reproduce the default; the message
     *     is upstream's ({@code Unsupported default value for <table>.<column>: <expression>})
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
}

package org.zrm.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Properties;

import org.zrm.secret.Secrets;

/**
 * A PostgreSQL connection URI as zero-cache reads it ({@code ZERO_UPSTREAM_DB},
 * {@code ZERO_CHANGE_DB}), turned into what pgjdbc needs: a JDBC URL plus connection properties.
 * One parser for every component, because {@code ZERO_CHANGE_DB} defaults to the upstream URI and
 * both must mean the same database with the same TLS setting.
 *
 * <ul>
 *   <li>{@code postgres://} or {@code postgresql://user:password@host:port/db?params}; a
 *       {@code jdbc:postgresql:} URL is taken as it is.</li>
 *   <li>User and password are percent-decoded; {@code +} stays a plus (URIs have no form
 *       encoding), so passwords containing {@code +}, {@code @} or {@code :} survive.</li>
 *   <li>Port 5432 by default; the database defaults to the user name, else {@code postgres}
 *       (libpq's rule).</li>
 *   <li>{@code ssl}/{@code sslmode} follow zero-cache: {@code disable}/{@code false} → no TLS,
 *       {@code no-verify} → TLS without verification (pgjdbc {@code require}), anything else →
 *       {@code prefer}. Other query parameters are passed to pgjdbc unchanged.</li>
 * </ul>
 *
 * {@link #toString()} never shows the password; error messages mask it too.
 *
 * @param jdbcUrl  the pgjdbc URL, without credentials
 * @param user     the user name, or {@code null} to let pgjdbc decide
 * @param password the password, or {@code null}
 * @param sslMode  the pgjdbc {@code sslmode}, or {@code null} for pgjdbc's default (a JDBC URL
 *                 given as is)
 */
public record PostgresUri(String jdbcUrl, String user, String password, String sslMode) {

    private static final java.util.regex.Pattern PLAIN_USER_INFO =
            java.util.regex.Pattern.compile("[^:/?#@]*(?::\\*\\*\\*\\*)?");

    /**
     * @param uri     the URI to read
     * @param setting the setting it came from (e.g. {@code upstream.db}), named in error messages
     * @return the parsed URI
     * @throws IllegalArgumentException naming the setting, with the password masked, if the URI is
     *     empty, malformed, not a postgres URI, or has no host
     */
    public static PostgresUri parse(String uri, String setting) {
        Objects.requireNonNull(setting, "setting");
        String text = uri == null ? "" : uri.strip();
        if (text.isEmpty()) {
            throw new IllegalArgumentException(setting + " is not set");
        }
        if (text.startsWith("jdbc:postgresql:")) {
            return new PostgresUri(text, null, null, null);
        }
        URI parsed;
        try {
            parsed = new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(setting + " is not a valid URI: " + shown(text)
                    + " (" + Secrets.maskUrls(e.getReason()) + ")");
        }
        if (!"postgres".equals(parsed.getScheme()) && !"postgresql".equals(parsed.getScheme())) {
            throw new IllegalArgumentException(setting + " must be a postgres:// or postgresql:// URI: "
                    + shown(text));
        }
        String host = parsed.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException(setting + " has no host: " + shown(text));
        }
        String user = null;
        String password = null;
        String userInfo = parsed.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        String path = parsed.getRawPath();
        String db = path == null || path.length() <= 1 ? (user == null ? "postgres" : user) : decode(path.substring(1));
        String sslMode = "prefer";
        StringBuilder passThrough = new StringBuilder();
        if (parsed.getRawQuery() != null) {
            for (String pair : parsed.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                String key = decode(eq < 0 ? pair : pair.substring(0, eq));
                if (key.equals("ssl") || key.equals("sslmode")) {
                    sslMode = zeroSslMode(eq < 0 ? "" : decode(pair.substring(eq + 1)));
                } else if (!pair.isEmpty()) {
                    passThrough.append(passThrough.length() == 0 ? '?' : '&').append(pair);
                }
            }
        }
        String hostPart = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        int port = parsed.getPort() < 0 ? 5432 : parsed.getPort();
        String jdbcUrl = "jdbc:postgresql://" + hostPart + ":" + port + "/" + encodePathSegment(db) + passThrough;
        return new PostgresUri(jdbcUrl, user, password, sslMode);
    }

    /**
     * @return fresh pgjdbc properties with the credentials and {@code sslmode} (whatever is set);
     *     callers add their own (application name, replication, …)
     */
    public Properties connectionProperties() {
        Properties props = new Properties();
        if (user != null) {
            props.setProperty("user", user);
        }
        if (password != null) {
            props.setProperty("password", password);
        }
        if (sslMode != null) {
            props.setProperty("sslmode", sslMode);
        }
        return props;
    }

    /** Never shows the password. */
    @Override
    public String toString() {
        return "PostgresUri[" + shown(jdbcUrl) + ", user=" + user + ", sslmode=" + sslMode + "]";
    }

    /**
     * The URI as error messages show it: {@link Secrets#maskUrls}, and for text that is not even
     * shaped like {@code scheme://user:password@} (missing slashes, a password with {@code /}),
     * everything between the scheme and the last {@code @} hidden, unless it is a plain user name
     * (without {@code ://}, everything before the last {@code @}).
     */
    private static String shown(String text) {
        String masked = Secrets.maskUrls(text);
        int at = masked.lastIndexOf('@');
        int colon = masked.indexOf(':');
        if (at < 0 || colon < 0 || colon > at) {
            return masked;
        }
        // Without "//" a scheme cannot be told from a user name ("user:password@host"): hide it all.
        int start = masked.startsWith("//", colon + 1) ? colon + 3 : 0;
        if (start > at || PLAIN_USER_INFO.matcher(masked.substring(start, at)).matches()) {
            return masked;
        }
        return masked.substring(0, start) + Secrets.MASK + masked.substring(at);
    }

    private static String zeroSslMode(String value) {
        return switch (value) {
            case "disable", "false" -> "disable";
            case "no-verify" -> "require";
            default -> "prefer";
        };
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** Percent-encodes what pgjdbc's URL parser would misread in a database name. */
    private static String encodePathSegment(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if (c < 0x80 && Character.isLetterOrDigit(c) || c == '_' || c == '-' || c == '.') {
                b.append((char) c);
            } else {
                b.append('%').append(String.format("%02X", c));
            }
        }
        return b.toString();
    }
}

package org.zrm.storer.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Properties;
import org.zrm.secret.Secrets;

/**
 * A Postgres connection URI in zero-cache's form ({@code postgres[ql]://user:password@host:port/db?params})
 * turned into what pgjdbc needs: a JDBC URL without credentials, plus user and password properties.
 * Query parameters (e.g. {@code sslmode}) are passed through to pgjdbc unchanged.
 *
 * @param jdbcUrl {@code jdbc:postgresql://host:port/db[?params]}
 * @param user the user name, or {@code null} to let pgjdbc decide
 * @param password the password, or {@code null}
 */
public record PgUri(String jdbcUrl, String user, String password) {

    /**
     * @param uri the connection URI; {@code jdbc:postgresql:} URLs are accepted as they are
     * @return the parsed form
     * @throws IllegalArgumentException with a masked copy of the URI if it is malformed
     */
    public static PgUri parse(String uri) {
        Objects.requireNonNull(uri, "uri");
        String text = uri.strip();
        if (text.isEmpty()) {
            throw new IllegalArgumentException("change database URI is empty");
        }
        if (text.startsWith("jdbc:postgresql:")) {
            return new PgUri(text, null, null);
        }
        URI parsed;
        try {
            parsed = new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("malformed change database URI " + Secrets.maskUrls(text)
                    + ": " + Secrets.maskUrls(e.getReason()), null);
        }
        String scheme = parsed.getScheme();
        if (!"postgres".equals(scheme) && !"postgresql".equals(scheme)) {
            throw new IllegalArgumentException("change database URI " + Secrets.maskUrls(text)
                    + " must start with postgres:// or postgresql://");
        }
        String host = parsed.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("change database URI " + Secrets.maskUrls(text) + " has no host");
        }
        int port = parsed.getPort() < 0 ? 5432 : parsed.getPort();
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
        String hostPart = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        StringBuilder url = new StringBuilder("jdbc:postgresql://").append(hostPart).append(':').append(port)
                .append('/').append(URLEncoderLite.encodePathSegment(db));
        if (parsed.getRawQuery() != null) {
            url.append('?').append(parsed.getRawQuery());
        }
        return new PgUri(url.toString(), user, password);
    }

    /** @return pgjdbc properties with the credentials (if any) */
    public Properties credentials() {
        Properties props = new Properties();
        if (user != null) {
            props.setProperty("user", user);
        }
        if (password != null) {
            props.setProperty("password", password);
        }
        return props;
    }

    /** Never shows the password. */
    @Override
    public String toString() {
        return "PgUri[" + jdbcUrl + ", user=" + user + "]";
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** Percent-encodes what pgjdbc's URL parser would misread in a database name. */
    private static final class URLEncoderLite {
        static String encodePathSegment(String s) {
            StringBuilder b = new StringBuilder();
            for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
                int c = x & 0xff;
                if (Character.isLetterOrDigit(c) && c < 0x80 || c == '_' || c == '-' || c == '.') {
                    b.append((char) c);
                } else {
                    b.append('%').append(String.format("%02X", c));
                }
            }
            return b.toString();
        }
    }
}

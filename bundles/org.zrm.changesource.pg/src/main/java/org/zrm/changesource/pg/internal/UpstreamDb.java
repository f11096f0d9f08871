package org.zrm.changesource.pg.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import org.postgresql.PGProperty;
import org.zrm.secret.Secrets;

/**
 * Opens connections to the upstream database named by a zero-style URI
 * ({@code postgresql://user:password@host:port/db?sslmode=…}). {@link #toString()} never shows the
 * password.
 */
public final class UpstreamDb {

    // Not DriverManager: in OSGi it cannot see drivers of other bundles.
    private final org.postgresql.Driver driver = new org.postgresql.Driver();
    private final String jdbcUrl;
    private final Properties base;
    private final String masked;

    /**
     * @param uri {@code postgres://} or {@code postgresql://} URI, or a {@code jdbc:postgresql:} URL
     * @throws IllegalArgumentException if the URI cannot be parsed
     */
    public UpstreamDb(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("upstream.db is not configured");
        }
        this.masked = Secrets.maskUrls(uri);
        this.base = new Properties();
        if (uri.startsWith("jdbc:postgresql:")) {
            this.jdbcUrl = uri;
            return;
        }
        URI u;
        try {
            u = new URI(uri);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("upstream.db is not a valid URI: " + masked);
        }
        if (!"postgres".equals(u.getScheme()) && !"postgresql".equals(u.getScheme())) {
            throw new IllegalArgumentException("upstream.db must be a postgres:// or postgresql:// URI: " + masked);
        }
        String host = u.getHost() == null ? "127.0.0.1" : u.getHost();
        int port = u.getPort() < 0 ? 5432 : u.getPort();
        String path = u.getRawPath() == null || u.getRawPath().length() <= 1 ? "" : u.getRawPath().substring(1);
        String userInfo = u.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            String user = colon < 0 ? userInfo : userInfo.substring(0, colon);
            base.setProperty(PGProperty.USER.getName(), decode(user));
            if (colon >= 0) {
                base.setProperty(PGProperty.PASSWORD.getName(), decode(userInfo.substring(colon + 1)));
            }
        }
        String sslmode = "prefer";
        if (u.getRawQuery() != null) {
            for (String kv : u.getRawQuery().split("&")) {
                int eq = kv.indexOf('=');
                String k = decode(eq < 0 ? kv : kv.substring(0, eq));
                String v = eq < 0 ? "" : decode(kv.substring(eq + 1));
                if (k.equals("sslmode") || k.equals("ssl")) {
                    // zero-cache: disable/false → no TLS, no-verify → TLS without verification, else prefer.
                    sslmode = switch (v) {
                        case "disable", "false" -> "disable";
                        case "no-verify" -> "require";
                        default -> "prefer";
                    };
                }
            }
        }
        base.setProperty(PGProperty.SSL_MODE.getName(), sslmode);
        this.jdbcUrl = "jdbc:postgresql://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port + "/" + path;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** Opens a normal connection. */
    public Connection open(String applicationName) throws SQLException {
        Properties p = new Properties();
        p.putAll(base);
        PGProperty.APPLICATION_NAME.set(p, applicationName);
        return driver.connect(jdbcUrl, p);
    }

    /**
     * Opens a logical replication connection: {@code replication=database}, simple query protocol
     * (the walsender accepts nothing else), and {@code assumeMinServerVersion} so that pgjdbc sends
     * the replication startup parameter at all.
     */
    public Connection openReplication(String applicationName) throws SQLException {
        Properties p = new Properties();
        p.putAll(base);
        PGProperty.APPLICATION_NAME.set(p, applicationName);
        PGProperty.REPLICATION.set(p, "database");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "15");
        PGProperty.PREFER_QUERY_MODE.set(p, "simple");
        return driver.connect(jdbcUrl, p);
    }

    @Override
    public String toString() {
        return masked;
    }
}

package org.zrm.changesource.pg.internal.sync;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.Properties;
import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.zrm.secret.Secrets;

/**
 * A {@link PgConnector} for a zero-style upstream URI ({@code postgres[ql]://user:pass@host:port/db
 * ?sslmode=…}) or a JDBC URL. Uses the pgjdbc driver directly (no {@code DriverManager}, which does
 * not see drivers of other OSGi bundles). Every connection's session time zone is set to UTC so that
 * timestamptz/timetz text values never carry odd historical offsets.
 */
public final class JdbcPgConnector implements PgConnector {

    private final String jdbcUrl;
    private final Properties base;
    private final Driver driver = new Driver();

    private JdbcPgConnector(String jdbcUrl, Properties base) {
        this.jdbcUrl = jdbcUrl;
        this.base = base;
    }

    /**
     * @param upstream {@code postgres://…}, {@code postgresql://…} or {@code jdbc:postgresql://…}
     * @throws IllegalArgumentException if the URI cannot be parsed (message masks the password)
     */
    public static JdbcPgConnector fromUri(String upstream) {
        Objects.requireNonNull(upstream, "upstream");
        Properties props = new Properties();
        PGProperty.CONNECT_TIMEOUT.set(props, 10);
        if (upstream.startsWith("jdbc:")) {
            return new JdbcPgConnector(upstream, props);
        }
        URI uri;
        try {
            uri = URI.create(upstream);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Invalid upstream.db URI: " + Secrets.maskUrls(upstream));
        }
        if (!"postgres".equals(uri.getScheme()) && !"postgresql".equals(uri.getScheme())) {
            throw new IllegalArgumentException("upstream.db must be a postgres:// or postgresql:// URI, got "
                    + Secrets.maskUrls(upstream));
        }
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            PGProperty.USER.set(props, decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                PGProperty.PASSWORD.set(props, decode(userInfo.substring(colon + 1)));
            }
        }
        String host = uri.getHost() == null ? "127.0.0.1" : uri.getHost();
        int port = uri.getPort() < 0 ? 5432 : uri.getPort();
        String db = uri.getRawPath() == null || uri.getRawPath().length() <= 1 ? "postgres" : decode(uri.getRawPath().substring(1));
        String query = uri.getRawQuery();
        if (query != null) {
            for (String kv : query.split("&")) {
                int eq = kv.indexOf('=');
                String k = decode(eq < 0 ? kv : kv.substring(0, eq));
                String v = eq < 0 ? "" : decode(kv.substring(eq + 1));
                if (k.equals("ssl") || k.equals("sslmode")) {
                    // zero-cache: disable/false → no TLS, no-verify → TLS without verification, else prefer
                    String mode = v.equals("disable") || v.equals("false") ? "disable"
                            : v.equals("no-verify") ? "require" : v.equals("prefer") || v.isEmpty() ? "prefer" : v;
                    PGProperty.SSL_MODE.set(props, mode);
                }
            }
        }
        String url = "jdbc:postgresql://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port + "/" + db;
        return new JdbcPgConnector(url, props);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    @Override
    public Connection connect(String applicationName) throws SQLException {
        return open(applicationName, false);
    }

    @Override
    public Connection connectForReplication(String applicationName) throws SQLException {
        return open(applicationName, true);
    }

    private Connection open(String applicationName, boolean replication) throws SQLException {
        Properties props = new Properties();
        props.putAll(base);
        PGProperty.APPLICATION_NAME.set(props, applicationName);
        if (replication) {
            PGProperty.REPLICATION.set(props, "database");
            PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "15");
            PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        }
        Connection c = driver.connect(jdbcUrl, props);
        if (c == null) {
            throw new SQLException("pgjdbc did not accept " + Secrets.maskUrls(jdbcUrl));
        }
        if (!replication) {
            try (Statement st = c.createStatement()) {
                st.execute("SET TIME ZONE 'UTC'");
            } catch (SQLException e) {
                c.close();
                throw e;
            }
        }
        return c;
    }

    @Override
    public String toString() {
        return Secrets.maskUrls(jdbcUrl);
    }
}

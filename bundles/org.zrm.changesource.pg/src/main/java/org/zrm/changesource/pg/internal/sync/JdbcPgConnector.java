package org.zrm.changesource.pg.internal.sync;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.zrm.config.PostgresUri;
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
        PostgresUri parsed = PostgresUri.parse(upstream, "upstream.db");
        Properties props = parsed.connectionProperties();
        PGProperty.CONNECT_TIMEOUT.set(props, 10);
        return new JdbcPgConnector(parsed.jdbcUrl(), props);
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

package org.zrm.changesource.pg.internal;

import java.sql.Connection;
import java.sql.SQLException;
import org.zrm.changesource.pg.internal.sync.JdbcPgConnector;
import org.zrm.secret.Secrets;

/**
 * The upstream database of the streaming side, named by a zero-style URI
 * ({@code postgresql://user:password@host:port/db?sslmode=…}). Connections come from the same
 * {@link JdbcPgConnector} the setup and initial-sync code uses, so both sides read the URI and
 * open (replication) connections identically. {@link #toString()} never shows the password.
 */
public final class UpstreamDb {

    private final JdbcPgConnector connector;
    private final String masked;

    /**
     * @param uri {@code postgres://} or {@code postgresql://} URI, or a {@code jdbc:postgresql:} URL
     * @throws IllegalArgumentException if the URI cannot be parsed (message masks the password)
     */
    public UpstreamDb(String uri) {
        this.connector = JdbcPgConnector.fromUri(uri);
        this.masked = Secrets.maskUrls(uri);
    }

    /** The connector behind both kinds of connection, for readers that open their own. */
    public JdbcPgConnector connector() {
        return connector;
    }

    /** Opens a normal connection. */
    public Connection open(String applicationName) throws SQLException {
        return connector.connect(applicationName);
    }

    /** Opens a logical replication connection ({@code replication=database}, simple query protocol). */
    public Connection openReplication(String applicationName) throws SQLException {
        return connector.connectForReplication(applicationName);
    }

    @Override
    public String toString() {
        return masked;
    }
}

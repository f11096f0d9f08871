package org.zrm.changesource.pg.internal.sync;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens upstream connections. Initial sync needs plain connections (auto-commit) and one
 * replication connection ({@code replication=database}, simple query protocol) for slot creation.
 */
public interface PgConnector {

    /** A plain connection with the given {@code application_name}, in auto-commit mode. */
    Connection connect(String applicationName) throws SQLException;

    /** A logical replication connection ({@code replication=database}, simple query mode). */
    Connection connectForReplication(String applicationName) throws SQLException;
}

package org.zrm.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

import org.zrm.pgcluster.PgCluster;

/**
 * A fresh database in a test cluster; {@link #close()} drops it, together with its sessions and
 * replication slots (slots would otherwise use up the cluster's {@code max_replication_slots}).
 */
public final class PgDatabase implements AutoCloseable {
    private final PgCluster cluster;
    private final String name;

    private PgDatabase(PgCluster cluster, String name) {
        this.cluster = cluster;
        this.name = name;
    }

    /**
     * Creates a new, uniquely named database.
     *
     * @param prefix the start of its name, e.g. the test class's simple name
     */
    public static PgDatabase create(PgCluster cluster, String prefix) {
        Objects.requireNonNull(cluster, "cluster");
        return new PgDatabase(cluster, cluster.createDatabase(prefix));
    }

    /** @return the cluster holding this database */
    public PgCluster cluster() {
        return cluster;
    }

    /** @return the database's name */
    public String name() {
        return name;
    }

    /** @return its JDBC URL (no credentials needed: the cluster trusts 127.0.0.1) */
    public String jdbcUrl() {
        return cluster.jdbcUrl(name);
    }

    /** @return its {@code postgresql://postgres@127.0.0.1:<port>/<name>} URI, the form of {@code ZERO_UPSTREAM_DB} */
    public String uri() {
        return cluster.uri(name);
    }

    /**
     * @param port another loopback port that forwards to the cluster, e.g. a {@link TcpProxy}'s
     * @return {@link #uri()} with that port
     */
    public String uriVia(int port) {
        return uri().replace("@127.0.0.1:" + cluster.port() + "/", "@127.0.0.1:" + port + "/");
    }

    /** Opens a connection as the superuser. */
    public Connection connect() throws SQLException {
        return cluster.connect(name);
    }

    /** Opens a logical replication connection ({@code replication=database}, simple query mode). */
    public Connection connectForReplication() throws SQLException {
        return cluster.connectForReplication(name);
    }

    /** Drops the database; idempotent. */
    @Override
    public void close() {
        cluster.dropDatabase(name);
    }

    @Override
    public String toString() {
        return "PgDatabase[" + name + " on " + cluster + "]";
    }
}

package org.zrm.launcher;

import java.util.Map;

import org.zrm.pgcluster.PgCluster;
import org.zrm.pgcluster.PgClusterException;

/**
 * The local PostgreSQL 15 the launcher starts when no {@code ZERO_UPSTREAM_DB} is given: data in
 * {@code <state>/pgdata} (kept across runs), 127.0.0.1 only, database {@value #DATABASE}.
 */
public final class EmbeddedPostgres implements AutoCloseable {
    /** The database ZRM uses in the embedded server. */
    public static final String DATABASE = "zrm";

    private final PgCluster cluster;

    private EmbeddedPostgres(PgCluster cluster) {
        this.cluster = cluster;
    }

    /**
     * Starts it (initializing the data folder on first use) and creates {@value #DATABASE} if missing.
     *
     * @param env consulted for {@code ZRM_EMBEDDED_PG_PORT} (default: a free port) and {@code ZRM_PG_BIN}
     * @throws LaunchException if it cannot start; the message includes PostgreSQL's reason
     */
    public static EmbeddedPostgres start(LaunchFolders folders, Map<String, String> env) {
        String port = env.get(EnvRegistry.ZRM_EMBEDDED_PG_PORT);
        PgCluster.Builder builder = PgCluster.builder()
                .dataDir(folders.embeddedPgData())
                .environment(env)
                // Ctrl-C must reach only the launcher, which stops the runtime first and PostgreSQL last.
                .newSession(true);
        if (!EnvDerivation.isBlank(port)) {
            builder.port(Integer.parseInt(port.strip()));   // validated by EnvValidator
        }
        PgCluster cluster;
        try {
            cluster = builder.start();
        } catch (PgClusterException e) {
            throw new LaunchException("cannot start the embedded PostgreSQL: " + e.getMessage(), e);
        }
        try {
            cluster.createDatabaseIfMissing(DATABASE);
        } catch (PgClusterException e) {
            LaunchException failure = new LaunchException("embedded PostgreSQL: " + e.getMessage(), e);
            try {
                cluster.close();
            } catch (RuntimeException stop) {
                failure.addSuppressed(stop);
            }
            throw failure;
        }
        return new EmbeddedPostgres(cluster);
    }

    /** @return {@code postgresql://postgres@127.0.0.1:<port>/zrm}, the value for {@code ZERO_UPSTREAM_DB} */
    public String uri() {
        return cluster.uri(DATABASE);
    }

    /** @return the running cluster */
    public PgCluster cluster() {
        return cluster;
    }

    /** Stops the server; the data stays. Idempotent. */
    @Override
    public void close() {
        cluster.close();
    }
}

package org.zrm.testing;

import org.zrm.pgcluster.PgCluster;

/**
 * The throwaway cluster every Postgres-backed test uses, and a JVM-wide instance of it for test
 * frameworks that cannot use JUnit 5 extensions (JUnit 4, Pax Exam).
 */
public final class TestPostgres {
    private TestPostgres() {}

    /**
     * The test cluster's configuration: a temporary folder, a free port on 127.0.0.1,
     * {@code wal_level=logical}, 20 replication slots and WAL senders, 200 connections. Tests that
     * need other settings (e.g. {@code wal_sender_timeout}) add them and start their own cluster.
     */
    public static PgCluster.Builder clusterBuilder() {
        return PgCluster.builder();
    }

    /**
     * The cluster shared by every caller in this JVM, started on the first call and stopped and
     * deleted by a JVM shutdown hook. For JUnit 4 and Pax Exam tests; JUnit 5 tests use
     * {@link PostgresExtension}, whose cluster belongs to the JUnit run instead of the JVM.
     *
     * @throws org.zrm.pgcluster.PgClusterException (wrapped in an {@link ExceptionInInitializerError}
     *     on the first call) if the cluster cannot start; later calls then fail with
     *     {@link NoClassDefFoundError} whose cause chain holds the original reason
     */
    public static PgCluster jvmCluster() {
        return JvmCluster.INSTANCE;
    }

    /**
     * Initialization-on-demand holder: the JVM starts the cluster lazily, exactly once and
     * thread-safely when this class is first used; the reference is final, never reassigned.
     */
    private static final class JvmCluster {
        static final PgCluster INSTANCE = startWithShutdownHook();

        private static PgCluster startWithShutdownHook() {
            PgCluster cluster = clusterBuilder().start();
            Runtime.getRuntime().addShutdownHook(new Thread(cluster::close, "zrm-test-postgres-shutdown"));
            return cluster;
        }
    }
}

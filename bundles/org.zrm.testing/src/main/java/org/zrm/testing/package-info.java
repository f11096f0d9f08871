/**
 * The shared PostgreSQL fixture for Postgres-backed tests: one throwaway PostgreSQL 15 cluster per
 * test JVM and a fresh database per test class.
 *
 * <ul>
 *   <li>JUnit 5: annotate the class with {@link org.zrm.testing.PostgresTest} (or
 *       {@code @ExtendWith(PostgresExtension.class)}) and declare a
 *       {@link org.zrm.testing.PgDatabase} or {@link org.zrm.pgcluster.PgCluster} parameter.</li>
 *   <li>JUnit 4 / Pax Exam: {@link org.zrm.testing.TestPostgres#jvmCluster()} and
 *       {@link org.zrm.testing.PgDatabase#create(org.zrm.pgcluster.PgCluster, String)}.</li>
 * </ul>
 *
 * <p>{@link org.zrm.testing.TcpProxy} puts network faults (a silent direction, a partition that
 * heals) between a client and the cluster.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.zrm.testing;

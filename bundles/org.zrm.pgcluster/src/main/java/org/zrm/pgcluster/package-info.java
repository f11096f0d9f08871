/**
 * A local PostgreSQL 15 cluster: {@code initdb}, start, stop and delete, configured for logical
 * replication and bound to 127.0.0.1 only.
 *
 * <p>One implementation serves both the throwaway clusters of Postgres-backed tests and the
 * persistent embedded database of the launcher. Start one with {@link org.zrm.pgcluster.PgCluster#builder()}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.zrm.pgcluster;

/**
 * Zero's SQLite replica layout, shared by everything that writes or reads a replica file.
 *
 * <p>The replica is the SQLite file that Zero's initial sync creates and the replicator keeps up
 * to date. Its declared column types, stored values, identifiers and {@code _zero.*} metadata
 * tables must be byte-identical to what zero-cache produces, because SQLite derives column
 * affinity from the declared types and zero-cache reads the same file. This package holds the
 * conventions that both sides must agree on:
 * <ul>
 *   <li>{@link org.zrm.replica.LiteTypes}: Postgres column types to SQLite "lite type strings" and
 *       the ZQL value type ({@link org.zrm.replica.ZqlType}) of a column;</li>
 *   <li>{@link org.zrm.replica.LiteValues}: values of the protocol model to the values SQLite
 *       stores;</li>
 *   <li>{@link org.zrm.replica.LiteDefaults}: Postgres column defaults to SQLite defaults;</li>
 *   <li>{@link org.zrm.replica.LiteNames}: table names, identifier quoting and index DDL;</li>
 *   <li>{@link org.zrm.replica.ReplicaLayout}: the statements that create the replica, the
 *       {@code _zero.*} tables and their initial rows, and the data tables, indexes and added
 *       columns from the protocol's table, index and column specs;</li>
 *   <li>{@link org.zrm.replica.ReplicaMetadataStore}: the writes of {@code _zero.column_metadata},
 *       {@code _zero.tableMetadata} and the replica's watermark;</li>
 *   <li>{@link org.zrm.replica.ReplicaStateReader}: whether a file holds a completed replica, and
 *       its versions ({@link org.zrm.replica.ReplicaState}), and the raw
 *       {@code _zero.replicationState} row ({@link org.zrm.replica.ReplicationStateRow}).</li>
 * </ul>
 *
 * <p>The initial sync, the replicator and the backup monitors all go through these classes, so
 * that the layout has one writer and one thing to test (zero-cache compatibility rests on a
 * byte-identical {@code sqlite_master}).
 *
 * <p>Everything here is thread-safe except {@link org.zrm.replica.ReplicaMetadataStore}, which
 * belongs to one connection. Only {@code java.sql} is needed to read a
 * replica; callers bring their own SQLite connection.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.zrm.replica;

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
 *   <li>{@link org.zrm.replica.ReplicaStateReader}: whether a file holds a completed replica, and
 *       its versions ({@link org.zrm.replica.ReplicaState}).</li>
 * </ul>
 *
 * <p>Everything here is stateless and thread-safe. Only {@code java.sql} is needed to read a
 * replica; callers bring their own SQLite connection.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.replica;

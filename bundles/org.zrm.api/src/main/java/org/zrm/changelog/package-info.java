/**
 * Durable change log: the store that holds every committed transaction so that subscribers that
 * are behind can be caught up, plus the replication configuration, the resume position and the
 * single-writer ownership record (Zero's {@code "<app>_<shard>/cdc"} schema, version 6).
 *
 * <p>The {@link org.zrm.changelog.ChangeLog} service is implemented by ZRM (the Postgres store in
 * {@code org.zrm.storer}) and used by the change streamer; it is selected by its
 * {@link org.zrm.changelog.ChangeLog#KIND} property. Failures are reported as
 * {@link org.zrm.changelog.ChangeLogException} or one of its documented subtypes, never as raw
 * driver exceptions.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.3.0")
package org.zrm.changelog;

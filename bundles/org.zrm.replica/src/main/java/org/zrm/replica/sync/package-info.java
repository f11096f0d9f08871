/**
 * Stream-fed initial sync: builds a new replica from the first transaction of a change stream, so
 * that a change source written in Java (or the client of Zero's custom change-source protocol)
 * never touches SQLite itself.
 *
 * <p>A source that has no replica yet opens a stream without a watermark; the first transaction it
 * sends is the snapshot. {@link org.zrm.replica.sync.StreamFedInitialSync} applies it through the
 * same code the replicator uses for later transactions, checks the tables Zero requires, and only
 * then moves the finished file into place.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.replica.sync;

/**
 * Applying change-stream transactions to a replica: the one change processor, used by the backup
 * replicator ({@link org.zrm.replica.apply.ChangeProcessor}, one SQLite transaction per upstream
 * transaction) and by the stream-fed initial sync (inside the sync's own transaction), so that a
 * replica built either way is the same.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.replica.apply;

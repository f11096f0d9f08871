package org.zrm.backup;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Restores a missing replica file from its backup before the change streamer initializes the
 * change source (zero-cache's {@code restoreReplica} at replication-manager start-up), so that a
 * replacement node keeps the replica's replicaVersion instead of re-syncing to a new one, and the
 * view-syncers do not see {@code WrongReplicaVersion}.
 *
 * <p>Registered by the bundle that runs litestream; the change streamer calls it once, on its own
 * start-up thread, while it holds the change log's purge lock (so the oldest change cannot be
 * purged while the restored replica is checked against it). A restored replica that the change
 * log cannot catch up is deleted, and the caller's initial sync then runs as without a backup.
 */
@ConsumerType
public interface ReplicaRestorer {

    /**
     * Restores the replica file if it is missing and a usable backup exists. Blocks for as long as
     * the restore takes (progress is the implementation's to log and report).
     *
     * @param replicaVersion the change log's replica version; a restored replica must have it
     * @param minWatermark the change log's oldest watermark; a restored replica must be at or above it
     * @return {@code true} if a usable replica was restored; {@code false} if the file already
     *     existed, no backup exists, or the restored one could not be used (the reason is logged)
     * @throws InterruptedException if the start-up is being cancelled
     */
    boolean restoreIfMissing(String replicaVersion, String minWatermark) throws InterruptedException;
}

package org.zrm.changesource.pg.internal.backfill;

import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.BackfillRequest;

/**
 * Opens the snapshot read of one backfill request. The manager depends on this seam only, so that
 * its scheduling can be tested without Postgres.
 */
@FunctionalInterface
public interface BackfillStreamer {

    /**
     * Takes a snapshot at a known upstream position and starts reading the request's row-key and
     * backfill columns from it.
     *
     * @param request the table (with the metadata the stream last reported) and columns to fill
     * @return the open run; the caller must close it
     * @throws BackfillException if the table no longer matches the request (the request is retried
     *     after the schema change that invalidated it is processed)
     * @throws ChangeSourceException if the upstream could not be reached or the snapshot failed
     * @throws InterruptedException if the calling thread was interrupted; nothing is left open
     */
    BackfillRun open(BackfillRequest request) throws ChangeSourceException, InterruptedException;

    /**
     * Makes the streamer of one replication stream: the snapshot slots are named after the stream's
     * slot, and the tables are read through its publications, both known only when it starts.
     */
    @FunctionalInterface
    interface Factory {

        /**
         * @param slot the replica's replication slot
         * @param publications the shard's publications
         */
        BackfillStreamer forStream(String slot, java.util.List<String> publications);

        /**
         * Drops snapshot slots a crash left behind, before the stream's first backfill. The
         * default has none to drop.
         *
         * @param slot the replica's replication slot
         * @throws ChangeSourceException if the upstream could not be asked
         */
        default java.util.List<String> dropOrphans(String slot) throws ChangeSourceException {
            return java.util.List.of();
        }
    }
}

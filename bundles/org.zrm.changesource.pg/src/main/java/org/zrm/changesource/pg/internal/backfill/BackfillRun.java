package org.zrm.changesource.pg.internal.backfill;

import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.DataOrSchemaChange;

/**
 * One backfill read in progress: a sequence of {@link org.zrm.protocol.Backfill} messages
 * followed by exactly one {@link org.zrm.protocol.BackfillCompleted}, all at the snapshot's
 * watermark and with a cumulative {@link org.zrm.protocol.DownloadStatus}.
 *
 * <p>One thread calls {@link #next()}. The run holds at most one message's rows in memory: the
 * COPY is read on demand, so a consumer that stops pulling stops the upstream read through TCP.
 */
public interface BackfillRun extends AutoCloseable {

    /** The snapshot's watermark, which every message of this run carries. */
    String watermark();

    /**
     * Reads the next message.
     *
     * @return the next {@code backfill} or the final {@code backfill-completed} message, or
     *     {@code null} after the final one
     * @throws BackfillException if the table changed under the snapshot in a way that makes the
     *     request invalid (for example a column dropped while copying)
     * @throws ChangeSourceException if the upstream connection failed
     * @throws InterruptedException if the thread was interrupted; the run stays open until closed
     */
    DataOrSchemaChange next() throws ChangeSourceException, InterruptedException;

    /**
     * The estimated in-memory size of {@code msg}, a message {@link #next()} returned, which the
     * change stream's byte bound and the progress figures count. The default walks every value
     * ({@link BackfillManager#cost}); a run that sized the values while decoding them answers
     * without that second pass over the rows.
     */
    default int estimatedSize(DataOrSchemaChange msg) {
        return BackfillManager.cost(msg);
    }

    /**
     * Ends the read, whether or not it finished. Idempotent and callable from any thread; it
     * cancels a COPY in progress and never leaves the temporary slot behind.
     */
    @Override
    void close();
}

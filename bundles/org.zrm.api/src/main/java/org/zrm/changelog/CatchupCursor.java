package org.zrm.changelog;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Reads one subscriber's catch-up rows in bounded batches (upstream fetches 2000 rows at a time).
 *
 * <p><b>Flow control.</b> The caller sends a batch, waits until the subscriber has consumed the
 * batch's last message, then asks for the next one, so at most about two batches per subscriber
 * are in memory.
 *
 * <p><b>Where the subscriber starts.</b> Rows at the subscriber's own watermark are skipped (it
 * already has them). If the subscriber's watermark is the replica version it is found without a
 * row. If the first row is newer than the subscriber's watermark, those changes were purged and
 * {@link #nextBatch()} throws {@link WatermarkTooOldException}. If there are no rows at all, the
 * subscriber is ahead of the durable log (changes are forwarded before they are stored); that is
 * not an error, and {@link #foundStart()} stays {@code false}.
 */
@ProviderType
public interface CatchupCursor extends AutoCloseable {

    /**
     * Returns the next rows to send, rebuilt into frames by the caller from
     * {@link ChangeLogEntry#watermark()}, {@link ChangeLogEntry#tag()} and
     * {@link ChangeLogEntry#change()}.
     *
     * @return up to one batch of rows; an empty list once the cursor is exhausted
     * @throws WatermarkTooOldException if the subscriber's watermark has been purged
     * @throws ChangeLogException if reading failed
     */
    List<ChangeLogEntry> nextBatch() throws ChangeLogException;

    /**
     * @return {@code true} once the subscriber's watermark was found in the log or equals the
     *     replica version; {@code false} after exhaustion means the subscriber is ahead of the log
     */
    boolean foundStart();

    /** Closes the server-side cursor. Idempotent; never throws. */
    @Override
    void close();
}

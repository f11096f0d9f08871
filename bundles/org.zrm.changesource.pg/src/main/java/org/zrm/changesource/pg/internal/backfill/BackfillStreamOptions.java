package org.zrm.changesource.pg.internal.backfill;

import java.time.Duration;
import org.zrm.changesource.pg.internal.sync.ReplicationSlots;

/**
 * Tuning of the backfill snapshot reader.
 *
 * @param textCopy text instead of binary COPY (the source's {@code initialSync.textCopy})
 * @param flushThresholdBytes COPY bytes after which the rows read so far become one
 *     {@code backfill} message (upstream: 64 KiB); it also bounds what a run buffers
 * @param slotCreateTimeout client-side limit for creating the snapshot slot (30 s; the server-side
 *     {@code lock_timeout} is one second less)
 */
public record BackfillStreamOptions(boolean textCopy, int flushThresholdBytes, Duration slotCreateTimeout) {

    /** Upstream's flush threshold: the size of the chunks Postgres sends a COPY in. */
    public static final int DEFAULT_FLUSH_THRESHOLD_BYTES = 64 * 1024;

    public BackfillStreamOptions {
        if (flushThresholdBytes < 1) {
            throw new IllegalArgumentException("backfill flush threshold must be positive, got " + flushThresholdBytes);
        }
        if (slotCreateTimeout.toMillis() < 2000) {
            throw new IllegalArgumentException("slot creation timeout must be at least 2 s, got " + slotCreateTimeout);
        }
    }

    /** Binary COPY, 64 KiB messages, 30 s slot creation timeout. */
    public static BackfillStreamOptions defaults() {
        return new BackfillStreamOptions(false, DEFAULT_FLUSH_THRESHOLD_BYTES, ReplicationSlots.DEFAULT_CREATE_TIMEOUT);
    }

    public BackfillStreamOptions withTextCopy(boolean text) {
        return new BackfillStreamOptions(text, flushThresholdBytes, slotCreateTimeout);
    }

    public BackfillStreamOptions withFlushThresholdBytes(int bytes) {
        return new BackfillStreamOptions(textCopy, bytes, slotCreateTimeout);
    }
}

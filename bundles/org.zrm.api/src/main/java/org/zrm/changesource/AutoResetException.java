package org.zrm.changesource;

/**
 * Signals that the local replica cannot continue its lineage and must be discarded and re-synced
 * (upstream's {@code AutoResetSignal}). Examples: the replication slot is missing or was
 * invalidated for exceeding {@code max_slot_wal_keep_size}, the configured publications changed,
 * or the replica file is corrupt.
 *
 * <p>The streamer handles the first such signal during initialisation by calling
 * {@link ChangeSource#initialize(boolean) initialize(true)}; a second one, or one raised while
 * streaming with auto-reset disabled, stops the pipeline. A {@code reset-required} control message
 * in the stream is the in-band counterpart of this exception.
 */
public class AutoResetException extends ChangeSourceAbortedException {

    private static final long serialVersionUID = 1L;

    /** @param message why a re-sync is needed, e.g. {@code "replication slot zero_0_123 is missing"} */
    public AutoResetException(String message) {
        super(message);
    }

    /**
     * @param message why a re-sync is needed
     * @param cause the underlying failure
     */
    public AutoResetException(String message, Throwable cause) {
        super(message, cause);
    }
}

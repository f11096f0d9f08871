package org.zrm.changesource;

/**
 * A failure of a {@link ChangeSource} or {@link ChangeStream}.
 *
 * <p>An exception of exactly this class is <em>retryable</em>: the change streamer logs it, backs
 * off (25 ms doubling to 10 s, as upstream) and starts a new stream from the last stored
 * watermark. Subclasses with different handling are {@link ChangeSourceAbortedException},
 * {@link AutoResetException} and {@link ChangeStreamClosedException}. Implementations should wrap
 * the underlying cause (for example an {@code SQLException} or {@code IOException}) rather than
 * expose it in signatures.
 */
public class ChangeSourceException extends Exception {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, including the relevant ids (slot, watermark); must not contain
     *     secrets such as passwords
     */
    public ChangeSourceException(String message) {
        super(message);
    }

    /**
     * @param message what failed
     * @param cause the underlying failure
     */
    public ChangeSourceException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * Tells whether the streamer may retry after this failure.
     *
     * @return {@code true} for plain and end-of-stream failures, {@code false} for aborts
     */
    public boolean isRetryable() {
        return true;
    }
}

package org.zrm.changelog;

/**
 * A failure of the change log. An exception of exactly this class is retryable: the streamer
 * restarts the stream (or the next purge cycle retries). Subtypes carry specific meanings.
 * Implementations wrap driver exceptions as the cause and never expose them in signatures.
 */
public class ChangeLogException extends Exception {

    private static final long serialVersionUID = 1L;

    /** @param message what failed; must not contain secrets */
    public ChangeLogException(String message) {
        super(message);
    }

    /**
     * @param message what failed
     * @param cause the underlying failure
     */
    public ChangeLogException(String message, Throwable cause) {
        super(message, cause);
    }
}

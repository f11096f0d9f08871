package org.zrm.changesource;

/**
 * Reports that a {@link ChangeStream} has ended: either {@link ChangeStream#close()} was called
 * (typically by another thread, to stop the stream loop) or the upstream ended the stream without
 * an error. It is retryable; the streamer starts a new stream unless it is shutting down.
 */
public class ChangeStreamClosedException extends ChangeSourceException {

    private static final long serialVersionUID = 1L;

    /** @param message how the stream ended */
    public ChangeStreamClosedException(String message) {
        super(message);
    }

    /**
     * @param message how the stream ended
     * @param cause the event that ended it, if any
     */
    public ChangeStreamClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}

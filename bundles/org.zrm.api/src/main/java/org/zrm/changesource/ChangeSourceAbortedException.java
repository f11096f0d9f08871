package org.zrm.changesource;

/**
 * A non-retryable change-source failure: the pipeline must stop instead of backing off and
 * retrying (upstream's {@code AbortError}/{@code UnrecoverableError}). Example: the replication
 * slot no longer exists because a newer replication manager has taken over the upstream.
 */
public class ChangeSourceAbortedException extends ChangeSourceException {

    private static final long serialVersionUID = 1L;

    /** @param message why the pipeline must stop */
    public ChangeSourceAbortedException(String message) {
        super(message);
    }

    /**
     * @param message why the pipeline must stop
     * @param cause the underlying failure
     */
    public ChangeSourceAbortedException(String message, Throwable cause) {
        super(message, cause);
    }

    /** @return always {@code false} */
    @Override
    public boolean isRetryable() {
        return false;
    }
}

package org.zrm.pgcluster;

/**
 * A local PostgreSQL cluster could not be created, started, stopped or used.
 *
 * <p>The message is meant for a human: it says what failed, on which folder, and what to do about
 * it (for example which package to install), and it carries the tail of the server log or of the
 * failing tool's output when there is one.
 */
public class PgClusterException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed and, when known, what to do about it */
    public PgClusterException(String message) {
        super(message);
    }

    /**
     * @param message what failed and, when known, what to do about it
     * @param cause the underlying failure
     */
    public PgClusterException(String message, Throwable cause) {
        super(message, cause);
    }
}

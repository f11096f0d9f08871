package org.zrm.changesource.pg.internal.stream;

/**
 * A failure of an upstream query made while converting a message (e.g. the catalog query of the
 * degraded-mode check), as opposed to a problem with the message itself. {@link ChangeMaker} lets
 * it through instead of turning it into {@code reset-required}: the stream then ends with a
 * retryable failure and the same message is converted again after the reconnect, because nothing
 * of its transaction was acknowledged.
 */
public final class TransientUpstreamException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what was being done
     * @param cause the database failure
     */
    public TransientUpstreamException(String message, Throwable cause) {
        super(message, cause);
    }
}

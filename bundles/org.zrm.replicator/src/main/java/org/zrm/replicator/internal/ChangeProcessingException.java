package org.zrm.replicator.internal;

/**
 * A change could not be applied to the replica. The open SQLite transaction has been rolled back
 * and the processor refuses further messages; the replicator resubscribes from the replica's own
 * watermark, so nothing is lost.
 */
final class ChangeProcessingException extends Exception {

    private static final long serialVersionUID = 1L;

    ChangeProcessingException(String message, Throwable cause) {
        super(message, cause);
    }

    ChangeProcessingException(String message) {
        super(message);
    }
}

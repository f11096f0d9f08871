package org.zrm.replica.apply;

/**
 * A change could not be applied to the replica. The processor refuses further messages. In
 * backup mode it has rolled back its transaction; in initial-sync mode the caller rolls back and
 * discards the temporary file.
 */
public final class ChangeProcessingException extends Exception {

    private static final long serialVersionUID = 1L;

    ChangeProcessingException(String message, Throwable cause) {
        super(message, cause);
    }

    ChangeProcessingException(String message) {
        super(message);
    }
}

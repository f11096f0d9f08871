package org.zrm.backup.replica.internal;

/** The replica file exists but its state version could not be read or is malformed. */
final class ReplicaReadException extends Exception {

    private static final long serialVersionUID = 1L;

    ReplicaReadException(String message) {
        super(message);
    }

    ReplicaReadException(String message, Throwable cause) {
        super(message, cause);
    }
}

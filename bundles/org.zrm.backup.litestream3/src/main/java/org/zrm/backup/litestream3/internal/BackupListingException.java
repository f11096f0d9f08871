package org.zrm.backup.litestream3.internal;

/** Listing the backup destination with the litestream CLI failed; the message says how. */
final class BackupListingException extends Exception {

    private static final long serialVersionUID = 1L;

    BackupListingException(String message) {
        super(message);
    }

    BackupListingException(String message, Throwable cause) {
        super(message, cause);
    }
}

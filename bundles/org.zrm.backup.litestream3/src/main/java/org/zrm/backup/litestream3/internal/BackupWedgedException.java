package org.zrm.backup.litestream3.internal;

/**
 * The backup stayed behind litestream's claimed progress for the whole grace period (upstream's
 * {@code UnrecoverableError("backup at ... is wedged ...")}); reported to the coordinator as fatal.
 */
final class BackupWedgedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    BackupWedgedException(String message) {
        super(message);
    }
}

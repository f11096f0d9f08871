package org.zrm.backup.vfs.internal.process;

import java.io.IOException;

/** The reader child did not answer a request in time (upstream {@code BackupWatermarkTimeoutError}). */
public final class WatermarkTimeoutException extends IOException {

    private static final long serialVersionUID = 1L;

    WatermarkTimeoutException(long timeoutMs) {
        super("timed out waiting " + timeoutMs + " ms for backup watermark response");
    }
}

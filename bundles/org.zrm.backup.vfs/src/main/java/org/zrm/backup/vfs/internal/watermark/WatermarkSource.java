package org.zrm.backup.vfs.internal.watermark;

/**
 * Where backed-up watermarks come from: in the monitor, a reader child process; in that child,
 * the SQLite connection through the Litestream VFS. Reads are made by one thread at a time.
 */
public interface WatermarkSource extends AutoCloseable {

    /**
     * Reads the backup's current replication state.
     *
     * @return the state and when it was observed
     * @throws Exception if it could not be read; the caller logs it and tries again later
     */
    BackupWatermark readWatermark() throws Exception;

    /** Releases the source (closes connections, ends the child process). Idempotent. */
    @Override
    void close();
}

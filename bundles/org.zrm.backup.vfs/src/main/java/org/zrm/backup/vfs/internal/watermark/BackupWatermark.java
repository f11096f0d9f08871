package org.zrm.backup.vfs.internal.watermark;

import java.util.Objects;

/**
 * One read of Zero's replication state from the backup itself, through the Litestream VFS
 * (upstream {@code VfsBackupWatermark}).
 *
 * @param watermark the backup's {@code _zero.replicationState.stateVersion}
 * @param writeTimeMs when the replica wrote that state (epoch ms), or {@code null} when the replica
 *     never recorded it; the replicator stores {@code unixepoch('subsec') * 1000}, a REAL, whose
 *     sub-millisecond part is dropped here
 * @param txid the VFS's current Litestream transaction id, 16 hex digits; logged only
 * @param lagSeconds seconds since the VFS last polled the destination successfully, -1 if it never
 *     has; logged only
 * @param observedAtMs when the reader process ran the query (its clock, epoch ms)
 */
public record BackupWatermark(String watermark, Long writeTimeMs, String txid, long lagSeconds, long observedAtMs) {

    public BackupWatermark {
        Objects.requireNonNull(watermark, "watermark");
        Objects.requireNonNull(txid, "txid");
    }
}

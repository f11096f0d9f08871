/**
 * Backup-monitor SPI: components that learn which watermark has been safely backed up and tell
 * the change streamer that older changes may be purged.
 *
 * <p>Each monitor is an OSGi service carrying {@link org.zrm.backup.BackupMonitor#STRATEGY}
 * ({@code replica}, {@code litestream3} or {@code vfs}); a coordinator in the change streamer
 * activates exactly one at a time and can swap it at runtime. The coordinator hands the active
 * monitor a {@link org.zrm.backup.BackupMonitorContext}, whose
 * {@link org.zrm.backup.CleanupScheduler} refuses calls once the monitor has been retired, and it
 * keeps {@code /snapshot} reservations ({@link org.zrm.backup.SnapshotReservation}) and the learned
 * cleanup delay across swaps.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.zrm.backup;

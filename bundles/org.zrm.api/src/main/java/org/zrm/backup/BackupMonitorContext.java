package org.zrm.backup;

import java.time.Duration;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Everything a backup monitor receives from the coordinator for one activation, passed to
 * {@link BackupMonitor#start(BackupMonitorContext)}. All methods are thread-safe and non-blocking;
 * like the {@link CleanupScheduler} it extends, the context is bound to one activation and goes
 * inert when the monitor is retired (scheduling is refused, reports are ignored).
 */
@ProviderType
public interface BackupMonitorContext extends CleanupScheduler {

    /**
     * The current cleanup delay: how long a backed-up watermark must age (from its claimed backup
     * time, or from when it was first observed in the backup) before it may be scheduled. At
     * least 30 s and at least the time the replication manager needed to start; it grows whenever
     * a {@code /snapshot} reservation lasts longer, and it is carried over across swaps and never
     * shrinks. Read it at every check.
     *
     * @return the delay, positive
     */
    Duration cleanupDelay();

    /**
     * The task ids of the open {@code /snapshot} reservations. While any is open the monitor
     * schedules nothing (upstream logs "watermark cleanup paused for snapshot(s): ..."), so a node
     * restoring the backup can still catch up from the backup's watermark.
     *
     * @return an immutable snapshot of the open reservations' task ids, empty when none
     */
    Set<String> openReservations();

    /**
     * Counts a check that could not schedule cleanup although a watermark was due, exported as
     * {@code zrm_replica_purge_blocked_total{reason=...}} (upstream
     * {@code zero.replica.purge_blocked}). Reasons used by the shipped monitors:
     * {@code verification-failed}, {@code backup-stale}, {@code backup-wedged},
     * {@code vfs-probe-failed}.
     *
     * @param reason the reason label, {@code [a-z-]+}
     */
    void purgeBlocked(String reason);

    /**
     * Reports how far the backup trails the replica (upstream gauge
     * {@code zero.replica.backup_lag}), exported as {@code zrm_replica_backup_lag_ms} while this
     * activation is current. Monitors report it from their periodic checks.
     *
     * @param lag the lag, not negative
     */
    void backupLag(Duration lag);

    /**
     * Reports a condition that must stop the whole pipeline, such as a backup that has been stale
     * for longer than the wedge grace period (upstream {@code UnrecoverableError("backup at ... is
     * wedged")}). The coordinator stops acking and purging, marks the runtime unhealthy in
     * {@code /status}, and, when configured to ({@code exitOnFatal}), exits the JVM with a
     * non-zero status for an orchestrator to restart it. A fatal report is honoured even while a
     * swap is in progress. Monitors keep ordinary, transient failures to themselves (log and retry
     * on the next tick). The monitor stops its own schedule after reporting.
     *
     * @param cause the fatal condition
     */
    void reportFatal(Throwable cause);
}

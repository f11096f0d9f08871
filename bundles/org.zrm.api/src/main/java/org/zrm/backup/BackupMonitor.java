package org.zrm.backup;

import java.time.Duration;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Watches a backup of the replication manager's replica and reports backed-up watermarks, so that
 * the change streamer can purge changes no restored replica will ever need again (Zero's
 * {@code BackupMonitor}, plus the single-node {@code ReplicaMonitor}).
 *
 * <p><b>Registration and selection.</b> Each implementation registers as a service with the
 * {@link #STRATEGY} property once it is configured. Several may be registered; the coordinator in
 * the change streamer starts exactly one at a time, chosen by its {@code strategy} setting, and can
 * swap it at runtime. Activation must not block or start background work; the work begins in
 * {@link #start(BackupMonitorContext)}.
 *
 * <p><b>Purge requests.</b> A monitor reports a watermark only through the
 * {@link CleanupScheduler} it received in {@link #start(BackupMonitorContext)}. It must not
 * schedule anything while a snapshot reservation is open, and (for the backup strategies) only
 * watermarks it has observed itself and that are older than the cleanup delay. After a restart or
 * a swap it starts with no observations at all.
 *
 * <p><b>Threading.</b> {@code start}, {@code stop} and the reservation methods may be called from
 * different coordinator and HTTP threads and must be thread-safe; none of them may block on I/O
 * except {@link #stop()}, which waits, bounded, for a running check. Periodic checks run on the
 * monitor's own scheduler; a failing check is logged and retried on the next tick, never allowed to
 * end the schedule. Only conditions that must stop the pipeline go to
 * {@link BackupMonitorContext#reportFatal(Throwable)}.
 *
 * <p>This is a consumer type: third parties may implement it, so new methods will only be added
 * as {@code default} methods within a major version.
 */
@ConsumerType
public interface BackupMonitor {

    /**
     * Service property naming the strategy, matched by the coordinator's {@code strategy}
     * setting: {@value #STRATEGY_REPLICA}, {@value #STRATEGY_LITESTREAM3} or {@value #STRATEGY_VFS}.
     * Type {@code String}.
     */
    String STRATEGY = "zrm.backup.strategy";

    /** Single node without backups: purge up to the local replica's state version. */
    String STRATEGY_REPLICA = "replica";

    /** Litestream v0.3: backed-up watermarks from its {@code /metrics}, verified against the destination. */
    String STRATEGY_LITESTREAM3 = "litestream3";

    /** Litestream v0.5: backed-up watermarks read from the backup itself through the VFS extension. */
    String STRATEGY_VFS = "vfs";

    /** @return this monitor's strategy, the same value as its {@link #STRATEGY} property */
    String strategy();

    /**
     * @return the backup location sent to restoring nodes in the snapshot status, e.g.
     *     {@code s3://bucket/path}; empty for a monitor that has no backup (the replica strategy),
     *     in which case {@code /snapshot} requests are refused and the reservation methods are
     *     never called
     */
    Optional<String> backupURL();

    /**
     * Starts periodic work for one activation. Returns promptly; work runs on the monitor's own
     * threads. A stopped monitor may be started again with a new context and must then begin with
     * no observations, no cached verification and no staleness clock.
     *
     * @param context the coordinator's context for this activation, including the cleanup
     *     scheduler and the initial cleanup delay
     * @throws IllegalStateException if the monitor is already started
     */
    void start(BackupMonitorContext context);

    /**
     * Stops periodic work: cancels timers, aborts in-flight I/O (HTTP fetches, child processes) and
     * waits, bounded, for a running check to finish; unregisters any metrics callbacks. Open
     * reservations are forgotten but not closed, because the coordinator keeps them for the next
     * monitor. After it returns the monitor makes no further calls on the context. Idempotent.
     */
    void stop();

    /**
     * Registers a snapshot reservation: cleanup pauses while any is open, and the monitor sends the
     * status message asynchronously through {@code reservation} (reading the change-log state via
     * the context; on failure it calls {@link SnapshotReservation#fail(Throwable)}). If the task
     * already had a reservation, the older one is closed: only the latest attempt of a task counts.
     *
     * @param taskID the restoring task's id
     * @param reservation the reservation, possibly replayed by the coordinator after a swap (its
     *     status may already have been sent)
     */
    void startSnapshotReservation(String taskID, SnapshotReservation reservation);

    /**
     * Ends {@code taskID}'s reservation and closes it. If {@code updateCleanupDelay}, the
     * reservation's duration raises the cleanup delay when it is longer (the delay never shrinks),
     * and the monitor reports it with {@link BackupMonitorContext#cleanupDelayLearned(Duration)}.
     * No-op for an unknown task.
     *
     * @param taskID the task id
     * @param updateCleanupDelay {@code true} when the task subscribed with {@code initial=true}
     *     (the restore finished); {@code false} when the connection just closed
     */
    void endReservation(String taskID, boolean updateCleanupDelay);

    /**
     * @return the current cleanup delay: how long a backed-up watermark must age before it is
     *     scheduled for cleanup
     */
    Duration cleanupDelay();
}

package org.zrm.backup;

import java.util.Map;
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
 * schedule anything while a snapshot reservation is open
 * ({@link BackupMonitorContext#openReservations()}), and (for the backup strategies) only
 * watermarks it has observed itself and that are older than
 * {@link BackupMonitorContext#cleanupDelay()}, read anew at every check. After a restart or a swap
 * it starts with no observations at all.
 *
 * <p><b>Reservations</b> are not the monitor's business beyond pausing: the coordinator holds the
 * {@code /snapshot} connections, sends their status message (with {@link #backupURL()}), and
 * learns the cleanup delay from how long they last, so both survive a swap.
 *
 * <p><b>Threading.</b> {@code start}, {@code stop} and the reservation methods may be called from
 * different coordinator threads and must be thread-safe; none of them may block on I/O except
 * {@link #stop()}, which waits, bounded, for a running check. Periodic checks run on the
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
     *     in which case {@code /snapshot} requests are refused with upstream's message
     */
    Optional<String> backupURL();

    /**
     * Starts periodic work for one activation. Returns promptly; work runs on the monitor's own
     * threads. A stopped monitor may be started again with a new context and must then begin with
     * no observations, no cached verification and no staleness clock.
     *
     * @param context the coordinator's context for this activation: the cleanup scheduler, the
     *     cleanup delay, the open reservations and the metrics and fatal-error sinks
     * @throws IllegalStateException if the monitor is already started
     */
    void start(BackupMonitorContext context);

    /**
     * Stops periodic work: cancels timers, aborts in-flight I/O (HTTP fetches, child processes) and
     * waits, bounded, for a running check to finish. After it returns the monitor makes no further
     * calls on the context (calls from a check that outlives the bound are refused by the
     * context anyway). Idempotent.
     */
    void stop();

    /**
     * Describes this monitor for the operator ({@code /status} under {@code backup.monitor}), for
     * example the last scheduled watermark, the observed watermarks still ageing and when the
     * backup went stale. Called on HTTP and shell threads: cheap, non-blocking, thread-safe, and
     * JSON-compatible values only (see {@link org.zrm.status.StatusContributor#status()}).
     *
     * @return the details; empty by default
     */
    default Map<String, Object> status() {
        return Map.of();
    }
}

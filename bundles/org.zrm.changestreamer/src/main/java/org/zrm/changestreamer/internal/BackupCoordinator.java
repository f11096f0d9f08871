package org.zrm.changestreamer.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.BackupMonitorContext;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.protocol.subscriber.SnapshotStatus;
import org.zrm.status.MetricsSink;

/**
 * Chooses the active backup monitor and keeps a swap safe (spec backup-monitors §8.1).
 *
 * <ul>
 *   <li><b>One writer of cleanup.</b> Each activation of a monitor gets its own context
 *       ({@link Activation}, numbered by an epoch). Retiring it makes that context refuse
 *       scheduling, under the same lock the scheduling takes, so a check still running in a
 *       retired monitor can never schedule a purge.</li>
 *   <li><b>No inherited confirmations.</b> A swap drops the watermarks scheduled but not yet purged
 *       ({@link CleanupTarget#clearPendingCleanups()}, which also waits for a purge in flight), and
 *       the new monitor starts with no observations.</li>
 *   <li><b>Reservations and the learned cleanup delay live here</b>, not in a monitor, so they
 *       survive the swap; the delay only grows.</li>
 *   <li><b>Missing or unconfigured strategy.</b> Purging stays paused (nothing schedules), the
 *       reason is logged and shown in {@code /status}, and the monitor is started as soon as its
 *       service appears (a bundle dropped into the deploy folder, a configuration added).</li>
 *   <li><b>Fatal is never swallowed.</b> A monitor's fatal report stops the pipeline (no acks, no
 *       purging), marks the runtime unhealthy and, with {@code exitOnFatal}, stops the runtime
 *       with the reason (the launcher then exits non-zero and prints it).</li>
 * </ul>
 *
 * <p>No monitor is started before the change streamer has initialized (upstream creates its monitor
 * after the restore and initial sync); the initial cleanup delay is at least how long that took.
 *
 * <p><b>Threading.</b> Everything that can wait runs on one coordinator thread (the
 * {@code worker}): retiring a monitor (which waits for a purge in flight), stopping one, starting
 * one (child processes), and stopping the pipeline after a fatal report. The callbacks that
 * change what is wanted (Configuration Admin through {@link #select}, Declarative Services through
 * {@link #monitorAdded}/{@link #monitorRemoved}, the streamer through
 * {@link #streamerInitialized}) only record it under {@code lock}, which is never held while
 * waiting, and ask the worker to reconcile. Requests coalesce: at most one reconcile is queued at
 * a time, and it acts on the newest wanted state, so a burst of configuration edits does one swap
 * to the last one. A swap asked for during a slow purge therefore returns at once and takes effect
 * when the purge has finished. Only the worker changes the active activation. Status and metrics
 * read volatile fields only.
 */
final class BackupCoordinator {

    /** What the coordinator drives in the change streamer. */
    interface CleanupTarget {
        /** Records a confirmed watermark for the streamer's purge cycle. */
        void scheduleCleanup(String watermark);

        /** Forgets pending watermarks; returns after a purge in flight has finished. */
        void clearPendingCleanups();

        /** @return the change log's state, for the snapshot status */
        ChangeLogState getChangeLogState() throws ChangeLogException;

        /** Stops the pipeline because of a fatal backup condition: no more acks, no purging. */
        void stopForFatal(Throwable cause);
    }

    private static final Logger LOG = LoggerFactory.getLogger(BackupCoordinator.class);

    private final CleanupTarget target;
    private final Reservations reservations;
    private final Clock clock;
    private final Executor statusSender;
    private final Executor worker;
    private final Consumer<String> stopRuntime;
    private final Instant createdAt;

    /** Guards the wanted state below; never held while waiting on anything. */
    private final Object lock = new Object();
    // Guarded by lock. Registration order: the newest service of a strategy wins.
    private final List<BackupMonitor> monitors = new ArrayList<>();
    private BackupSettings settings = BackupSettings.defaults();
    private boolean streamerReady;
    private String reconcileWhy;
    private BackupMonitor fatalMonitor;

    /** Set while a reconcile is queued and has not yet read the wanted state. */
    private final AtomicBoolean reconcileQueued = new AtomicBoolean();
    // Worker-confined (written only by tasks on the worker).
    private long epoch;
    private volatile Activation active;
    /** The longest start-up or reservation seen; the effective delay is at least the configured floor. */
    private volatile Duration learnedDelay = Duration.ZERO;
    private volatile Duration minCleanupDelay = BackupSettings.DEFAULT_MIN_CLEANUP_DELAY;
    private volatile String confirmedWatermark;
    private volatile String unavailableReason = "waiting for the change streamer to initialize";
    private volatile Throwable fatal;
    private volatile boolean exitOnFatal = true;
    private volatile String selectedStrategy = BackupSettings.AUTO;
    private volatile String effectiveStrategy = BackupMonitor.STRATEGY_REPLICA;
    private final Map<String, AtomicLong> purgeBlocked = new ConcurrentHashMap<>();
    private final AtomicLong swaps = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    /**
     * @param target the change streamer side
     * @param reservations the open {@code /snapshot} reservations (shared with the purge cycle)
     * @param clock time source
     * @param statusSender runs the snapshot-status reads off the caller's (HTTP) thread; may reject
     *     when its bounded queue is full, which fails that reservation (the client retries)
     * @param worker the coordinator thread: runs its tasks one at a time, in order (tests may pass
     *     a direct executor). Its queue never holds more than one reconcile, one fatal stop and the
     *     close, so a small bound suffices; a rejected task means the coordinator was closed
     * @param stopRuntime stops the whole runtime with a reason (called on a fatal report with
     *     {@code exitOnFatal}); a bundle never calls {@code System.exit}
     */
    BackupCoordinator(CleanupTarget target, Reservations reservations, Clock clock, Executor statusSender,
            Executor worker, Consumer<String> stopRuntime) {
        this.target = target;
        this.reservations = reservations;
        this.clock = clock;
        this.statusSender = statusSender;
        this.worker = worker;
        this.stopRuntime = stopRuntime;
        this.createdAt = clock.instant();
    }

    /** The cleanup delay monitors use: the configured floor, raised by what was learned. */
    private Duration cleanupDelay() {
        Duration learned = learnedDelay;
        Duration min = minCleanupDelay;
        return learned.compareTo(min) > 0 ? learned : min;
    }

    // ------------------------------------------------------------------ selection

    /** Applies new settings; a changed strategy swaps the monitor (on the worker). Never waits. */
    void select(BackupSettings s) {
        synchronized (lock) {
            boolean changed = !s.effectiveStrategy().equals(settings.effectiveStrategy());
            settings = s;
            selectedStrategy = s.strategy();
            effectiveStrategy = s.effectiveStrategy();
            exitOnFatal = s.exitOnFatal();
            minCleanupDelay = s.minCleanupDelay();
            if (changed) {
                LOG.info("backup: strategy {} selected{}", s.effectiveStrategy(),
                        BackupSettings.AUTO.equals(s.strategy()) ? " (auto)" : "");
            }
        }
        requestReconcile("strategy " + s.effectiveStrategy() + " selected");
    }

    /** A monitor service was registered. Never waits. */
    void monitorAdded(BackupMonitor monitor) {
        synchronized (lock) {
            monitors.add(monitor);
        }
        LOG.info("backup: {} monitor registered", monitor.strategy());
        requestReconcile("a " + monitor.strategy() + " monitor was registered");
    }

    /**
     * A monitor service is going away. Never waits: if it is the active one, the worker retires it.
     * Until then its context still accepts confirmations, which is safe: the monitor confirmed them
     * while it was the active one, and the retirement drops whatever is still pending.
     */
    void monitorRemoved(BackupMonitor monitor) {
        synchronized (lock) {
            monitors.remove(monitor);
        }
        requestReconcile("a " + monitor.strategy() + " monitor was unregistered");
    }

    /** The change streamer has initialized (restore or initial sync done): monitors may start. */
    void streamerInitialized() {
        synchronized (lock) {
            if (streamerReady) {
                return;
            }
            streamerReady = true;
        }
        raiseDelay(Duration.between(createdAt, clock.instant()), "start-up time");
        requestReconcile("the change streamer initialized");
    }

    /** Asks the worker to bring the active monitor in line with the wanted state. */
    private void requestReconcile(String why) {
        synchronized (lock) {
            reconcileWhy = why;
        }
        if (reconcileQueued.compareAndSet(false, true)) {
            try {
                worker.execute(this::reconcile);
            } catch (RejectedExecutionException e) {
                reconcileQueued.set(false);
                LOG.info("backup: not reconciling ({}): the coordinator is closed", why);
            }
        }
    }

    /** Worker only. */
    private void reconcile() {
        // Cleared before reading the wanted state: a change made after this read queues another run.
        reconcileQueued.set(false);
        String why;
        String want;
        BackupMonitor candidate;
        synchronized (lock) {
            if (fatal != null) {
                return; // the pipeline is stopped; nothing may schedule cleanup any more
            }
            if (!streamerReady) {
                unavailableReason = "waiting for the change streamer to initialize";
                return;
            }
            why = reconcileWhy;
            want = settings.effectiveStrategy();
            candidate = newest(want);
        }
        Activation a = active;
        if (a != null && a.monitor == candidate) {
            return;
        }
        if (a != null) {
            retire(a, why);
        }
        if (candidate == null) {
            unavailableReason = "strategy " + want + " is selected but no " + want + " backup monitor is registered:"
                    + " install bundle org.zrm.backup." + want + " (e.g. into the deploy folder) and configure PID"
                    + " org.zrm.backup." + want;
            LOG.warn("backup: purging paused: {}", unavailableReason);
            return;
        }
        if (!BackupMonitor.STRATEGY_REPLICA.equals(want) && candidate.backupURL().isEmpty()) {
            unavailableReason = "the " + want + " monitor has no backup URL: set litestream.backupURL in PID"
                    + " org.zrm.backup." + want;
            LOG.warn("backup: purging paused: {}", unavailableReason);
            return;
        }
        Activation next = new Activation(++epoch, candidate);
        active = next;
        unavailableReason = null;
        try {
            candidate.start(next);
        } catch (RuntimeException e) {
            active = null;
            next.retire();
            unavailableReason = "the " + want + " monitor failed to start: " + e.getMessage();
            LOG.error("backup: purging paused: {}", unavailableReason, e);
            return;
        }
        if (epoch > 1) {
            swaps.incrementAndGet();
        }
        LOG.info("backup: {} monitor active (epoch {}, cleanup delay {} ms){}", want, next.epoch,
                cleanupDelay().toMillis(), candidate.backupURL().map(u -> ", backup " + u).orElse(""));
    }

    private BackupMonitor newest(String strategy) {
        for (int i = monitors.size() - 1; i >= 0; i--) {
            if (strategy.equals(monitors.get(i).strategy())) {
                return monitors.get(i);
            }
        }
        return null;
    }

    /** Worker only: refuses the activation's scheduling, drops its pending purges, then stops its monitor. */
    private void retire(Activation a, String why) {
        a.retire();
        // status() reads without the lock; until reconcile() settles, it says why nothing is active.
        unavailableReason = "the " + a.monitor.strategy() + " monitor was retired because " + why;
        active = null;
        target.clearPendingCleanups();
        try {
            a.monitor.stop();
        } catch (RuntimeException e) {
            LOG.warn("backup: stopping the {} monitor failed: {}", a.monitor.strategy(), e.toString(), e);
        }
        LOG.info("backup: {} monitor retired (epoch {}) because {}; pending cleanups dropped", a.monitor.strategy(),
                a.epoch, why);
    }

    /** Raises the learned delay; it never shrinks (carried over across swaps). */
    private void raiseDelay(Duration candidate, String source) {
        synchronized (lock) {
            if (candidate.compareTo(learnedDelay) > 0) {
                learnedDelay = candidate;
                LOG.info("backup: learned cleanup delay raised to {} ms ({}); in effect: {} ms", candidate.toMillis(),
                        source, cleanupDelay().toMillis());
            }
        }
    }

    // ------------------------------------------------------------------ reservations

    /**
     * Starts a {@code /snapshot} reservation and sends its status asynchronously.
     *
     * @throws SnapshotUnavailableException under the replica strategy (upstream's text), while no
     *     backup monitor is active (retryable), or after a fatal backup condition
     */
    void reserve(String taskID, SnapshotReservation reservation) throws SnapshotUnavailableException {
        Throwable f = fatal;
        if (f != null) {
            throw new SnapshotUnavailableException("backup monitoring stopped the replication manager: "
                    + f.getMessage());
        }
        Activation a = active;
        if (a == null) {
            if (BackupMonitor.STRATEGY_REPLICA.equals(effectiveStrategy)) {
                throw new SnapshotUnavailableException(SnapshotUnavailableException.NOT_CONFIGURED);
            }
            throw new SnapshotUnavailableException("no backup monitor is active (" + unavailableReason + "); retry");
        }
        Optional<String> url = a.monitor.backupURL();
        if (url.isEmpty()) {
            throw new SnapshotUnavailableException(SnapshotUnavailableException.NOT_CONFIGURED);
        }
        reservations.add(reservation);
        LOG.info("backup: snapshot reserved by task {}; cleanup paused while it is open", taskID);
        try {
            statusSender.execute(() -> sendStatus(reservation, url.get()));
        } catch (RejectedExecutionException e) {
            reservation.fail(new IllegalStateException("too many snapshot reservations pending; retry", e));
        }
    }

    private void sendStatus(SnapshotReservation reservation, String backupURL) {
        try {
            ChangeLogState s = target.getChangeLogState();
            reservation.sendStatus(new SnapshotStatus(backupURL, s.replicaVersion(), s.minWatermark()));
        } catch (ChangeLogException | RuntimeException e) {
            LOG.warn("backup: could not prepare the snapshot status for task {}: {}", reservation.taskID(),
                    e.getMessage());
            reservation.fail(e);
        }
    }

    /**
     * Ends {@code taskID}'s reservation because it subscribed with {@code initial=true}: the
     * restore finished, and its duration may raise the cleanup delay.
     */
    void endReservation(String taskID) {
        reservations.end(taskID, clock.instant()).ifPresent(held -> {
            LOG.info("backup: snapshot reservation of task {} ended after {} ms", taskID, held.toMillis());
            raiseDelay(held, "reservation of task " + taskID);
        });
    }

    // ------------------------------------------------------------------ fatal

    /**
     * Called on the reporting monitor's thread. What must hold at once holds at once: the
     * coordinator is unhealthy and no activation may schedule any more. Stopping the pipeline,
     * which waits, runs on the worker.
     */
    private void fatal(Activation from, Throwable cause) {
        synchronized (lock) {
            if (fatal != null) {
                return;
            }
            fatal = cause;
            unavailableReason = null;
            fatalMonitor = from.monitor;
        }
        from.retire();
        Activation a = active;
        if (a != null) {
            a.retire(); // the reporting monitor stops its own schedule; it is stopped for good in close()
        }
        LOG.error("backup: FATAL from the {} monitor (epoch {}): {}; stopping the pipeline: no more acks upstream and"
                + " no purging", from.monitor.strategy(), from.epoch, cause.getMessage(), cause);
        String reason = "backup monitor " + from.monitor.strategy() + " reported a fatal condition: "
                + cause.getMessage();
        try {
            worker.execute(() -> stopForFatal(cause, reason));
        } catch (RejectedExecutionException e) {
            stopForFatal(cause, reason); // closed already: nothing else runs, so do it here
        }
    }

    /** Worker only. */
    private void stopForFatal(Throwable cause, String reason) {
        Activation a = active;
        BackupMonitor reporter;
        synchronized (lock) {
            reporter = fatalMonitor;
        }
        if (a != null && a.monitor != reporter) {
            // Started by a reconcile that read the wanted state just before the report.
            retire(a, "a fatal backup condition stopped the pipeline");
        } else if (a != null) {
            a.retire();
        }
        active = null;
        target.clearPendingCleanups();
        target.stopForFatal(cause);
        if (exitOnFatal) {
            LOG.error("backup: stopping the runtime (exitOnFatal) for the orchestrator to restart this node");
            stopRuntime.accept(reason);
        } else {
            LOG.error("backup: exitOnFatal is off: the node stays up, stopped and unhealthy, until restarted");
        }
    }

    // ------------------------------------------------------------------ status

    /** @return {@code false} once a fatal backup condition stopped the pipeline */
    boolean healthy() {
        return fatal == null;
    }

    /** @return the {@code backup} status section */
    Map<String, Object> status() {
        Activation a = active;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("strategy", selectedStrategy);
        m.put("effectiveStrategy", effectiveStrategy);
        m.put("active", a == null ? null : a.monitor.strategy());
        m.put("epoch", a == null ? null : a.epoch);
        m.put("backupURL", a == null ? null : a.monitor.backupURL().orElse(null));
        m.put("confirmedWatermark", confirmedWatermark);
        m.put("purgeBlockedReason", purgeBlockedReason(a));
        m.put("cleanupDelayMs", cleanupDelay().toMillis());
        m.put("reservations", List.copyOf(reservations.taskIDs()));
        m.put("registered", registeredStrategies());
        m.put("swaps", swaps.get());
        m.put("refusedFromRetired", refused.get());
        m.put("purgeBlocked", purgeBlockedCounts());
        m.put("backupLagMs", a == null || a.backupLag == null ? null : a.backupLag.toMillis());
        m.put("fatal", fatal == null ? null : fatal.getMessage());
        m.put("exitOnFatal", exitOnFatal);
        m.put("monitor", a == null ? Map.of() : a.monitor.status());
        return m;
    }

    private String purgeBlockedReason(Activation a) {
        Throwable f = fatal;
        if (f != null) {
            return "fatal: " + f.getMessage();
        }
        if (a == null) {
            return unavailableReason == null ? "no backup monitor is active" : unavailableReason;
        }
        Set<String> open = reservations.taskIDs();
        if (!open.isEmpty()) {
            return "paused for snapshot reservation(s): " + String.join(", ", open);
        }
        String blocked = a.blockedBy;
        return blocked == null ? null : "the " + a.monitor.strategy() + " monitor's last due cleanup was blocked: "
                + blocked;
    }

    private List<String> registeredStrategies() {
        synchronized (lock) {
            return monitors.stream().map(BackupMonitor::strategy).distinct().sorted().toList();
        }
    }

    private Map<String, Long> purgeBlockedCounts() {
        Map<String, Long> m = new TreeMap<>();
        purgeBlocked.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }

    /** Exports the coordinator's and the active monitor's figures. */
    void collect(MetricsSink sink) {
        Activation a = active;
        for (String s : List.of(BackupMonitor.STRATEGY_REPLICA, BackupMonitor.STRATEGY_LITESTREAM3,
                BackupMonitor.STRATEGY_VFS)) {
            sink.gauge("zrm_backup_monitor_active", "1 for the active backup monitor's strategy",
                    Map.of("strategy", s), a != null && a.monitor.strategy().equals(s) ? 1 : 0);
        }
        sink.gauge("zrm_backup_purge_paused", "1 while nothing can be scheduled for purging (no active monitor, an"
                + " open snapshot reservation, or a fatal condition)", Map.of(), purgeBlockedReason(a) == null ? 0 : 1);
        sink.gauge("zrm_backup_cleanup_delay_ms", "How long a backed-up watermark ages before it is purged",
                Map.of(), cleanupDelay().toMillis());
        sink.gauge("zrm_backup_snapshot_reservations", "Open /snapshot reservations", Map.of(),
                reservations.taskIDs().size());
        sink.counter("zrm_backup_swaps_total", "Backup monitor swaps", Map.of(), swaps.get());
        sink.counter("zrm_backup_refused_cleanups_total", "Cleanups refused because a retired monitor asked",
                Map.of(), refused.get());
        purgeBlocked.forEach((reason, n) -> sink.counter("zrm_replica_purge_blocked_total",
                "Checks that could not schedule a due cleanup (zero.replica.purge_blocked)", Map.of("reason", reason),
                n.get()));
        if (a != null && a.backupLag != null) {
            sink.gauge("zrm_replica_backup_lag_ms", "How far the backup trails the replica (zero.replica.backup_lag)",
                    Map.of(), a.backupLag.toMillis());
        }
        sink.gauge("zrm_backup_healthy", "0 after a fatal backup condition stopped the pipeline", Map.of(),
                healthy() ? 1 : 0);
    }

    /**
     * Stops the active monitor (and one that reported a fatal condition) and closes reservations,
     * on the worker after the work queued before it; waits for that at most {@code timeout}.
     */
    void close(Duration timeout) throws InterruptedException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable task = () -> {
            try {
                closeNow();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        };
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
        try {
            done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            LOG.warn("backup: closing the coordinator failed: {}", e.getCause().toString(), e.getCause());
        } catch (TimeoutException e) {
            LOG.warn("backup: the coordinator did not close within {} ms (a monitor's stop or a purge is still"
                    + " running); going on", timeout.toMillis());
        }
    }

    private void closeNow() {
        Activation a = active;
        if (a != null) {
            retire(a, "the change streamer is stopping");
        }
        BackupMonitor f;
        synchronized (lock) {
            f = fatalMonitor;
            fatalMonitor = null;
        }
        if (f != null) {
            f.stop();
        }
        for (String task : reservations.taskIDs()) {
            reservations.end(task, clock.instant());
        }
    }

    // ------------------------------------------------------------------ activation

    /** One activation of one monitor: its context, inert once retired. */
    private final class Activation implements BackupMonitorContext {
        final long epoch;
        final BackupMonitor monitor;
        private boolean retired; // guarded by this
        private volatile Duration backupLag;
        /** The last reason a due cleanup was blocked; cleared when the monitor schedules again. */
        private volatile String blockedBy;

        Activation(long epoch, BackupMonitor monitor) {
            this.epoch = epoch;
            this.monitor = monitor;
        }

        synchronized void retire() {
            retired = true;
        }

        private synchronized boolean current() {
            return !retired;
        }

        @Override
        public boolean scheduleCleanup(String watermark) {
            synchronized (this) {
                // Under this activation's lock: retire() cannot slip between the check and the
                // hand-over, so nothing reaches the purge queue after the swap cleared it.
                if (!retired) {
                    target.scheduleCleanup(watermark);
                    confirmedWatermark = watermark;
                    blockedBy = null;
                    LOG.debug("backup: {} monitor (epoch {}) confirmed {}", monitor.strategy(), epoch, watermark);
                    return true;
                }
            }
            refused.incrementAndGet();
            LOG.info("backup: refused cleanup to {} from the retired {} monitor (epoch {})", watermark,
                    monitor.strategy(), epoch);
            return false;
        }

        @Override
        public Duration cleanupDelay() {
            return BackupCoordinator.this.cleanupDelay();
        }

        @Override
        public Set<String> openReservations() {
            return reservations.taskIDs();
        }

        @Override
        public void purgeBlocked(String reason) {
            if (current()) {
                purgeBlocked.computeIfAbsent(reason, r -> new AtomicLong()).incrementAndGet();
                blockedBy = reason;
            }
        }

        @Override
        public void backupLag(Duration lag) {
            if (current()) {
                backupLag = lag;
            }
        }

        @Override
        public void reportFatal(Throwable cause) {
            // Honoured even from an activation retired a moment ago (spec §8.1 item 8).
            fatal(this, cause);
        }
    }
}

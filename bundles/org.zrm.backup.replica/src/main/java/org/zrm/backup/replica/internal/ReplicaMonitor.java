package org.zrm.backup.replica.internal;

import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.BackupMonitorContext;

/**
 * The no-backup strategy (Zero's {@code ReplicaMonitor}): after an initial delay and then at a
 * fixed interval it reads the replica file's {@code stateVersion} and, whenever that differs from
 * the last one scheduled in this activation, schedules cleanup up to it.
 *
 * <p>There is no backup, so there is no cleanup delay and no verification: the change streamer's
 * own guards (every subscriber has acknowledged the watermark, plus its purge timer) are what keep
 * the log long enough. Any change is scheduled, including a decrease after a reset; purging
 * "before" a lower watermark deletes less, so that is harmless.
 *
 * <p>Reservations: the coordinator refuses {@code /snapshot} under this strategy, so none is ever
 * opened for it. Upstream's ReplicaMonitor therefore never looks at them. This port still pauses
 * while {@link BackupMonitorContext#openReservations()} is non-empty, as the SPI requires of every
 * monitor: reservations survive a swap in the coordinator, and a restore that began under a backup
 * strategy must not lose its catch-up range to an immediate purge after a swap to this one.
 *
 * <p>Threading: checks run on a single daemon thread with a fixed delay, so they never overlap;
 * {@link #start} and {@link #stop} are serialised; {@link #status()} reads volatile fields only.
 */
final class ReplicaMonitor implements BackupMonitor {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaMonitor.class);

    /** Upstream {@code CHECK_INTERVAL_MS}: both the wait before the first check and the period. */
    static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

    /** How long {@link #stop()} waits for a running check (the SPI's "bounded" wait). */
    static final Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(10);

    static final String THREAD_NAME = "zrm-backup-replica";

    private final ReplicaStateVersionReader reader;
    private final Duration initialDelay;
    private final Duration interval;
    private final Duration stopTimeout;
    private final Clock clock;
    private final Supplier<ScheduledExecutorService> executors;

    private final Object lifecycle = new Object();
    /** The running activation; guarded by {@link #lifecycle}. */
    private Activation active;
    /** The most recent activation, running or stopped, for {@link #status()}. */
    private volatile Activation latest;

    /**
     * @param replicaFile the replica file (made absolute for messages)
     * @param initialDelay wait before the first check, not negative
     * @param interval wait between the end of one check and the start of the next, positive
     */
    ReplicaMonitor(Path replicaFile, Duration initialDelay, Duration interval) {
        this(replicaFile, initialDelay, interval, DEFAULT_STOP_TIMEOUT, Clock.systemUTC(),
                ReplicaMonitor::newExecutor);
    }

    /**
     * Test seam: the clock stamps status times, and {@code executors} supplies a fresh scheduler
     * per {@link #start} (a stopped executor cannot be reused).
     */
    ReplicaMonitor(Path replicaFile, Duration initialDelay, Duration interval, Duration stopTimeout, Clock clock,
            Supplier<ScheduledExecutorService> executors) {
        if (initialDelay.isNegative()) {
            throw new IllegalArgumentException("initial delay must not be negative: " + initialDelay);
        }
        if (interval.isZero() || interval.isNegative()) {
            throw new IllegalArgumentException("interval must be positive: " + interval);
        }
        this.reader = new ReplicaStateVersionReader(replicaFile.toAbsolutePath());
        this.initialDelay = initialDelay;
        this.interval = interval;
        this.stopTimeout = stopTimeout;
        this.clock = clock;
        this.executors = executors;
    }

    /**
     * One thread; its queue only ever holds this monitor's single periodic task, so it is bounded
     * by construction.
     */
    static ScheduledExecutorService newExecutor() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, THREAD_NAME);
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        return executor;
    }

    @Override
    public String strategy() {
        return STRATEGY_REPLICA;
    }

    /** Empty: there is no backup, and the coordinator refuses {@code /snapshot} with upstream's message. */
    @Override
    public Optional<String> backupURL() {
        return Optional.empty();
    }

    Path replicaFile() {
        return reader.file();
    }

    @Override
    public void start(BackupMonitorContext context) {
        synchronized (lifecycle) {
            if (active != null) {
                throw new IllegalStateException("replica monitor for " + reader.file() + " is already started");
            }
            // A new activation object: nothing observed by an earlier activation carries over.
            Activation a = new Activation(context, executors.get());
            a.schedule = a.executor.scheduleWithFixedDelay(() -> runCheck(a), initialDelay.toMillis(),
                    interval.toMillis(), TimeUnit.MILLISECONDS);
            active = a;
            latest = a;
            LOG.info("replica-monitor: starting for {} (first check in {} ms, then every {} ms)", reader.file(),
                    initialDelay.toMillis(), interval.toMillis());
        }
    }

    @Override
    public void stop() {
        synchronized (lifecycle) {
            Activation a = active;
            if (a == null) {
                return;
            }
            active = null;
            a.running = false;
            // Cancelling ends the wait for the next tick at once; shutdownNow also interrupts a
            // running check, although a SQLite read does not react to interrupts (its busy wait
            // is bounded by ReplicaStateVersionReader.BUSY_TIMEOUT_MS instead).
            a.schedule.cancel(false);
            a.executor.shutdownNow();
            try {
                if (!a.executor.awaitTermination(stopTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("replica-monitor: a check of {} is still running {} ms after stop; not waiting longer"
                            + " (the retired context refuses anything it schedules)", reader.file(),
                            stopTimeout.toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                LOG.warn("replica-monitor: interrupted while waiting for a running check of {} to end", reader.file());
            }
            LOG.info("replica-monitor: stopped for {}", reader.file());
        }
    }

    /**
     * Runs one check now on the current activation, on the caller's thread (tests drive checks
     * this way, as upstream's tests do with fake timers).
     *
     * @throws IllegalStateException if the monitor is not started
     */
    void check() {
        Activation a;
        synchronized (lifecycle) {
            a = active;
        }
        if (a == null) {
            throw new IllegalStateException("replica monitor is not started");
        }
        runCheck(a);
    }

    private void runCheck(Activation a) {
        // Serialises a test's direct check() with a scheduled one; scheduled ones never overlap.
        synchronized (a) {
            try {
                checkOnce(a);
            } catch (RuntimeException e) {
                // An exception escaping a fixed-delay task would silently cancel the schedule.
                a.lastError = "unexpected: " + e;
                LOG.error("replica-monitor: check of {} failed unexpectedly; retrying in {} ms", reader.file(),
                        interval.toMillis(), e);
            }
        }
    }

    private void checkOnce(Activation a) {
        String stateVersion;
        try {
            stateVersion = reader.read();
        } catch (NoSuchFileException e) {
            // Expected until the change source's initial sync has produced the file; warn once per
            // episode rather than every tick.
            problem(a, "replica file " + reader.file() + " does not exist; nothing read and nothing created,"
                    + " checking again in " + interval.toMillis() + " ms", false);
            return;
        } catch (ReplicaReadException e) {
            // The message says all there is (file, SQLite's reason); a stack trace would not help.
            problem(a, "Unable to read watermark from replica: " + e.getMessage(), true);
            return;
        }
        if (a.lastProblem != null) {
            LOG.info("replica-monitor: reading {} again (stateVersion {})", reader.file(), stateVersion);
            a.lastProblem = null;
        }
        a.lastError = null;
        a.lastReadAt = clock.instant();
        a.stateVersion = stateVersion;
        if (stateVersion.equals(a.lastWatermark)) {
            return;
        }
        Set<String> reservations = a.context.openReservations();
        if (!reservations.isEmpty()) {
            List<String> ids = List.copyOf(new TreeSet<>(reservations));
            if (!ids.equals(a.pausedFor)) {
                LOG.info("replica-monitor: watermark cleanup paused for snapshot(s): {} (replica at {})",
                        String.join(", ", ids), stateVersion);
            }
            a.pausedFor = ids;
            return;
        }
        if (!a.pausedFor.isEmpty()) {
            LOG.info("replica-monitor: snapshot reservations ended; watermark cleanup resumes");
            a.pausedFor = List.of();
        }
        if (a.context.scheduleCleanup(stateVersion)) {
            a.lastWatermark = stateVersion;
            a.schedulingRefused = false;
            LOG.debug("replica-monitor: replicated up to watermark {}", stateVersion);
        } else {
            // The coordinator retired this activation and will stop it; keep ticking harmlessly
            // until then, and leave lastWatermark at what was actually accepted.
            a.schedulingRefused = true;
            LOG.debug("replica-monitor: cleanup to {} refused: this monitor is no longer the active one",
                    stateVersion);
        }
    }

    private void problem(Activation a, String message, boolean error) {
        a.lastError = message;
        if (message.equals(a.lastProblem)) {
            LOG.debug("replica-monitor: still: {}", message);
            return;
        }
        a.lastProblem = message;
        if (error) {
            LOG.error("replica-monitor: {}", message);
        } else {
            LOG.warn("replica-monitor: {}", message);
        }
    }

    @Override
    public Map<String, Object> status() {
        Activation a = latest;
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("replicaFile", reader.file().toString());
        s.put("running", a != null && a.running);
        s.put("initialDelayMs", initialDelay.toMillis());
        s.put("intervalMs", interval.toMillis());
        s.put("lastWatermark", a == null ? null : a.lastWatermark);
        s.put("stateVersion", a == null ? null : a.stateVersion);
        Instant readAt = a == null ? null : a.lastReadAt;
        s.put("lastReadAt", readAt == null ? null : readAt.toString());
        s.put("lastError", a == null ? null : a.lastError);
        s.put("pausedForSnapshots", a == null ? List.of() : a.pausedFor);
        s.put("schedulingRefused", a != null && a.schedulingRefused);
        return s;
    }

    /** The state of one start..stop cycle. Fields are written by the check thread only. */
    private static final class Activation {
        final BackupMonitorContext context;
        final ScheduledExecutorService executor;
        ScheduledFuture<?> schedule;
        volatile boolean running = true;
        /** Last watermark the context accepted; null until the first accepted schedule. */
        volatile String lastWatermark;
        volatile String stateVersion;
        volatile Instant lastReadAt;
        volatile String lastError;
        volatile List<String> pausedFor = List.of();
        volatile boolean schedulingRefused;
        /** The problem last logged at warn/error level, to log repeats at debug only. */
        String lastProblem;

        Activation(BackupMonitorContext context, ScheduledExecutorService executor) {
            this.context = context;
            this.executor = executor;
        }
    }
}

package org.zrm.litestream.internal;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.secret.Secrets;
import org.zrm.status.MetricsSink;

/**
 * Runs {@code litestream replicate} while a backup URL is configured (zero-cache's
 * {@code startReplicaBackupProcess}) and keeps it running:
 * <ul>
 *   <li>it starts only once the backup replicator has prepared the replica
 *       ({@link ReplicaReadiness});</li>
 *   <li>its output goes to ZRM's log ({@link LogForwarder});</li>
 *   <li>when it dies it is restarted after a back-off that doubles from
 *       {@code restartInitial} to {@code restartMax}, and starts over once a run lasted
 *       {@code restartMax};</li>
 *   <li>a configuration change restarts it with the new settings, and removing the backup URL
 *       stops it; stopping sends SIGTERM (litestream then finishes its current sync) and SIGKILL
 *       if it has not exited within {@code stopTimeout}.</li>
 * </ul>
 *
 * <p>Threads: one supervisor thread does all waiting, so {@link #apply}, {@link #invalid} and
 * {@link #close} only record what is wanted and return. That thread is not a daemon: when the JVM
 * is shutting down it still finishes the bounded stop, so no litestream outlives ZRM. Until the
 * first snapshot is listed at the destination, a probe thread lists it every
 * {@code snapshotProbeInterval}.
 */
final class ReplicateSupervisor {

    enum State { DISABLED, INVALID_CONFIG, WAITING_FOR_REPLICA, RUNNING, BACKOFF, STOPPING, STOPPED }

    private static final Logger LOG = LoggerFactory.getLogger(ReplicateSupervisor.class);
    /** How often a wait re-checks the replica when no file-system event arrives (missed events, NFS). */
    private static final Duration READINESS_RECHECK = Duration.ofSeconds(5);

    private final Map<String, String> inheritedEnv;
    private final Clock clock;
    private final Thread thread;
    private final ScheduledExecutorService probeExecutor;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    // Guarded by lock: what is wanted.
    private LitestreamSettings desired;
    private String invalidReason;
    private long generation;
    private boolean closed;
    /** The running process, so that {@link #close} can send SIGTERM at once. */
    private volatile Process current;

    // Written by the supervisor (and probe) threads, read by status().
    private volatile State state = State.DISABLED;
    private volatile String waitingFor;
    private volatile long pid = -1;
    private volatile Instant startedAt;
    private volatile long restarts;
    private volatile Integer lastExitCode;
    private volatile Instant lastExitAt;
    private volatile String lastError;
    private volatile Instant firstSnapshotAt;
    private volatile String running; // masked backup URL of the running process
    private ScheduledFuture<?> probe; // supervisor thread only

    ReplicateSupervisor(Map<String, String> inheritedEnv, Clock clock) {
        this.inheritedEnv = Map.copyOf(inheritedEnv);
        this.clock = clock;
        this.probeExecutor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "zrm-litestream-snapshot-probe");
            t.setDaemon(true);
            return t;
        });
        this.thread = new Thread(this::run, "zrm-litestream");
        // When the JVM ends without this bundle being stopped first (a SIGTERM whose framework
        // shutdown does not reach this bundle in time), litestream would outlive it as an orphan
        // still backing up a file nobody writes: the hook tells it to stop. Nothing helps against
        // a SIGKILL of the JVM; the next start then runs next to it (see OPERATIONS.md).
        this.shutdownHook = new Thread(() -> {
            Process p = current;
            if (p != null && p.isAlive()) {
                p.destroy();
            }
        }, "zrm-litestream-shutdown");
    }

    private final Thread shutdownHook;

    void start() {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        thread.start();
    }

    /** Wants {@code s} (an empty backup URL: no process). Never waits. */
    void apply(LitestreamSettings s) {
        update(s, null);
    }

    /** The configuration is invalid: no process runs, and the status says {@code reason}. Never waits. */
    void invalid(String reason) {
        update(null, reason);
    }

    private void update(LitestreamSettings s, String reason) {
        lock.lock();
        try {
            if (java.util.Objects.equals(s, desired) && java.util.Objects.equals(reason, invalidReason)) {
                return; // the same configuration delivered again: the running process stays
            }
            if (desired != null && s != null && !s.backupURL().equals(desired.backupURL())) {
                firstSnapshotAt = null; // another destination: its first snapshot is still to come
            }
            desired = s;
            invalidReason = reason;
            generation++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops litestream and ends the supervisor. Never waits: SIGTERM is sent here, at once, so
     * that litestream is told even if the JVM ends before the supervisor thread escalates to
     * SIGKILL after the bound.
     */
    void close() {
        lock.lock();
        try {
            closed = true;
            generation++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        Process p = current;
        if (p != null && p.isAlive()) {
            p.destroy();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // The JVM is shutting down already: the hook runs (or ran) and does the same.
        }
    }

    /** Waits for the supervisor thread to end (tests, and the component's bounded deactivate). */
    boolean awaitClosed(Duration timeout) throws InterruptedException {
        thread.join(Math.max(1, timeout.toMillis()));
        return !thread.isAlive();
    }

    // ------------------------------------------------------------------ the supervisor thread

    private void run() {
        Duration backoff = null;
        try {
            while (true) {
                LitestreamSettings s;
                long gen;
                lock.lock();
                try {
                    if (closed) {
                        return;
                    }
                    s = desired;
                    gen = generation;
                    if (s == null || !s.enabled()) {
                        state = invalidReason != null ? State.INVALID_CONFIG : State.DISABLED;
                        lastError = invalidReason;
                        waitingFor = null;
                        backoff = null;
                        while (generation == gen) {
                            changed.await();
                        }
                        continue;
                    }
                } finally {
                    lock.unlock();
                }
                try {
                    // Written before the wait, so the monitor's listings find it as soon as there is a backup.
                    s.writeGeneratedConfig();
                } catch (IOException e) {
                    lastError = "cannot write " + s.configPath() + ": " + e.getMessage();
                    LOG.error("litestream: {}", lastError);
                }
                if (!awaitReplica(s, gen)) {
                    continue;
                }
                Instant began = clock.instant();
                Process p;
                try {
                    s.writeGeneratedConfig();
                    p = startProcess(s);
                } catch (IOException e) {
                    lastError = "cannot start litestream replicate (" + s.executable() + "): " + e.getMessage();
                    LOG.error("litestream: {}", lastError);
                    backoff = nextBackoff(s, backoff);
                    state = State.BACKOFF;
                    awaitChange(gen, backoff);
                    continue;
                }
                boolean stillWanted = superviseRun(s, p, gen);
                Duration ran = Duration.between(began, clock.instant());
                if (!stillWanted) {
                    stop(s, p);
                    backoff = null;
                    continue;
                }
                // It died on its own (superviseRun counted the restart and set BACKOFF).
                if (ran.compareTo(s.restartMax()) >= 0) {
                    backoff = null;
                }
                backoff = nextBackoff(s, backoff);
                LOG.error("litestream: replicate exited with {} after {} s; restarting in {} ms (restart #{})",
                        exitText(lastExitCode), ran.toSeconds(), backoff.toMillis(), restarts);
                awaitChange(gen, backoff);
            }
        } catch (InterruptedException e) {
            LOG.warn("litestream: supervisor interrupted");
        } finally {
            cancelProbe();
            probeExecutor.shutdownNow();
            state = State.STOPPED;
            pid = -1;
            running = null;
        }
    }

    private static Duration nextBackoff(LitestreamSettings s, Duration previous) {
        if (previous == null) {
            return s.restartInitial();
        }
        Duration next = previous.multipliedBy(2);
        return next.compareTo(s.restartMax()) > 0 ? s.restartMax() : next;
    }

    /** @return {@code true} once the replica is ready; {@code false} if the configuration changed first */
    private boolean awaitReplica(LitestreamSettings s, long gen) throws InterruptedException {
        Path replica = s.replicaFile();
        String missing = ReplicaReadiness.check(replica);
        if (missing == null) {
            return true;
        }
        state = State.WAITING_FOR_REPLICA;
        waitingFor = missing;
        LOG.info("litestream: {} before starting the backup", missing);
        // File-system events are the signal; the re-check bounds a missed one.
        try (WatchService watch = FileSystems.getDefault().newWatchService()) {
            replica.getParent().register(watch, StandardWatchEventKinds.ENTRY_CREATE,
                    StandardWatchEventKinds.ENTRY_MODIFY);
            long nextCheck = System.nanoTime() + READINESS_RECHECK.toNanos();
            while (true) {
                if (changedSince(gen)) {
                    return false;
                }
                WatchKey key = watch.poll(250, TimeUnit.MILLISECONDS);
                boolean event = key != null;
                if (key != null) {
                    key.pollEvents();
                    key.reset();
                }
                if (event || System.nanoTime() >= nextCheck) {
                    nextCheck = System.nanoTime() + READINESS_RECHECK.toNanos();
                    missing = ReplicaReadiness.check(replica);
                    if (missing == null) {
                        waitingFor = null;
                        return true;
                    }
                    waitingFor = missing;
                }
            }
        } catch (IOException | ClosedWatchServiceException e) {
            // Without a watch service the bounded re-check alone decides.
            LOG.debug("litestream: no file-system events for {}: {}", replica.getParent(), e.toString());
            while (!changedSince(gen)) {
                if ((missing = ReplicaReadiness.check(replica)) == null) {
                    waitingFor = null;
                    return true;
                }
                waitingFor = missing;
                awaitChange(gen, READINESS_RECHECK);
            }
            return false;
        }
    }

    private Process startProcess(LitestreamSettings s) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(List.of(s.executable().toString(), "replicate"));
        pb.environment().clear();
        pb.environment().putAll(s.environment(inheritedEnv, null));
        Process p = pb.start();
        current = p;
        p.getOutputStream().close(); // replicate reads no input
        lock.lock();
        try {
            // One step under the lock status() reads under, so no reader pairs RUNNING with the last
            // child's exit or the new pid with the old state.
            pid = p.pid();
            startedAt = clock.instant();
            running = Secrets.maskUrls(s.backupURL());
            lastError = null;
            waitingFor = null;
            state = State.RUNNING;
        } finally {
            lock.unlock();
        }
        LOG.info("litestream: started replicate (pid {}) backing up {} to {}", p.pid(), s.replicaFile(), running);
        LogForwarder.start("zrm-litestream-stdout", "litestream[" + p.pid() + "]", p.getInputStream());
        LogForwarder.start("zrm-litestream-stderr", "litestream[" + p.pid() + "]", p.getErrorStream());
        p.onExit().thenRun(() -> {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        });
        if (firstSnapshotAt == null) {
            scheduleProbe(s, Duration.ZERO);
        }
        return p;
    }

    /**
     * Waits until the process exits or the configuration changes.
     *
     * @return {@code true} if the process exited while still wanted (a death)
     */
    private boolean superviseRun(LitestreamSettings s, Process p, long gen) throws InterruptedException {
        boolean died;
        lock.lock();
        try {
            while (generation == gen && !closed && p.isAlive()) {
                changed.await();
            }
            if (p.isAlive()) {
                return false;
            }
            // The exit, the restart count and the state change as one step under the lock status()
            // reads under: read field by field, a status once showed the new restart count beside
            // the dead child's pid and RUNNING.
            recordExit(p);
            died = generation == gen && !closed;
            if (died) {
                restarts++;
                state = State.BACKOFF;
            }
        } finally {
            lock.unlock();
        }
        cancelProbe();
        return died;
    }

    /** SIGTERM, then SIGKILL after the bound; waits for the exit. */
    private void stop(LitestreamSettings s, Process p) throws InterruptedException {
        state = State.STOPPING;
        cancelProbe();
        if (p.isAlive()) {
            LOG.info("litestream: stopping replicate (pid {}) with SIGTERM", p.pid());
            p.destroy();
            if (!p.waitFor(s.stopTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("litestream: replicate (pid {}) did not exit within {} ms of SIGTERM; sending SIGKILL",
                        p.pid(), s.stopTimeout().toMillis());
                p.destroyForcibly();
                p.waitFor();
            }
        }
        recordExit(p);
        LOG.info("litestream: replicate stopped ({})", exitText(lastExitCode));
    }

    private void recordExit(Process p) {
        lastExitCode = p.exitValue();
        lastExitAt = clock.instant();
        current = null;
        pid = -1;
        running = null;
    }

    private boolean changedSince(long gen) {
        lock.lock();
        try {
            return generation != gen || closed;
        } finally {
            lock.unlock();
        }
    }

    private void awaitChange(long gen, Duration timeout) throws InterruptedException {
        lock.lock();
        try {
            long nanos = timeout.toNanos();
            while (generation == gen && !closed && nanos > 0) {
                nanos = changed.awaitNanos(nanos);
            }
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ first snapshot

    private void scheduleProbe(LitestreamSettings s, Duration delay) {
        try {
            probe = probeExecutor.schedule(() -> probeOnce(s), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("litestream: snapshot probe not scheduled (shutting down)");
        }
    }

    private void probeOnce(LitestreamSettings s) {
        if (current == null) {
            return; // the process this probe was for has ended; the next start schedules its own
        }
        try {
            int n = SnapshotProbe.count(s, inheritedEnv);
            if (n > 0) {
                firstSnapshotAt = clock.instant();
                LOG.info("litestream: the first snapshot is at the destination ({} listed)", n);
                return;
            }
        } catch (IOException e) {
            LOG.warn("litestream: listing the destination's snapshots failed: {}", Secrets.maskUrls(e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            probe = probeExecutor.schedule(() -> probeOnce(s), s.snapshotProbeInterval().toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("litestream: snapshot probe ended (shutting down)");
        }
    }

    private void cancelProbe() {
        ScheduledFuture<?> f = probe;
        if (f != null) {
            f.cancel(true);
        }
    }

    // ------------------------------------------------------------------ status

    State state() {
        return state;
    }

    long pid() {
        return pid;
    }

    long restarts() {
        return restarts;
    }

    boolean firstSnapshot() {
        return firstSnapshotAt != null;
    }

    /** Unhealthy only for a configuration it cannot run; a death is retried, not a reason to restart ZRM. */
    boolean healthy() {
        return state != State.INVALID_CONFIG;
    }

    /** Ready when no backup is configured, or litestream runs and the destination holds a snapshot. */
    boolean ready() {
        State st = state;
        return st == State.DISABLED || (st == State.RUNNING && firstSnapshotAt != null);
    }

    /**
     * One consistent picture: read under the lock that the start of a child and the record of its
     * death hold, so its state, pid, restart count and last exit belong together. The lock is only
     * ever held briefly (the supervisor's waits release it), so a status request does not stall.
     */
    Map<String, Object> status() {
        lock.lock();
        try {
            return statusLocked();
        } finally {
            lock.unlock();
        }
    }

    private Map<String, Object> statusLocked() {
        Map<String, Object> m = new LinkedHashMap<>();
        State st = state;
        m.put("state", st.name());
        m.put("ready", ready());
        m.put("backupURL", running);
        m.put("pid", pid < 0 ? null : pid);
        m.put("startedAt", st == State.RUNNING && startedAt != null ? startedAt.toString() : null);
        m.put("restarts", restarts);
        Map<String, Object> exit = null;
        if (lastExitAt != null) {
            exit = new LinkedHashMap<>();
            exit.put("code", lastExitCode);
            exit.put("description", exitText(lastExitCode));
            exit.put("at", lastExitAt.toString());
        }
        m.put("lastExit", exit);
        m.put("firstSnapshotAt", firstSnapshotAt == null ? null : firstSnapshotAt.toString());
        m.put("waitingFor", waitingFor);
        m.put("error", lastError);
        return m;
    }

    void collect(MetricsSink sink) {
        State st = state;
        sink.gauge("zrm_litestream_up", "1 while litestream replicate runs", Map.of(), st == State.RUNNING ? 1 : 0);
        for (State s : State.values()) {
            sink.gauge("zrm_litestream_state", "the litestream supervisor's state", Map.of("state", s.name()),
                    s == st ? 1 : 0);
        }
        sink.gauge("zrm_litestream_pid", "pid of litestream replicate, -1 when none runs", Map.of(), pid);
        sink.counter("zrm_litestream_restarts_total", "restarts of litestream replicate after it died", Map.of(),
                restarts);
        Integer code = lastExitCode;
        sink.gauge("zrm_litestream_last_exit_code", "exit code of the last litestream replicate (128+n: signal n),"
                + " -1 before any exit", Map.of(), code == null ? -1 : code);
        sink.gauge("zrm_litestream_first_snapshot", "1 once the destination lists a snapshot", Map.of(),
                firstSnapshotAt == null ? 0 : 1);
        sink.gauge("zrm_litestream_config_error", "1 while the litestream configuration is invalid", Map.of(),
                st == State.INVALID_CONFIG ? 1 : 0);
    }

    /** Java reports a death by signal n as 128 + n. */
    static String exitText(Integer code) {
        if (code == null) {
            return "no exit";
        }
        if (code > 128 && code <= 128 + 31) {
            int sig = code - 128;
            return "signal " + sig + (sig == 9 ? " (SIGKILL)" : sig == 15 ? " (SIGTERM)" : sig == 2 ? " (SIGINT)" : "");
        }
        return "exit code " + code;
    }
}

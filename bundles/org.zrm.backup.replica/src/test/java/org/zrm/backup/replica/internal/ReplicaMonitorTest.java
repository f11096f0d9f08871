package org.zrm.backup.replica.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.BackupMonitorContext;
import org.zrm.testing.backup.ManualClock;
import org.zrm.testing.backup.RecordingMonitorContext;

class ReplicaMonitorTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration THIRTY_SECONDS = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(T0);
    private final List<ManualScheduledExecutor> executors = new ArrayList<>();
    private final List<ReplicaMonitor> monitors = new ArrayList<>();

    @AfterEach
    void stopMonitors() {
        monitors.forEach(ReplicaMonitor::stop);
    }

    /** A monitor with upstream's timing (30 s, 30 s) on a manual scheduler and clock. */
    private ReplicaMonitor monitor(Path file) {
        return monitor(file, THIRTY_SECONDS, THIRTY_SECONDS);
    }

    private ReplicaMonitor monitor(Path file, Duration initialDelay, Duration interval) {
        ReplicaMonitor m = new ReplicaMonitor(file, initialDelay, interval, ReplicaMonitor.DEFAULT_STOP_TIMEOUT, clock,
                () -> {
                    ManualScheduledExecutor e = new ManualScheduledExecutor(clock);
                    executors.add(e);
                    return e;
                });
        monitors.add(m);
        return m;
    }

    private ManualScheduledExecutor executor() {
        return executors.get(executors.size() - 1);
    }

    private static RecordingMonitorContext context() {
        return new RecordingMonitorContext(THIRTY_SECONDS);
    }

    // ---- notes-for-port tests (spec §7: ReplicaMonitor has no upstream test) ----

    @Test
    void firstCheckHappensAfterTheInitialDelay() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();

        m.start(ctx);
        assertEquals(0, executor().runDue(), "start itself does not check");
        assertEquals(0, executor().advanceAndRun(Duration.ofMillis(29_999)));
        assertEquals(List.of(), ctx.scheduled());
        assertNull(m.status().get("lastReadAt"));

        assertEquals(1, executor().advanceAndRun(Duration.ofMillis(1)), "first check at 30 s");
        assertEquals(List.of("0a"), ctx.scheduled());
        assertEquals(T0.plusSeconds(30).toString(), m.status().get("lastReadAt"));

        TestReplica.setStateVersion(file, "0b");
        assertEquals(0, executor().advanceAndRun(Duration.ofMillis(29_999)), "then every 30 s");
        assertEquals(1, executor().advanceAndRun(Duration.ofMillis(1)));
        assertEquals(List.of("0a", "0b"), ctx.scheduled());
    }

    @Test
    void intervalIsConfigurable() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file, Duration.ofMillis(100), Duration.ofMillis(250));
        RecordingMonitorContext ctx = context();
        m.start(ctx);
        assertEquals(1, executor().advanceAndRun(Duration.ofMillis(100)));
        TestReplica.setStateVersion(file, "0b");
        assertEquals(0, executor().advanceAndRun(Duration.ofMillis(249)));
        assertEquals(1, executor().advanceAndRun(Duration.ofMillis(1)));
        assertEquals(List.of("0a", "0b"), ctx.scheduled());
        assertEquals(250L, m.status().get("intervalMs"));
        assertEquals(100L, m.status().get("initialDelayMs"));
    }

    @Test
    void schedulesOnlyWhenStateVersionChanges() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);

        m.check();
        m.check();
        assertEquals(List.of("0a"), ctx.scheduled(), "the first read always schedules, an unchanged one never");

        TestReplica.setStateVersion(file, "0b");
        m.check();
        m.check();
        assertEquals(List.of("0a", "0b"), ctx.scheduled());

        // QUIRK kept from upstream: any change schedules, a decrease (only after a reset) too;
        // purging before a lower watermark deletes less.
        TestReplica.setStateVersion(file, "0a");
        m.check();
        assertEquals(List.of("0a", "0b", "0a"), ctx.scheduled());
        assertEquals("0a", m.status().get("lastWatermark"));
    }

    @Test
    void readErrorsAreLoggedAndTheLoopContinues() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.exec(file, "CREATE TABLE unrelated (x)"); // a database, but no _zero.replicationState
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);

        try (LogCapture log = new LogCapture()) {
            assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
            assertTrue(log.text().contains("ERROR"), log.text());
            assertTrue(log.text().contains("Unable to read watermark from replica"), log.text());
            assertTrue(log.text().contains("no such table: _zero.replicationState"), log.text());
            assertTrue(log.text().contains(file.toString()), log.text());
        }
        assertEquals(List.of(), ctx.scheduled());
        assertTrue(String.valueOf(m.status().get("lastError")).contains("no such table"), m.status().toString());
        assertFalse(executor().tasks().get(0).isCancelled(), "the schedule survives the failed check");

        assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS), "the next tick still runs");
        assertEquals(List.of(), ctx.scheduled());

        Files.delete(file);
        TestReplica.create(file, "0c");
        assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
        assertEquals(List.of("0c"), ctx.scheduled(), "recovers once the replica is readable");
        assertNull(m.status().get("lastError"));
        assertTrue(ctx.fatal().isEmpty(), "read errors are never fatal");
    }

    @Test
    void malformedStateVersionIsAnErrorAndNothingIsScheduled() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        TestReplica.exec(file, "UPDATE \"_zero.replicationState\" SET stateVersion = X'0102'");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);

        try (LogCapture log = new LogCapture()) {
            m.check();
            assertTrue(log.text().contains("ERROR") && log.text().contains("is blob, not text"), log.text());
        }
        TestReplica.exec(file, "UPDATE \"_zero.replicationState\" SET stateVersion = 'zzzz'");
        m.check();
        assertTrue(String.valueOf(m.status().get("lastError")).contains("not a state version"), m.status().toString());
        assertEquals(List.of(), ctx.scheduled(), "a garbage watermark must never reach the purge");

        TestReplica.setStateVersion(file, "0b");
        m.check();
        assertEquals(List.of("0b"), ctx.scheduled());
    }

    @Test
    @Timeout(10)
    void stopInterruptsTheWait() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        List<ScheduledExecutorService> real = new CopyOnWriteArrayList<>();
        ReplicaMonitor m = new ReplicaMonitor(file, THIRTY_SECONDS, THIRTY_SECONDS,
                ReplicaMonitor.DEFAULT_STOP_TIMEOUT, clock, () -> {
                    ScheduledExecutorService e = ReplicaMonitor.newExecutor();
                    real.add(e);
                    return e;
                });
        RecordingMonitorContext ctx = context();
        m.start(ctx);
        assertEquals(true, m.status().get("running"));

        m.stop(); // 30 s before the first check is due
        assertTrue(real.get(0).isTerminated(), "stop ends the wait and the thread at once");
        assertEquals(List.of(), ctx.scheduled());
        assertNull(m.status().get("lastReadAt"));
        assertEquals(false, m.status().get("running"));
        m.stop(); // idempotent

        // The same, with the manual scheduler: nothing is due any more however far time moves.
        ReplicaMonitor manual = monitor(file);
        manual.start(ctx);
        manual.stop();
        assertTrue(executor().tasks().get(0).isCancelled());
        assertEquals(0, executor().advanceAndRun(Duration.ofHours(1)));
        assertEquals(List.of(), ctx.scheduled());
        assertThrows(IllegalStateException.class, manual::check, "a stopped monitor has nothing to check");
    }

    @Test
    @Timeout(20)
    void stopWaitsForARunningCheckThenIsBounded() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        BlockingContext ctx = new BlockingContext();
        List<String> events = new CopyOnWriteArrayList<>();
        ReplicaMonitor m = new ReplicaMonitor(file, Duration.ZERO, Duration.ofHours(1),
                ReplicaMonitor.DEFAULT_STOP_TIMEOUT, clock, ReplicaMonitor::newExecutor);
        m.start(ctx);
        ctx.entered.await(); // the first check runs at once and now sits inside scheduleCleanup

        Thread stopper = new Thread(() -> {
            m.stop();
            events.add("stop returned");
        });
        stopper.start();
        awaitWaitingOrDone(stopper);
        assertTrue(events.isEmpty(), "stop must not return while a check is running");
        events.add("check released");
        ctx.release.countDown();
        stopper.join();
        assertEquals(List.of("check released", "stop returned"), events);

        // A check that outlives the bound does not hold stop() up for longer than the bound.
        BlockingContext stuck = new BlockingContext();
        ReplicaMonitor bounded = new ReplicaMonitor(file, Duration.ZERO, Duration.ofHours(1), Duration.ofMillis(50),
                clock, ReplicaMonitor::newExecutor);
        bounded.start(stuck);
        stuck.entered.await();
        bounded.stop();
        assertEquals(false, bounded.status().get("running"));
        stuck.release.countDown();
    }

    private static void awaitWaitingOrDone(Thread t) {
        // No signal exists for "blocked inside awaitTermination"; the thread state is the observable.
        while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.TERMINATED) {
            Thread.onSpinWait();
        }
    }

    // ---- the port's own cases ----

    @Test
    void missingFileIsAWarningAndIsNotCreated() throws Exception {
        Path file = dir.resolve("sub").resolve("zero.db");
        Files.createDirectories(file.getParent());
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);

        try (LogCapture log = new LogCapture()) {
            assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
            assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
            String text = log.text();
            assertTrue(text.contains("WARN") && text.contains(file.toString()) && text.contains("does not exist"), text);
            assertFalse(text.contains("ERROR"), text);
            assertEquals(text.indexOf("does not exist"), text.lastIndexOf("does not exist"),
                    "repeats of the same problem are not warned again: " + text);
        }
        assertFalse(Files.exists(file), "the monitor must never create the replica file");
        try (var listing = Files.list(file.getParent())) {
            assertEquals(List.of(), listing.toList(), "nor -wal, -shm or -journal files");
        }
        assertEquals(List.of(), ctx.scheduled());
        assertTrue(String.valueOf(m.status().get("lastError")).contains(file.toString()));

        TestReplica.create(file, "0a");
        assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
        assertEquals(List.of("0a"), ctx.scheduled(), "the loop went on and picks the file up once it exists");
    }

    @Test
    void retiredContextRefusesAndTheMonitorKeepsRunningWithoutHarm() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);
        ctx.retire();

        assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
        TestReplica.setStateVersion(file, "0b");
        assertEquals(1, executor().advanceAndRun(THIRTY_SECONDS));
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(List.of("0a", "0b"), ctx.refused());
        assertTrue(ctx.fatal().isEmpty());
        assertFalse(executor().tasks().get(0).isCancelled(), "still ticking until the coordinator stops it");
        Map<String, Object> s = m.status();
        assertNull(s.get("lastWatermark"), "nothing was accepted");
        assertEquals("0b", s.get("stateVersion"));
        assertEquals(true, s.get("schedulingRefused"));
        assertNull(s.get("lastError"));
    }

    @Test
    void restartAfterStopStartsWithNoMemory() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext first = context();
        m.start(first);
        m.check();
        assertEquals(List.of("0a"), first.scheduled());
        assertThrows(IllegalStateException.class, () -> m.start(context()), "already started");
        m.stop();

        RecordingMonitorContext second = context();
        m.start(second);
        assertNull(m.status().get("lastWatermark"));
        assertNull(m.status().get("lastReadAt"));
        assertEquals(0, executor().advanceAndRun(Duration.ofMillis(29_999)), "the initial delay applies again");
        assertEquals(1, executor().advanceAndRun(Duration.ofMillis(1)));
        assertEquals(List.of("0a"), second.scheduled(), "the unchanged version is scheduled again to the new context");
        assertEquals(List.of("0a"), first.scheduled(), "and nothing more reaches the old one");
    }

    @Test
    void readableWhileAnotherConnectionWrites() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);
        try (Connection writer = TestReplica.openWriter(file); Statement st = writer.createStatement()) {
            st.execute("BEGIN IMMEDIATE");
            TestReplica.setStateVersion(writer, "0b");
            m.check(); // the writer holds the write lock with an uncommitted change
            assertEquals(List.of("0a"), ctx.scheduled(), "reads the committed version, not blocked by the writer");
            assertNull(m.status().get("lastError"));
            st.execute("COMMIT");

            m.check(); // the committed change sits in the WAL, not yet checkpointed
            assertTrue(Files.exists(dir.resolve("zero.db-wal")));
            assertEquals(List.of("0a", "0b"), ctx.scheduled());
        }
    }

    @Test
    void pausesWhileSnapshotReservationsAreOpen() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        RecordingMonitorContext ctx = context();
        m.start(ctx);
        // The coordinator refuses /snapshot under this strategy, but a reservation opened under a
        // backup strategy survives a swap to this one.
        ctx.reserve("task-2");
        ctx.reserve("task-1");
        try (LogCapture log = new LogCapture()) {
            m.check();
            assertTrue(log.text().contains("watermark cleanup paused for snapshot(s): task-1, task-2"), log.text());
        }
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(List.of("task-1", "task-2"), m.status().get("pausedForSnapshots"));

        ctx.endReservation("task-1");
        m.check();
        assertEquals(List.of(), ctx.scheduled());
        ctx.endReservation("task-2");
        m.check();
        assertEquals(List.of("0a"), ctx.scheduled());
        assertEquals(List.of(), m.status().get("pausedForSnapshots"));
    }

    @Test
    void identityAndStatus() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitor m = monitor(file);
        assertEquals(BackupMonitor.STRATEGY_REPLICA, m.strategy());
        assertEquals(Optional.empty(), m.backupURL());
        Map<String, Object> before = m.status();
        assertEquals(file.toAbsolutePath().toString(), before.get("replicaFile"));
        assertEquals(false, before.get("running"));
        assertNull(before.get("lastWatermark"));

        RecordingMonitorContext ctx = context();
        m.start(ctx);
        clock.advance(Duration.ofSeconds(5));
        m.check();
        Map<String, Object> s = m.status();
        assertEquals(List.of("replicaFile", "running", "initialDelayMs", "intervalMs", "lastWatermark",
                "stateVersion", "lastReadAt", "lastError", "pausedForSnapshots", "schedulingRefused"),
                List.copyOf(s.keySet()));
        assertEquals(true, s.get("running"));
        assertEquals("0a", s.get("lastWatermark"));
        assertEquals(T0.plusSeconds(5).toString(), s.get("lastReadAt"));
        assertNull(s.get("lastError"));
        assertEquals(30_000L, s.get("intervalMs"));
    }

    @Test
    void rejectsInvalidTimings() {
        Path file = dir.resolve("zero.db");
        assertThrows(IllegalArgumentException.class, () -> new ReplicaMonitor(file, Duration.ofMillis(-1),
                THIRTY_SECONDS));
        assertThrows(IllegalArgumentException.class, () -> new ReplicaMonitor(file, THIRTY_SECONDS, Duration.ZERO));
    }

    /** Blocks the first scheduleCleanup until released, ignoring interrupts (as a native read would). */
    private static final class BlockingContext implements BackupMonitorContext {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        private final RecordingMonitorContext delegate = context();

        @Override
        public boolean scheduleCleanup(String watermark) {
            entered.countDown();
            boolean interrupted = false;
            while (true) {
                try {
                    if (release.await(1, TimeUnit.MINUTES)) {
                        break;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return delegate.scheduleCleanup(watermark);
        }

        @Override
        public Duration cleanupDelay() {
            return delegate.cleanupDelay();
        }

        @Override
        public Set<String> openReservations() {
            return delegate.openReservations();
        }

        @Override
        public void purgeBlocked(String reason) {
            delegate.purgeBlocked(reason);
        }

        @Override
        public void backupLag(Duration lag) {
            delegate.backupLag(lag);
        }

        @Override
        public void reportFatal(Throwable cause) {
            delegate.reportFatal(cause);
        }
    }
}

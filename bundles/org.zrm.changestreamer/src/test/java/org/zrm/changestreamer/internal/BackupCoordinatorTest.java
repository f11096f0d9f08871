package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.BackupMonitorContext;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.protocol.subscriber.SnapshotStatus;
import org.zrm.testing.backup.ManualClock;

/** The backup-monitor coordinator's swap-safety rules (spec backup-monitors §8.1), one test each. */
class BackupCoordinatorTest {

    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Target target = new Target();
    private final Reservations reservations = new Reservations();
    private final List<String> runtimeStops = new ArrayList<>();
    // A direct worker: every request is carried out before the call returns, which keeps these
    // rule tests sequential; CoordinatorThreadTest runs a real coordinator thread.
    private final BackupCoordinator coordinator =
            new BackupCoordinator(target, reservations, clock, Runnable::run, Runnable::run, runtimeStops::add);

    private static BackupSettings strategy(String s) {
        return BackupSettings.defaults().withStrategy(s);
    }

    private void ready() {
        coordinator.streamerInitialized();
    }

    @Test
    void noMonitorStartsBeforeTheStreamerHasInitialized() {
        FakeMonitor replica = new FakeMonitor("replica", null);
        coordinator.select(strategy("replica"));
        coordinator.monitorAdded(replica);
        assertNull(replica.context, "not started yet");
        assertEquals("waiting for the change streamer to initialize", coordinator.status().get("purgeBlockedReason"));
        clock.advance(Duration.ofSeconds(95));
        ready();
        assertTrue(replica.context != null);
        assertEquals(Duration.ofSeconds(95), replica.context.cleanupDelay(),
                "the initial cleanup delay is at least the start-up time (upstream initialCleanupDelayMs)");
    }

    @Test
    void onlyTheActiveMonitorMaySchedule() {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        FakeMonitor vfs = new FakeMonitor("vfs", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(strategy("litestream3"));
        BackupMonitorContext old = l3.context;
        assertTrue(old.scheduleCleanup("0a"));
        assertEquals(List.of("0a"), target.scheduled);

        coordinator.select(strategy("vfs"));
        assertEquals(1, l3.stops, "the retired monitor is stopped");
        assertFalse(old.scheduleCleanup("0b"), "a retired monitor's call is refused");
        assertTrue(vfs.context.scheduleCleanup("0c"));
        assertEquals(List.of("0a", "0c"), target.scheduled);
        assertEquals(1L, coordinator.status().get("refusedFromRetired"));
        assertEquals("0c", coordinator.status().get("confirmedWatermark"));
        assertEquals("vfs", coordinator.status().get("active"));
    }

    @Test
    void midSwapTheStatusSaysWhyNothingIsActive() {
        // /status reads without the coordinator's lock, so it can land between retire and start.
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        FakeMonitor vfs = new FakeMonitor("vfs", null);
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(strategy("litestream3"));
        List<Object> seen = new ArrayList<>();
        l3.onStop = () -> seen.add(coordinator.status().get("purgeBlockedReason"));
        coordinator.select(strategy("vfs"));
        assertEquals(List.of("the litestream3 monitor was retired because strategy vfs selected"), seen);
        assertEquals("the vfs monitor has no backup URL: set litestream.backupURL in PID org.zrm.backup.vfs",
                coordinator.status().get("purgeBlockedReason"), "then the reason the new one cannot start");
        assertNull(coordinator.status().get("active"));
    }

    @Test
    void aSwapDropsPendingCleanupsAndTheNewMonitorInheritsNothing() {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        FakeMonitor vfs = new FakeMonitor("vfs", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(strategy("litestream3"));
        int clearsBefore = target.clears;
        coordinator.select(strategy("vfs"));
        assertEquals(clearsBefore + 1, target.clears, "scheduled-but-unexecuted purges are dropped on the swap");
        assertTrue(vfs.context != l3.context, "a fresh context for the new activation");
        assertEquals(1, vfs.starts);
    }

    @Test
    void reservationsLiveInTheCoordinatorAndSurviveTheSwap() throws Exception {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        FakeMonitor vfs = new FakeMonitor("vfs", "file:///backup");
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(strategy("litestream3"));
        FakeReservation r = new FakeReservation("restorer", clock.instant());
        coordinator.reserve("restorer", r);
        assertEquals(List.of(new SnapshotStatus("s3://b/p", "01", "02")), r.statuses);
        assertEquals(Set.of("restorer"), l3.context.openReservations());

        coordinator.select(strategy("vfs"));
        assertFalse(r.isClosed(), "the swap does not cancel the reservation");
        assertEquals(Set.of("restorer"), vfs.context.openReservations(), "the new monitor pauses for it");
        assertEquals("paused for snapshot reservation(s): restorer", coordinator.status().get("purgeBlockedReason"));
        coordinator.endReservation("restorer");
        assertTrue(r.isClosed());
        assertEquals(Set.of(), vfs.context.openReservations());
        assertNull(coordinator.status().get("purgeBlockedReason"));
    }

    @Test
    void theLearnedCleanupDelayCarriesOverAndNeverShrinks() throws Exception {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        FakeMonitor vfs = new FakeMonitor("vfs", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(strategy("litestream3"));
        assertEquals(Duration.ofSeconds(30), l3.context.cleanupDelay());

        coordinator.reserve("t1", new FakeReservation("t1", clock.instant()));
        clock.advance(Duration.ofSeconds(125));
        coordinator.endReservation("t1");
        assertEquals(Duration.ofSeconds(125), l3.context.cleanupDelay(), "extended by the reservation");

        coordinator.reserve("t2", new FakeReservation("t2", clock.instant()));
        clock.advance(Duration.ofSeconds(10));
        coordinator.endReservation("t2");
        assertEquals(Duration.ofSeconds(125), l3.context.cleanupDelay(), "a shorter reservation never shrinks it");

        FakeReservation dropped = new FakeReservation("t3", clock.instant());
        coordinator.reserve("t3", dropped);
        clock.advance(Duration.ofSeconds(500));
        dropped.close(); // the client went away: no delay update (upstream endReservation(id, false))
        assertEquals(Set.of(), l3.context.openReservations());
        assertEquals(Duration.ofSeconds(125), l3.context.cleanupDelay());

        coordinator.select(strategy("vfs"));
        assertEquals(Duration.ofSeconds(125), vfs.context.cleanupDelay(), "carried over to the next monitor");
    }

    @Test
    void theConfiguredFloorAppliesAndALearnedDelayAboveItWins() throws Exception {
        coordinator.select(new BackupSettings("replica", "", false, true, Duration.ofSeconds(1)));
        clock.advance(Duration.ofMillis(1500));
        ready();
        FakeMonitor replica = new FakeMonitor("replica", null);
        coordinator.monitorAdded(replica);
        assertEquals(Duration.ofMillis(1500), replica.context.cleanupDelay(), "start-up time above the 1 s floor");
        coordinator.select(new BackupSettings("replica", "", false, true, Duration.ofSeconds(45)));
        assertEquals(Duration.ofSeconds(45), replica.context.cleanupDelay(), "a raised floor applies at once");
        assertEquals(45_000L, coordinator.status().get("cleanupDelayMs"));
    }

    @Test
    void aMissingStrategyBundleKeepsPurgingPausedAndResumesWhenItAppears() {
        ready();
        FakeMonitor replica = new FakeMonitor("replica", null);
        coordinator.monitorAdded(replica);
        coordinator.select(strategy("vfs"));
        assertEquals(1, replica.stops + (replica.context == null ? 1 : 0), "no replica monitor left running");
        String reason = (String) coordinator.status().get("purgeBlockedReason");
        assertTrue(reason.contains("no vfs backup monitor is registered") && reason.contains("org.zrm.backup.vfs"),
                reason);
        assertNull(coordinator.status().get("active"));

        FakeMonitor vfs = new FakeMonitor("vfs", "s3://b/p");
        coordinator.monitorAdded(vfs);
        assertEquals(1, vfs.starts, "started as soon as the bundle's service appears");
        assertNull(coordinator.status().get("purgeBlockedReason"));

        coordinator.monitorRemoved(vfs);
        assertEquals(1, vfs.stops, "an unregistered monitor is retired");
        assertTrue(((String) coordinator.status().get("purgeBlockedReason")).contains("no vfs backup monitor"));
    }

    @Test
    void anUnconfiguredBackupMonitorIsNotStarted() {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", null);
        coordinator.monitorAdded(l3);
        coordinator.select(strategy("litestream3"));
        assertEquals(0, l3.starts);
        assertEquals("the litestream3 monitor has no backup URL: set litestream.backupURL in PID"
                + " org.zrm.backup.litestream3", coordinator.status().get("purgeBlockedReason"));
    }

    @Test
    void statusShowsTheBackupObject() {
        ready();
        FakeMonitor replica = new FakeMonitor("replica", null);
        coordinator.monitorAdded(replica);
        coordinator.select(strategy("auto"));
        replica.context.scheduleCleanup("0f");
        Map<String, Object> s = coordinator.status();
        assertEquals("auto", s.get("strategy"));
        assertEquals("replica", s.get("effectiveStrategy"));
        assertEquals("replica", s.get("active"));
        assertEquals("0f", s.get("confirmedWatermark"));
        assertTrue(s.containsKey("purgeBlockedReason"));
        assertNull(s.get("purgeBlockedReason"));
        assertEquals(Map.of("k", "v"), s.get("monitor"), "the active monitor's own details");
    }

    // Upstream backup-cleanup-monitor-factory.test.ts, as the auto rule over registered monitors.

    private String autoSelects(String backupURL, boolean v5) {
        ready();
        for (FakeMonitor m : List.of(new FakeMonitor("replica", null), new FakeMonitor("litestream3", "s3://b/p"),
                new FakeMonitor("vfs", "s3://b/p"))) {
            coordinator.monitorAdded(m);
        }
        coordinator.select(new BackupSettings("auto", backupURL, v5, true, Duration.ofSeconds(30)));
        return (String) coordinator.status().get("active");
    }

    @Test
    void returnsTheReplicaMonitorWhenBackupIsNotConfigured() {
        assertEquals("replica", autoSelects("", false));
    }

    @Test
    void createsTheV3BackupMonitorWhenBackupIsConfigured() {
        assertEquals("litestream3", autoSelects("s3://b/p", false));
    }

    @Test
    void createsTheV5BackupMonitorWhenV5BackupIsEnabled() {
        assertEquals("vfs", autoSelects("s3://b/p", true));
    }

    @Test
    void autoFollowsZerosRule() {
        assertEquals("replica", strategy("auto").effectiveStrategy());
        assertEquals("litestream3", new BackupSettings("auto", "s3://b/p", false, true, Duration.ofSeconds(30))
                .effectiveStrategy());
        assertEquals("vfs", new BackupSettings("auto", "s3://b/p", true, true, Duration.ofSeconds(30))
                .effectiveStrategy());
        assertEquals("replica", new BackupSettings("replica", "s3://b/p", true, true, Duration.ofSeconds(30))
                .effectiveStrategy());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> strategy("litestream5"));
        assertEquals("strategy must be one of auto, replica, litestream3, vfs: 'litestream5'", e.getMessage());
    }

    @Test
    void snapshotIsRefusedUnderReplicaAndRetryableWithoutAnActiveMonitor() {
        ready();
        coordinator.monitorAdded(new FakeMonitor("replica", null));
        coordinator.select(strategy("replica"));
        SnapshotUnavailableException e = assertThrows(SnapshotUnavailableException.class,
                () -> coordinator.reserve("t", new FakeReservation("t", clock.instant())));
        assertEquals("replication-manager is not configured with a ZERO_LITESTREAM_BACKUP_URL", e.getMessage());

        coordinator.select(strategy("litestream3"));
        e = assertThrows(SnapshotUnavailableException.class,
                () -> coordinator.reserve("t", new FakeReservation("t", clock.instant())));
        assertTrue(e.getMessage().startsWith("no backup monitor is active (strategy litestream3 is selected"),
                e.getMessage());
        assertEquals(Set.of(), reservations.taskIDs());
    }

    @Test
    void aFailedStatusReadFailsTheReservation() throws Exception {
        ready();
        coordinator.monitorAdded(new FakeMonitor("litestream3", "s3://b/p"));
        coordinator.select(strategy("litestream3"));
        target.stateFailure = new ChangeLogException("change db down");
        FakeReservation r = new FakeReservation("t", clock.instant());
        coordinator.reserve("t", r);
        assertEquals("change db down", r.failure.getMessage());
    }

    @Test
    void aFatalReportStopsThePipelineMarksUnhealthyAndExits() {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.select(strategy("litestream3"));
        IllegalStateException wedged = new IllegalStateException("backup at s3://b/p is wedged");
        l3.context.reportFatal(wedged);
        assertSame(wedged, target.fatal);
        assertFalse(coordinator.healthy());
        assertEquals(List.of("backup monitor litestream3 reported a fatal condition: backup at s3://b/p is wedged"),
                runtimeStops, "the runtime is stopped with the reason (never System.exit)");
        assertFalse(l3.context.scheduleCleanup("10"), "nothing is purged after a fatal report");
        assertEquals("fatal: backup at s3://b/p is wedged", coordinator.status().get("purgeBlockedReason"));
        coordinator.select(strategy("vfs"));
        assertNull(coordinator.status().get("active"), "no monitor is started after a fatal report");
    }

    @Test
    void withoutExitOnFatalTheNodeStaysUpUnhealthy() {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.select(new BackupSettings("litestream3", "", false, false, Duration.ofSeconds(30)));
        l3.context.reportFatal(new IllegalStateException("wedged"));
        assertEquals(List.of(), runtimeStops);
        assertFalse(coordinator.healthy());
        assertTrue(target.fatal != null);
    }

    @Test
    void retiredMonitorsMetricsAreIgnored() {
        ready();
        FakeMonitor l3 = new FakeMonitor("litestream3", "s3://b/p");
        FakeMonitor vfs = new FakeMonitor("vfs", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(strategy("litestream3"));
        BackupMonitorContext old = l3.context;
        old.purgeBlocked("backup-stale");
        old.backupLag(Duration.ofMillis(1500));
        assertEquals(1500L, coordinator.status().get("backupLagMs"));
        assertEquals("the litestream3 monitor's last due cleanup was blocked: backup-stale",
                coordinator.status().get("purgeBlockedReason"));
        old.scheduleCleanup("0a");
        assertNull(coordinator.status().get("purgeBlockedReason"), "cleared once the monitor schedules again");
        coordinator.select(strategy("vfs"));
        old.purgeBlocked("backup-stale");
        assertEquals(Map.of("backup-stale", 1L), coordinator.status().get("purgeBlocked"));
        assertNull(coordinator.status().get("purgeBlockedReason"), "not the new monitor's block");
        assertNull(coordinator.status().get("backupLagMs"), "the lag belongs to the retired activation");
    }

    // ------------------------------------------------------------------ doubles

    static final class Target implements BackupCoordinator.CleanupTarget {
        final List<String> scheduled = new CopyOnWriteArrayList<>();
        int clears;
        Throwable fatal;
        ChangeLogException stateFailure;

        @Override
        public void scheduleCleanup(String watermark) {
            scheduled.add(watermark);
        }

        @Override
        public void clearPendingCleanups() {
            clears++;
        }

        @Override
        public ChangeLogState getChangeLogState() throws ChangeLogException {
            if (stateFailure != null) {
                throw stateFailure;
            }
            return new ChangeLogState("01", "02");
        }

        @Override
        public void stopForFatal(Throwable cause) {
            fatal = cause;
        }
    }

    static final class FakeMonitor implements BackupMonitor {
        private final String strategy;
        private final String url;
        BackupMonitorContext context;
        int starts;
        int stops;
        Runnable onStop = () -> { };

        FakeMonitor(String strategy, String url) {
            this.strategy = strategy;
            this.url = url;
        }

        @Override
        public String strategy() {
            return strategy;
        }

        @Override
        public Optional<String> backupURL() {
            return Optional.ofNullable(url);
        }

        @Override
        public void start(BackupMonitorContext ctx) {
            context = ctx;
            starts++;
        }

        @Override
        public void stop() {
            stops++;
            onStop.run();
        }

        @Override
        public Map<String, Object> status() {
            return Map.of("k", "v");
        }
    }

    private static final class FakeReservation implements SnapshotReservation {
        private final String taskID;
        private final Instant startedAt;
        final List<SnapshotStatus> statuses = new ArrayList<>();
        Throwable failure;
        boolean closed;

        FakeReservation(String taskID, Instant startedAt) {
            this.taskID = taskID;
            this.startedAt = startedAt;
        }

        @Override
        public String taskID() {
            return taskID;
        }

        @Override
        public Instant startedAt() {
            return startedAt;
        }

        @Override
        public boolean sendStatus(SnapshotStatus status) {
            statuses.add(status);
            return true;
        }

        @Override
        public void fail(Throwable cause) {
            failure = cause;
            closed = true;
        }

        @Override
        public void close() {
            closed = true;
        }

        @Override
        public boolean isClosed() {
            return closed;
        }
    }
}

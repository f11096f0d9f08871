package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.backup.BackupMonitor;
import org.zrm.testing.backup.ManualClock;
import org.zrm.testing.backup.RecordingMonitorContext;

/**
 * Zero's {@code litestream3-backup-monitor.test.ts} (spec §2.7), driven check by check with a
 * manual clock, a fake /metrics server and a fake verifier, plus the port's own lifecycle cases.
 * Reservations and the growing cleanup delay live in the coordinator here, so those cases open
 * and end reservations and grow the delay on the context, as the coordinator would.
 */
class Litestream3MonitorTest {

    static final Instant T = Instant.parse("2025-04-24T00:00:00Z");
    static final Duration DELAY = Duration.ofMillis(100_000);
    static final Duration GRACE = Litestream3Settings.DEFAULT_WEDGED_SHUTDOWN_GRACE;

    @TempDir
    Path dir;

    FakeMetricsServer metrics;
    ManualClock clock;
    RecordingMonitorContext ctx;
    AtomicReference<Callable<Instant>> lastActualBackupTime;
    AtomicInteger verifications;
    Path replica;
    Litestream3Monitor monitor;

    @BeforeEach
    void setUp() throws Exception {
        metrics = new FakeMetricsServer();
        metrics.setBody("unconfigured 1");
        clock = new ManualClock(Instant.now());
        ctx = new RecordingMonitorContext(DELAY);
        // By default, verification confirms whatever litestream claims (the last upload is "now").
        lastActualBackupTime = new AtomicReference<>(() -> clock.instant());
        verifications = new AtomicInteger();
        replica = dir.resolve("replica.db");
        TestReplica.create(replica, "00", null);
        monitor = monitor(settings(GRACE, Litestream3Settings.DEFAULT_MAX_METRICS_BYTES));
        monitor.start(ctx);
    }

    @AfterEach
    void tearDown() {
        monitor.stop();
        metrics.close();
    }

    Litestream3Settings settings(Duration grace, int maxBytes) {
        // A one-hour interval: the real scheduler never fires during a test; checks are driven here.
        return new Litestream3Settings("s3://foo/bar", metrics.url(), replica, Duration.ofHours(1), grace,
                Duration.ofSeconds(10), maxBytes);
    }

    Litestream3Monitor monitor(Litestream3Settings settings) {
        return new Litestream3Monitor(settings, signal -> {
            verifications.incrementAndGet();
            return lastActualBackupTime.get().call();
        }, clock);
    }

    /** The sample response of litestream's metrics handler used upstream. */
    void setMetricsResponse(String watermark, String timestamp) {
        metrics.setBody("""
                # HELP litestream_db_size The current size of the real DB
                # TYPE litestream_db_size gauge
                litestream_db_size{db="/tmp/zbugs-sync-replica.db"} 3.183935488e+09
                # HELP litestream_replica_progress The last replicated watermark and time of replication
                # TYPE litestream_replica_progress gauge
                litestream_replica_progress{db="/tmp/zbugs-sync-replica.db",name="file",watermark="%s"} %s
                # HELP litestream_replica_validation_total The number of validations performed
                # TYPE litestream_replica_validation_total counter
                litestream_replica_validation_total{db="/tmp/zbugs-sync-replica.db",name="file",status="error"} 0
                litestream_replica_validation_total{db="/tmp/zbugs-sync-replica.db",name="file",status="ok"} 0
                """.formatted(watermark, timestamp));
    }

    /** Epoch seconds with 9 significant digits, as upstream's {@code (ms / 1000).toPrecision(9)}. */
    static String seconds(Instant t) {
        return String.format(Locale.ROOT, "%.8e", t.toEpochMilli() / 1000.0);
    }

    void at(long offsetMs) {
        clock.set(T.plusMillis(offsetMs));
    }

    // ---- spec §2.7 ------------------------------------------------------------------------------

    @Test
    void schedulesOverdueCleanup() {
        setMetricsResponse("618ocqq8", "1.74545644476593e+09");
        monitor.check();
        assertEquals(List.of("618ocqq8"), ctx.scheduled());
    }

    @Test
    void schedulesNewCleanupAtTheRightTime() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();

        at(99_999);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(100_000); // the cutoff is inclusive
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
    }

    @Test
    void dropsObsoleteWatermarks() {
        at(0);
        setMetricsResponse("618ocqq8", seconds(T));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(10_000);
        setMetricsResponse("618p0bw8", seconds(T.plusMillis(10_000)));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(110_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertEquals(0, monitor.status().get("pendingWatermarks"));
    }

    @Test
    void blocksPurgeWhenActualBackupIsOlderThanClaimed() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        // Litestream claims "now", but the last object really uploaded is 10 minutes old.
        lastActualBackupTime.set(() -> T.minus(Duration.ofMinutes(10)));

        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(0, verifications.get()); // not eligible yet: no verification

        at(100_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(1, verifications.get());

        at(160_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(2, verifications.get());
        assertEquals(2, ctx.purgeBlockedCount("backup-stale"));

        lastActualBackupTime.set(() -> T);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
    }

    @Test
    void purgesOnlyUpToTheVerifiedBackupState() {
        at(0);
        lastActualBackupTime.set(() -> T);
        setMetricsResponse("618ocqq8", seconds(T));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(600_000);
        setMetricsResponse("618p0bw8", seconds(T.plusMillis(600_000)));
        monitor.check();
        assertEquals(List.of("618ocqq8"), ctx.scheduled());

        // Both are past the delay, but the second is not covered by a real upload.
        at(1_200_000);
        monitor.check();
        assertEquals(List.of("618ocqq8"), ctx.scheduled());

        lastActualBackupTime.set(() -> T.plusMillis(600_000));
        monitor.check();
        assertEquals(List.of("618ocqq8", "618p0bw8"), ctx.scheduled());
    }

    @Test
    void blocksPurgeWhenBackupVerificationFails() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        lastActualBackupTime.set(() -> {
            throw new BackupListingException("cannot list backup");
        });
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(100_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(1, verifications.get());
        assertEquals(1, ctx.purgeBlockedCount("verification-failed"));
        assertEquals(0, ctx.purgeBlockedCount("backup-stale"));
        assertEquals("cannot list backup", monitor.status().get("lastVerificationError"));
        assertNull(monitor.status().get("staleSince")); // a failed verification does not start the stale clock

        lastActualBackupTime.set(() -> clock.instant());
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertNull(monitor.status().get("lastVerificationError"));
    }

    @Test
    void skipsVerificationConfirmedByCachedBackupState() {
        at(0);
        setMetricsResponse("618ocqq8", seconds(T));
        monitor.check();

        at(10_000);
        setMetricsResponse("618p0bw8", seconds(T.plusMillis(10_000)));
        monitor.check();

        lastActualBackupTime.set(() -> T.plusMillis(10_000));
        at(100_000);
        monitor.check();
        assertEquals(List.of("618ocqq8"), ctx.scheduled());
        assertEquals(1, verifications.get());

        at(110_000);
        monitor.check();
        assertEquals(List.of("618ocqq8", "618p0bw8"), ctx.scheduled());
        assertEquals(1, verifications.get());
    }

    @Test
    void onlyKeepsOneReservationPerId() {
        // The coordinator holds the reservations (one per task id) and sends the status with this
        // monitor's backup URL; the monitor pauses while any is open.
        assertEquals(Optional.of("s3://foo/bar"), monitor.backupURL());
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();

        ctx.reserve("foo-bar");
        ctx.reserve("bar-foo");
        ctx.reserve("bar-foo"); // a retry replaces the task's earlier reservation
        at(100_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        ctx.endReservation("bar-foo");
        monitor.check();
        assertEquals(List.of(), ctx.scheduled()); // foo-bar is still open

        ctx.endReservation("foo-bar");
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
    }

    @Test
    void pausesCleanupDuringReservation() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        ctx.reserve("foo-bar");

        at(100_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(0, verifications.get()); // paused before anything else

        ctx.endReservation("foo-bar");
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
    }

    @Test
    void extendsCleanupDelayDueToReservation() {
        at(0);
        ctx.reserve("boo-far");

        at(50_000);
        setMetricsResponse("618p0bw8", seconds(T.plusMillis(50_000)));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(125_000); // the reservation was held for 125 s: the coordinator grows the delay
        ctx.endReservation("boo-far");
        ctx.setCleanupDelay(Duration.ofMillis(125_000));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(174_999);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(175_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
    }

    @Test
    void doesNotExtendCleanupDelayOnPrematurelyTerminatedReservation() {
        at(0);
        ctx.reserve("boo-far");

        at(50_000);
        setMetricsResponse("618p0bw8", seconds(T.plusMillis(50_000)));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(125_000); // the client dropped: the coordinator ends it without growing the delay
        ctx.endReservation("boo-far");
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(149_999);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        at(150_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
    }

    @Test
    void abortsInFlightFetchOnStop() throws Exception {
        abortsInFlightFetchOnStop(FakeMetricsServer.Mode.HANG_BEFORE_HEADERS);
    }

    @Test
    void abortsInFlightFetchOnStopWhileTheBodyIsStreaming() throws Exception {
        abortsInFlightFetchOnStop(FakeMetricsServer.Mode.HANG_MID_BODY);
    }

    private void abortsInFlightFetchOnStop(FakeMetricsServer.Mode mode) throws Exception {
        setMetricsResponse("618ocqq8", "1.74545644476593e+09");
        metrics.setMode(mode);
        Thread check = new Thread(monitor::check, "test-check");
        check.start();
        assertTrue(metrics.awaitHanging(), "the fetch reached the server");

        monitor.stop();
        check.join(10_000);

        assertFalse(check.isAlive(), "the check ended when the monitor stopped");
        assertEquals(List.of(), ctx.scheduled());
        Map<String, Object> status = monitor.status();
        assertEquals(false, status.get("running"));
        assertNull(status.get("lastMetricsError"), "an aborted fetch is not a failure");
        assertEquals(0, status.get("pendingWatermarks"));
    }

    @Test
    void shutsDownWhenTheBackupStaysWedgedPastTheGracePeriod() {
        at(0);
        // Litestream keeps claiming a fresh backup; the last real upload is frozen 10 min earlier.
        setMetricsResponse("618p0bw8", seconds(T));
        lastActualBackupTime.set(() -> T.minus(Duration.ofMinutes(10)));

        at(100_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(List.of(), ctx.fatal());

        at(100_000 + GRACE.toMillis() - 1);
        monitor.check();
        assertEquals(List.of(), ctx.fatal());

        at(100_000 + GRACE.toMillis());
        monitor.check();
        assertEquals(1, ctx.fatal().size());
        Throwable fatal = ctx.fatal().get(0);
        assertTrue(fatal.getMessage().startsWith("backup at s3://foo/bar is wedged"), fatal.getMessage());
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(1, ctx.purgeBlockedCount("backup-wedged"));
        assertEquals(3, ctx.purgeBlockedCount("backup-stale"));
        assertEquals(true, monitor.status().get("wedged"));

        // The monitor stopped its own schedule: later checks do nothing.
        int verified = verifications.get();
        at(200_000 + GRACE.toMillis());
        monitor.check();
        assertEquals(verified, verifications.get());
        assertEquals(1, ctx.fatal().size());
    }

    @Test
    void wedgeGracePeriodIsConfigurable() {
        monitor.stop();
        monitor = monitor(settings(Duration.ofMinutes(2), Litestream3Settings.DEFAULT_MAX_METRICS_BYTES));
        monitor.start(ctx);
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        lastActualBackupTime.set(() -> T.minus(Duration.ofMinutes(10)));
        at(100_000);
        monitor.check();
        at(100_000 + 119_999);
        monitor.check();
        assertEquals(List.of(), ctx.fatal());
        at(100_000 + 120_000);
        monitor.check();
        assertEquals(1, ctx.fatal().size());
        assertTrue(ctx.fatal().get(0).getMessage().contains("grace period 120000 ms"), ctx.fatal().get(0).getMessage());
    }

    @Test
    void resetsTheStalenessClockWhenTheBackupRecovers() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        lastActualBackupTime.set(() -> T.minus(Duration.ofMinutes(10)));

        at(100_000);
        monitor.check();
        at(100_000 + GRACE.toMillis() - 1);
        monitor.check();
        assertEquals(List.of(), ctx.fatal());
        assertEquals(List.of(), ctx.scheduled());

        // Recovery before the grace period ends: the purge proceeds and the clock resets.
        lastActualBackupTime.set(() -> T);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertNull(monitor.status().get("staleSince"));

        // A later wedge needs a fresh, continuous grace period.
        setMetricsResponse("618p0bw9", seconds(T.plusMillis(100_000)));
        at(100_000 + GRACE.toMillis() + 100_000);
        monitor.check();
        assertEquals(List.of(), ctx.fatal());
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertEquals(MonitorActivation.iso(clock.instant()), monitor.status().get("staleSince"));
    }

    // ---- metrics edge cases ---------------------------------------------------------------------

    @Test
    void cleanupStillRunsOnCachedStateWhenTheFetchFails() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();

        metrics.setStatus(500);
        metrics.setBody("boom");
        at(100_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertEquals("HTTP 500: boom", monitor.status().get("lastMetricsError"));

        metrics.setStatus(200);
        setMetricsResponse("618p0bw9", seconds(T.plusMillis(100_000)));
        monitor.check();
        assertNull(monitor.status().get("lastMetricsError"));
        assertEquals("618p0bw9", monitor.status().get("newestPendingWatermark"));
    }

    @Test
    void unreachableMetricsEndpointIsWarnedAndRetried() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        metrics.close(); // connection refused from now on

        at(100_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertTrue(String.valueOf(monitor.status().get("lastMetricsError")).contains("ConnectException"),
                String.valueOf(monitor.status().get("lastMetricsError")));
    }

    @Test
    void bodyOverTheBoundIsDiscardedWhole() {
        monitor.stop();
        monitor = monitor(settings(GRACE, 1024));
        monitor.start(ctx);
        at(0);
        metrics.setBody(currentBodyPaddedTo(2048));
        monitor.check();
        assertEquals(0, monitor.status().get("pendingWatermarks"));
        assertTrue(String.valueOf(monitor.status().get("lastMetricsError")).contains("exceeds 1024 bytes"),
                String.valueOf(monitor.status().get("lastMetricsError")));
    }

    private String currentBodyPaddedTo(int size) {
        StringBuilder sb = new StringBuilder("""
                # TYPE litestream_replica_progress gauge
                litestream_replica_progress{name="file",watermark="618p0bw8"} %s
                """.formatted(seconds(T)));
        while (sb.length() < size) {
            sb.append("# padding padding padding padding padding padding padding padding\n");
        }
        return sb.toString();
    }

    @Test
    void malformedMetricsAreRejectedWhole() {
        at(0);
        metrics.setBody("""
                # TYPE litestream_replica_progress gauge
                litestream_replica_progress{name="file",watermark="618p0bw8"} %s
                litestream_replica_progress{name="s3",watermark="618p0bw9} 1
                """.formatted(seconds(T)));
        monitor.check();
        assertEquals(0, monitor.status().get("pendingWatermarks"));
        assertTrue(String.valueOf(monitor.status().get("lastMetricsError")).contains("line 3"),
                String.valueOf(monitor.status().get("lastMetricsError")));
    }

    @Test
    void onlyFiniteProgressGaugesWithAWatermarkCount() {
        at(0);
        metrics.setBody("""
                # HELP litestream_replica_progress The last replicated watermark \\\\ and time\\nof replication
                # TYPE litestream_replica_progress gauge
                litestream_replica_progress{name="file",watermark="0a"} NaN
                litestream_replica_progress{name="file",watermark="0b"} +Inf
                litestream_replica_progress{name="file",watermark="0c"} -Inf
                litestream_replica_progress{name="file",watermark=""} %1$s
                litestream_replica_progress{name="file"} %1$s
                litestream_replica_progress{db="/x \\"y\\"",name="file",watermark="0d",} %1$s 1745452800000
                # TYPE litestream_replica_progress_other counter
                litestream_replica_progress_other{watermark="0z"} %1$s
                litestream_replica_lag{watermark="0y"} %1$s
                """.formatted(seconds(T)));
        monitor.check();
        assertEquals(1, monitor.status().get("pendingWatermarks"));
        assertEquals("0d", monitor.status().get("newestPendingWatermark"));
        assertEquals(MonitorActivation.iso(T), monitor.status().get("latestBackupTime"));
    }

    @Test
    void progressDeclaredWithAnotherTypeIsIgnored() {
        at(0);
        metrics.setBody("""
                # TYPE litestream_replica_progress counter
                litestream_replica_progress{name="file",watermark="0d"} %s
                """.formatted(seconds(T)));
        monitor.check();
        assertEquals(0, monitor.status().get("pendingWatermarks"));
        metrics.setBody("""
                litestream_replica_progress{name="file",watermark="0d"} %s
                """.formatted(seconds(T)));
        monitor.check(); // no TYPE line: untyped, not a gauge
        assertEquals(0, monitor.status().get("pendingWatermarks"));
    }

    @Test
    void firstClaimedTimeWinsAndOlderWatermarksAreIgnored() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        at(50_000);
        setMetricsResponse("618p0bw8", seconds(T.plusMillis(50_000))); // re-exported with a newer time
        monitor.check();
        at(100_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled()); // claimed at T, not T+50 s

        setMetricsResponse("618p0bw7", seconds(T.plusMillis(100_000))); // below the last purged
        monitor.check();
        assertEquals(0, monitor.status().get("pendingWatermarks"));
        assertEquals("618p0bw8", monitor.status().get("lastScheduledWatermark"));
    }

    @Test
    void pendingWatermarksAreBoundedByDroppingTheOldest() {
        at(0);
        StringBuilder body = new StringBuilder("# TYPE litestream_replica_progress gauge\n");
        int n = MonitorActivation.MAX_PENDING_WATERMARKS + 1;
        for (int i = 0; i < n; i++) {
            body.append("litestream_replica_progress{name=\"db").append(i).append("\",watermark=\"")
                    .append(String.format(Locale.ROOT, "w%06d", i)).append("\"} ").append(seconds(T)).append('\n');
        }
        metrics.setBody(body.toString());
        monitor.check();
        assertEquals(MonitorActivation.MAX_PENDING_WATERMARKS, monitor.status().get("pendingWatermarks"));
        at(100_000);
        monitor.check();
        assertEquals(List.of(String.format(Locale.ROOT, "w%06d", n - 1)), ctx.scheduled());
    }

    // ---- backup lag -------------------------------------------------------------------------------

    @Test
    void reportsBackupLagFromTheReplicaWriteTime() throws Exception {
        TestReplica.update(replica, "618p0bw8", T.toEpochMilli() + 5_000);
        at(0);
        monitor.check();
        assertNull(ctx.lastBackupLag()); // no backed-up watermark yet
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        assertEquals(Duration.ofMillis(5_000), ctx.lastBackupLag());

        TestReplica.update(replica, "618p0bw8", T.toEpochMilli() - 5_000); // older than the backup
        monitor.check();
        assertEquals(Duration.ZERO, ctx.lastBackupLag());
    }

    @Test
    void backupLagFailuresAreWarnedNotFatal() throws Exception {
        Files.delete(replica);
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        assertNull(ctx.lastBackupLag());
        assertFalse(Files.exists(replica), "the replica file is never created");
        at(100_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertEquals(List.of(), ctx.fatal());
    }

    // ---- lifecycle ----------------------------------------------------------------------------

    @Test
    void retiredContextRefusesSchedulingAndTheMonitorStopsItsWork() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        ctx.retire();
        at(100_000);
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());
        assertEquals(List.of("618p0bw8"), ctx.refused());
        assertEquals(true, monitor.status().get("retired"));

        int requests = metrics.requests();
        setMetricsResponse("618p0bw9", seconds(T.plusMillis(100_000)));
        at(300_000);
        monitor.check();
        assertEquals(requests, metrics.requests(), "no more fetches");
        assertEquals(List.of("618p0bw8"), ctx.refused());
        assertEquals(List.of(), ctx.fatal());

        monitor.stop();
        RecordingMonitorContext next = new RecordingMonitorContext(DELAY);
        monitor.start(next);
        monitor.check();
        assertEquals(List.of("618p0bw9"), next.scheduled());
        assertEquals(false, monitor.status().get("retired"));
    }

    @Test
    void stopThenStartAgainBeginsWithNoObservations() {
        at(0);
        setMetricsResponse("618p0bw8", seconds(T));
        monitor.check();
        lastActualBackupTime.set(() -> T.plus(Duration.ofMinutes(10))); // would cover later claims too
        at(100_000);
        monitor.check();
        assertEquals(List.of("618p0bw8"), ctx.scheduled());
        assertEquals(1, verifications.get());

        setMetricsResponse("618p0bw9", seconds(T.plusMillis(100_000)));
        monitor.check(); // observed, not yet eligible
        monitor.stop();
        monitor.stop(); // idempotent

        RecordingMonitorContext next = new RecordingMonitorContext(DELAY);
        monitor.start(next);
        assertEquals(true, monitor.status().get("running"));
        assertEquals(0, monitor.status().get("pendingWatermarks"));
        assertNull(monitor.status().get("lastScheduledWatermark"));
        assertNull(monitor.status().get("lastVerifiedUploadTime"));

        metrics.setBody("# TYPE litestream_db_size gauge\nlitestream_db_size 1\n");
        at(300_000);
        monitor.check();
        assertEquals(List.of(), next.scheduled()); // 618p0bw9 was the old activation's observation

        setMetricsResponse("618p0bw9", seconds(T.plusMillis(300_000)));
        monitor.check();
        at(400_000);
        monitor.check();
        assertEquals(List.of("618p0bw9"), next.scheduled());
        assertEquals(2, verifications.get(), "the cached verification was not carried over");
        assertEquals(List.of("618p0bw8"), ctx.scheduled(), "the old context saw nothing more");
    }

    @Test
    void scheduledChecksRunOnTheMonitorsOwnDaemonThreadUntilStopped() throws Exception {
        monitor.stop();
        CountDownLatch verified = new CountDownLatch(1);
        AtomicReference<Thread> checkThread = new AtomicReference<>();
        monitor = new Litestream3Monitor(new Litestream3Settings("s3://foo/bar", metrics.url(), replica,
                Duration.ofMillis(20), GRACE, Duration.ofSeconds(10), 1 << 20), signal -> {
                    checkThread.set(Thread.currentThread());
                    verified.countDown();
                    return clock.instant();
                }, clock);
        setMetricsResponse("618ocqq8", "1.74545644476593e+09");
        monitor.start(ctx);
        assertTrue(verified.await(10, TimeUnit.SECONDS), "a scheduled check verified the backup");
        monitor.stop();
        Thread t = checkThread.get();
        assertEquals(Litestream3Monitor.THREAD_NAME, t.getName());
        assertTrue(t.isDaemon());
        assertEquals(List.of("618ocqq8"), ctx.scheduled());
        t.join(10_000);
        assertFalse(t.isAlive(), "stop ended the monitor's thread");
    }

    @Test
    void startTwiceIsRefused() {
        assertThrows(IllegalStateException.class, () -> monitor.start(new RecordingMonitorContext(DELAY)));
    }

    @Test
    void anEmptyBackupURLIsUnconfiguredAndCannotStart() {
        Litestream3Monitor unconfigured = new Litestream3Monitor(new Litestream3Settings("", metrics.url(), replica,
                Duration.ofHours(1), GRACE, Duration.ofSeconds(10), 1024), signal -> T, clock);
        assertEquals(Optional.empty(), unconfigured.backupURL());
        assertEquals(BackupMonitor.STRATEGY_LITESTREAM3, unconfigured.strategy());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> unconfigured.start(new RecordingMonitorContext(DELAY)));
        assertTrue(e.getMessage().contains("litestream.backupURL"), e.getMessage());
        unconfigured.stop(); // a no-op
    }

    @Test
    void statusMasksCredentialsInTheBackupURL() {
        Litestream3Monitor m = new Litestream3Monitor(new Litestream3Settings("s3://key:secret@bucket/path",
                URI.create("http://127.0.0.1:1/metrics"), replica, Duration.ofHours(1), GRACE, Duration.ofSeconds(1),
                1024), signal -> T, clock);
        assertEquals("s3://key:****@bucket/path", m.status().get("backupURL"));
        assertEquals(Optional.of("s3://key:secret@bucket/path"), m.backupURL());
    }
}

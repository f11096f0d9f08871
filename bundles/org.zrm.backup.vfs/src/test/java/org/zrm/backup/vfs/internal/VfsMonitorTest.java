package org.zrm.backup.vfs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.backup.vfs.internal.FakeSource.watermark;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;
import org.zrm.testing.backup.ManualClock;
import org.zrm.testing.backup.RecordingMonitorContext;

/**
 * {@code vfs-backup-monitor.test.ts} (spec §3.4, §3.5): cleanup delay 100 000 ms, probe interval
 * 30 000 ms (the timer never fires during a test; checks are run directly), a scripted source.
 */
class VfsMonitorTest {

    private static final Instant T = Instant.parse("2025-04-24T00:00:00Z");
    private static final long TIME = T.toEpochMilli();

    private final ManualClock clock = new ManualClock(T);
    private final RecordingMonitorContext ctx = new RecordingMonitorContext(Duration.ofMillis(100_000));
    private final FakeSource source = new FakeSource();
    private final List<WatermarkSource> created = new ArrayList<>();
    private final VfsMonitor monitor = new VfsMonitor("s3://foo/bar", () -> {
        created.add(source);
        return source;
    }, Duration.ofMillis(30_000), clock);

    @AfterEach
    void stop() {
        monitor.stop();
    }

    @Test
    void schedulesCleanupFromTheVfsVisibleWatermarkAfterTheCleanupDelay() {
        source.returns(watermark("04", TIME));
        monitor.start(ctx);

        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        clock.set(T.plusMillis(99_999));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals(List.of("04"), ctx.scheduled());

        monitor.stop();
        assertEquals(1, source.closes.get());
        monitor.stop();
        assertEquals(1, source.closes.get(), "stop is idempotent");
    }

    @Test
    void blocksCleanupWhenTheVfsProbeFails() {
        source.returns(watermark("04", TIME)).fails(new IOException("boom")).returns(watermark("04", TIME));
        monitor.start(ctx);
        monitor.check();

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled(), "04 is due, but the probe failed");
        assertEquals(1, ctx.purgeBlockedCount("vfs-probe-failed"));
        assertEquals("boom", monitor.status().get("lastProbeError"));

        monitor.check();
        assertEquals(List.of("04"), ctx.scheduled());
        assertNull(monitor.status().get("lastProbeError"));
    }

    @Test
    void doesNotScheduleACachedWatermarkNewerThanTheCurrentVfsRead() {
        source.returns(watermark("05", TIME)).returns(watermark("04", TIME));
        monitor.start(ctx);
        monitor.check();

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals(List.of("04"), ctx.scheduled());

        source.returns(watermark("05", TIME + 100_000));
        monitor.check();
        assertEquals(List.of("04", "05"), ctx.scheduled(), "05 ages from its first observation, at T");
    }

    @Test
    void pausesCleanupDuringSnapshotReservation() {
        source.returns(watermark("04", TIME));
        monitor.start(ctx);
        monitor.check();
        ctx.reserve("foo-bar");

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        ctx.endReservation("foo-bar");
        monitor.check();
        assertEquals(List.of("04"), ctx.scheduled());
    }

    @Test
    void readsTheCleanupDelayAtEveryCheck() {
        source.returns(watermark("04", TIME + 50_000));
        monitor.start(ctx);
        clock.set(T.plusMillis(50_000));
        monitor.check();
        // a reservation held for 125 s grew the delay in the coordinator
        ctx.setCleanupDelay(Duration.ofMillis(125_000));

        clock.set(T.plusMillis(174_999));
        monitor.check();
        assertEquals(List.of(), ctx.scheduled());

        clock.set(T.plusMillis(175_000));
        monitor.check();
        assertEquals(List.of("04"), ctx.scheduled());
    }

    @Test
    void schedulesOnlyTheNewestEligibleWatermark() {
        source.returns(watermark("04", TIME)).returns(watermark("05", TIME + 10_000));
        monitor.start(ctx);
        monitor.check();
        clock.set(T.plusMillis(10_000));
        monitor.check();

        clock.set(T.plusMillis(110_000));
        monitor.check();
        assertEquals(List.of("05"), ctx.scheduled(), "04 is never scheduled on its own");

        source.returns(watermark("04", TIME + 200_000));
        clock.set(T.plusMillis(400_000));
        monitor.check();
        assertEquals(List.of("05"), ctx.scheduled(), "nothing at or below the last scheduled one again");
    }

    @Test
    void schedulesTheNewestAgedWatermarkWhileNewerOnesAge() {
        source.returns(watermark("04", TIME)).returns(watermark("05", TIME + 60_000));
        monitor.start(ctx);
        monitor.check();
        clock.set(T.plusMillis(60_000));
        monitor.check();

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals(List.of("04"), ctx.scheduled());
        assertEquals(1, monitor.status().get("ageingWatermarks"));
        assertEquals("05", monitor.status().get("newestAgeingWatermark"));

        clock.set(T.plusMillis(160_000));
        monitor.check();
        assertEquals(List.of("04", "05"), ctx.scheduled());
    }

    @Test
    void reportsBackupLagFromEachRead() {
        source.returns(new BackupWatermark("04", TIME - 2_500, "07", 0, TIME))
                .returns(new BackupWatermark("04", null, "07", 0, TIME + 1))
                .returns(new BackupWatermark("05", TIME + 10, "07", 0, TIME + 2));
        monitor.start(ctx);

        monitor.check();
        assertEquals(Duration.ofMillis(2_500), ctx.lastBackupLag());

        monitor.check();
        assertEquals(Duration.ofMillis(2_500), ctx.lastBackupLag(), "no writeTimeMs: nothing reported");

        monitor.check();
        assertEquals(Duration.ZERO, ctx.lastBackupLag(), "never negative");
    }

    @Test
    void aRestartedMonitorStartsWithNoObservations() {
        source.returns(watermark("04", TIME));
        monitor.start(ctx);
        monitor.check();
        monitor.stop();
        assertEquals(1, source.closes.get());

        RecordingMonitorContext next = new RecordingMonitorContext(Duration.ofMillis(100_000));
        clock.set(T.plusMillis(100_000));
        source.returns(watermark("04", TIME + 100_000));
        monitor.start(next);
        monitor.check();
        assertEquals(List.of(), next.scheduled(), "04 ages anew from this activation's own observation");
        assertEquals(2, created.size(), "a source per activation");

        monitor.stop();
        assertEquals(2, source.closes.get(), "closed once per activation");
    }

    @Test
    void aRetiredContextRefusesTheCleanup() {
        source.returns(watermark("04", TIME));
        monitor.start(ctx);
        monitor.check();
        ctx.retire();

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals(List.of("04"), ctx.refused());
        assertEquals(List.of(), ctx.scheduled());
    }

    @Test
    void aProbeEndedByStopIsNotAFailure() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        WatermarkSource blocking = new WatermarkSource() {
            @Override
            public BackupWatermark readWatermark() throws Exception {
                reading.countDown();
                assertTrue(closed.await(20, TimeUnit.SECONDS));
                throw new IOException("backup watermark reader exited (code=143)");
            }

            @Override
            public void close() {
                closed.countDown();
            }
        };
        VfsMonitor stopping = new VfsMonitor("s3://foo/bar", () -> blocking, Duration.ofMillis(30_000), clock);
        stopping.start(ctx);
        CompletableFuture<Void> check = CompletableFuture.runAsync(stopping::check);
        assertTrue(reading.await(20, TimeUnit.SECONDS));

        stopping.stop();
        check.get(20, TimeUnit.SECONDS);

        assertEquals(0, ctx.purgeBlockedCount("vfs-probe-failed"));
    }

    @Test
    void checksPeriodically() throws Exception {
        // checks never overlap: once the third read starts, the first two checks have finished
        CountDownLatch threeReads = new CountDownLatch(3);
        WatermarkSource counting = new WatermarkSource() {
            @Override
            public BackupWatermark readWatermark() throws IOException {
                threeReads.countDown();
                throw new IOException("unreachable"); // a failing check must not end the schedule
            }

            @Override
            public void close() {
            }
        };
        VfsMonitor periodic = new VfsMonitor("s3://foo/bar", () -> counting, Duration.ofMillis(10), clock);
        periodic.start(ctx);
        try {
            assertTrue(threeReads.await(20, TimeUnit.SECONDS));
        } finally {
            periodic.stop();
        }
        assertTrue(ctx.purgeBlockedCount("vfs-probe-failed") >= 2);
    }

    @Test
    void lifecycleAndIdentity() {
        assertEquals(BackupMonitor.STRATEGY_VFS, monitor.strategy());
        assertEquals(Optional.of("s3://foo/bar"), monitor.backupURL());
        assertEquals(false, monitor.status().get("running"));

        monitor.start(ctx);
        assertEquals(true, monitor.status().get("running"));
        assertThrows(IllegalStateException.class, () -> monitor.start(ctx));

        VfsMonitor unconfigured = new VfsMonitor(" ", () -> source, Duration.ofMillis(30_000), clock);
        assertEquals(Optional.empty(), unconfigured.backupURL());
        assertEquals("vfs backup monitor: litestream.backupURL is not configured",
                assertThrows(IllegalStateException.class, () -> unconfigured.start(ctx)).getMessage());
    }

    @Test
    void statusDescribesTheObservations() {
        source.returns(watermark("04", TIME));
        monitor.start(ctx);
        monitor.check();

        Map<String, Object> status = monitor.status();
        assertEquals("s3://foo/bar", status.get("backupURL"));
        assertEquals("04", status.get("latestBackupWatermark"));
        assertEquals(T.toString(), status.get("latestObservedAt"));
        assertEquals(1, status.get("ageingWatermarks"));
        assertNull(status.get("lastScheduledWatermark"));

        clock.set(T.plusMillis(100_000));
        monitor.check();
        assertEquals("04", monitor.status().get("lastScheduledWatermark"));
        assertEquals(0, monitor.status().get("ageingWatermarks"));
    }
}

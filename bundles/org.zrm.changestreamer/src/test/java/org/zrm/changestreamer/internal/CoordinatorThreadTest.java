package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.testing.backup.ManualClock;

/**
 * The coordinator on a real thread of its own: the callbacks that Configuration Admin and
 * Declarative Services make never wait for a swap, a purge or a monitor.
 */
@Timeout(60) // a callback that waited for the purge would hang the test instead of failing it
class CoordinatorThreadTest {

    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-coordinator"));
    private final SlowPurgeTarget target = new SlowPurgeTarget();
    private final List<String> runtimeStops = new ArrayList<>();
    private final BackupCoordinator coordinator = new BackupCoordinator(target, new Reservations(),
            new ManualClock(Instant.parse("2026-01-01T00:00:00Z")), Runnable::run, worker, runtimeStops::add);

    @AfterEach
    void stopWorker() throws InterruptedException {
        target.purgeMayFinish.countDown();
        worker.shutdownNow();
        worker.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** Waits until every task queued on the worker so far has run. */
    private void settle() throws Exception {
        worker.submit(() -> { }).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aSwapDuringASlowPurgeReturnsAtOnceAndTakesEffectWhenThePurgeEnds() throws Exception {
        BackupCoordinatorTest.FakeMonitor l3 = new BackupCoordinatorTest.FakeMonitor("litestream3", "s3://b/p");
        BackupCoordinatorTest.FakeMonitor vfs = new BackupCoordinatorTest.FakeMonitor("vfs", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.monitorAdded(vfs);
        coordinator.select(BackupSettings.defaults().withStrategy("litestream3"));
        coordinator.streamerInitialized();
        settle();
        assertEquals("litestream3", coordinator.status().get("active"));

        // A purge is running: dropping the pending cleanups has to wait for it.
        target.purgeRunning = true;
        coordinator.select(BackupSettings.defaults().withStrategy("vfs"));
        // select() returned although the purge holds the swap: the caller (ConfigAdmin's thread) is free.
        assertTrue(target.clearStarted.await(10, TimeUnit.SECONDS), "the swap started on the coordinator thread");
        assertEquals(0, vfs.starts, "the new monitor waits for the purge in flight");
        assertEquals("vfs", coordinator.status().get("strategy"), "the selection is visible at once");
        // More requests while the worker is blocked are accepted at once, too.
        coordinator.select(BackupSettings.defaults().withStrategy("vfs"));
        coordinator.monitorRemoved(new BackupCoordinatorTest.FakeMonitor("replica", null));

        target.purgeMayFinish.countDown();
        settle();
        settle(); // the coalesced follow-up reconcile
        assertEquals(1, vfs.starts, "the swap took effect once the purge had finished");
        assertEquals(1, l3.stops);
        assertEquals("vfs", coordinator.status().get("active"));
        assertFalse(l3.context.scheduleCleanup("0z"), "the retired monitor cannot schedule");
    }

    @Test
    void aFatalReportIsUnhealthyAtOnceAndStopsTheRuntimeFromTheCoordinatorThread() throws Exception {
        BackupCoordinatorTest.FakeMonitor l3 = new BackupCoordinatorTest.FakeMonitor("litestream3", "s3://b/p");
        coordinator.monitorAdded(l3);
        coordinator.select(BackupSettings.defaults().withStrategy("litestream3"));
        coordinator.streamerInitialized();
        settle();
        target.purgeRunning = true; // the fatal stop drops pending cleanups, which waits for the purge
        l3.context.reportFatal(new IllegalStateException("wedged"));
        assertFalse(coordinator.healthy(), "unhealthy before the pipeline has stopped");
        assertFalse(l3.context.scheduleCleanup("0y"));
        assertTrue(target.clearStarted.await(10, TimeUnit.SECONDS));
        assertNull(target.fatal, "the pipeline stop waits on the coordinator thread, not on the monitor's");
        target.purgeMayFinish.countDown();
        settle();
        assertTrue(target.fatal != null);
        assertEquals(List.of("backup monitor litestream3 reported a fatal condition: wedged"), runtimeStops);
    }

    @Test
    void closeRunsAfterQueuedWorkAndStopsTheActiveMonitor() throws Exception {
        BackupCoordinatorTest.FakeMonitor replica = new BackupCoordinatorTest.FakeMonitor("replica", null);
        coordinator.monitorAdded(replica);
        coordinator.select(BackupSettings.defaults().withStrategy("replica"));
        coordinator.streamerInitialized();
        coordinator.close(Duration.ofSeconds(10));
        assertEquals(1, replica.starts);
        assertEquals(1, replica.stops);
    }

    /** A change-streamer side whose pending-cleanup drop waits for a purge in flight, as the Purger's does. */
    private static final class SlowPurgeTarget implements BackupCoordinator.CleanupTarget {
        volatile boolean purgeRunning;
        final CountDownLatch clearStarted = new CountDownLatch(1);
        final CountDownLatch purgeMayFinish = new CountDownLatch(1);
        volatile Throwable fatal;

        @Override
        public void scheduleCleanup(String watermark) {}

        @Override
        public void clearPendingCleanups() {
            if (purgeRunning) {
                clearStarted.countDown();
                try {
                    purgeMayFinish.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public ChangeLogState getChangeLogState() throws ChangeLogException {
            return new ChangeLogState("01", "02");
        }

        @Override
        public void stopForFatal(Throwable cause) {
            fatal = cause;
        }
    }
}

package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLog;

/** The purge queue's interplay with a backup-monitor swap. */
class PurgerTest {

    @Test
    void clearWaitsForThePurgeInFlightAndNothingOldIsPurgedAfterIt() throws Exception {
        CountDownLatch purging = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> purged = new java.util.concurrent.CopyOnWriteArrayList<>();
        ChangeLog log = (ChangeLog) Proxy.newProxyInstance(ChangeLog.class.getClassLoader(),
                new Class<?>[] {ChangeLog.class}, (proxy, method, args) -> {
                    if (method.getName().equals("purgeBefore")) {
                        purged.add((String) args[0]);
                        purging.countDown();
                        release.await(10, TimeUnit.SECONDS);
                        return 3L;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        ManualTimer timer = new ManualTimer();
        Purger purger = new Purger(log, "task", () -> List.of("09"), new Reservations(), timer, Duration.ofSeconds(30));
        purger.schedule("05");
        purger.schedule("07");
        CompletableFuture<Void> cycle = CompletableFuture.runAsync(timer::runNext);
        assertTrue(purging.await(10, TimeUnit.SECONDS));

        CompletableFuture<Void> clear = CompletableFuture.runAsync(purger::clear);
        // A clear() that did not wait would be done well within this bound.
        assertThrows(TimeoutException.class, () -> clear.get(300, TimeUnit.MILLISECONDS),
                "clear() does not return while the purge runs");
        release.countDown();
        clear.get(10, TimeUnit.SECONDS);
        cycle.get(10, TimeUnit.SECONDS);
        assertEquals(List.of(), purger.pending(), "the retired monitor's other watermark is dropped");
        assertEquals(0, timer.scheduled(), "and no cycle is left to purge it");
        assertEquals(List.of("05"), purged);
    }

    @Test
    void aDryRunCountsWhatTheNextCycleWouldDeleteAndSaysWhyItWouldNot() throws Exception {
        List<String> counted = new java.util.concurrent.CopyOnWriteArrayList<>();
        ChangeLog log = (ChangeLog) Proxy.newProxyInstance(ChangeLog.class.getClassLoader(),
                new Class<?>[] {ChangeLog.class}, (proxy, method, args) -> {
                    if (method.getName().equals("countPurgeable")) {
                        counted.add((String) args[0]);
                        return 12L;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        List<String> acks = new java.util.concurrent.CopyOnWriteArrayList<>();
        Purger purger = new Purger(log, "task", () -> List.copyOf(acks), new Reservations(), new ManualTimer(),
                Duration.ofSeconds(30));
        assertEquals(new org.zrm.operator.PurgePreview(null, "no backed-up watermark is waiting to be purged", 0, null),
                purger.preview());
        purger.schedule("05");
        assertEquals("no subscriber to confirm the cleanup", purger.preview().blockedBy());
        acks.add("04");
        assertEquals("a subscriber is behind the backup (acked 04)", purger.preview().blockedBy());
        acks.clear();
        acks.add("07");
        assertEquals(new org.zrm.operator.PurgePreview("05", null, 12, "07"), purger.preview());
        assertEquals(List.of("05"), counted, "only an unblocked purge is counted, to the bound the purge would use");
        assertEquals(List.of("05"), purger.pending(), "a dry run purges nothing");
    }
}

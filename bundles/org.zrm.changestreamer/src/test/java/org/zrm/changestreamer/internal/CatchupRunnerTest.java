package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupRequest;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.protocol.json.ProtocolCodec;

/** The catch-up pool is bounded: what happens to a catch-up that finds it full, or shut down. */
class CatchupRunnerTest {

    private final List<Throwable> failures = new ArrayList<>();

    private CatchupRunner.Request request(String id) {
        Outbox outbox = new Outbox(id, 1 << 20, () -> { }, failures::add);
        Subscriber sub = new Subscriber(6, id, ReplicatorMode.SERVING, "01", "02", outbox, () -> "[\"status\",{}]",
                new ProtocolCodec(), 1 << 20);
        return new CatchupRunner.Request(sub, "01");
    }

    private static final class Snapshot implements CatchupSnapshot {
        int closes;

        @Override
        public String lastWatermark() {
            return "02";
        }

        @Override
        public CatchupCursor catchup(String replicaVersion, String watermark) {
            throw new UnsupportedOperationException("not reached in these tests");
        }

        @Override
        public void close() {
            closes++;
        }
    }

    @Test
    void aCatchupThatFindsTheQueueFullFailsAtOnceAndReleasesItsSnapshot() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1));
        try {
            pool.execute(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            pool.execute(() -> { }); // the one queue slot
            CatchupRunner runner = new CatchupRunner(pool, 1 << 20, (s, e) -> { });
            Snapshot snapshot = new Snapshot();
            List<CatchupRequest> requests = List.of(request("a"), request("b"));
            runner.startCatchup(snapshot, requests);
            assertEquals(1, snapshot.closes, "the pinned snapshot (a pooled connection) is released");
            assertEquals(2, failures.size(), "both subscribers are ended, to reconnect: " + failures);
            assertTrue(failures.get(0).getMessage().contains("too many catch-ups are waiting"), "" + failures);
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
    }

    @Test
    void aCatchupAfterShutdownSaysSo() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1));
        pool.shutdown();
        Snapshot snapshot = new Snapshot();
        new CatchupRunner(pool, 1 << 20, (s, e) -> { }).startCatchup(snapshot, List.of(request("a")));
        assertEquals(1, snapshot.closes);
        assertEquals("change streamer is shutting down", failures.get(0).getMessage());
    }
}

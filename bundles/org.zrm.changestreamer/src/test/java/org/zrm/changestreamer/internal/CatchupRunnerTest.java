package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupRequest;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The catch-up pool is bounded: what happens to a catch-up that finds it full, or shut down; and
 * how the reader paces on a slow client.
 */
class CatchupRunnerTest {

    private final List<Throwable> failures = new ArrayList<>();

    private CatchupRunner.Request request(String id) {
        Outbox outbox = new Outbox(id, 1 << 20, () -> { }, failures::add);
        Subscriber sub = new Subscriber(6, id, ReplicatorMode.SERVING, "01", "02", outbox, () -> "[\"status\",{}]",
                new ProtocolCodec(), 1 << 20);
        return new CatchupRunner.Request(sub, "01", "02");
    }

    private static class Snapshot implements CatchupSnapshot {
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
            CatchupRunner runner = new CatchupRunner(pool, 1 << 20, (s, e) -> { }, s -> { });
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
        new CatchupRunner(pool, 1 << 20, (s, e) -> { }, s -> { }).startCatchup(snapshot, List.of(request("a")));
        assertEquals(1, snapshot.closes);
        assertEquals("change streamer is shutting down", failures.get(0).getMessage());
    }

    private static String insert(String watermark, int pos, String padding) {
        return "{\"tag\":\"insert\",\"at\":\"" + watermark + "/" + pos + "\",\"p\":\"" + padding + "\"}";
    }

    /** A cursor over {@code batches} batches of {@code size} inserts at watermarks "03", "04", …. */
    private static CatchupCursor inserts(int batches, int size, int rowChars) {
        String padding = "x".repeat(rowChars);
        List<List<ChangeLogEntry>> all = new ArrayList<>();
        for (int b = 0; b < batches; b++) {
            String w = String.format("%02d", 3 + b);
            List<ChangeLogEntry> batch = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                batch.add(new ChangeLogEntry(w, i + 1, "insert", insert(w, i + 1, padding), null));
            }
            all.add(batch);
        }
        return cursor(all);
    }

    /** A cursor that serves {@code batches} in order, then nothing, from the start it was asked for. */
    private static CatchupCursor cursor(List<List<ChangeLogEntry>> batches) {
        Iterator<List<ChangeLogEntry>> next = batches.iterator();
        return new CatchupCursor() {
            @Override
            public List<ChangeLogEntry> nextBatch() {
                return next.hasNext() ? next.next() : List.of();
            }

            @Override
            public boolean foundStart() {
                return true;
            }

            @Override
            public void close() {
            }
        };
    }

    /**
     * Catch-up paces on the subscriber: it holds the outbox near half the bound (one message
     * over at most) however slowly the client consumes, and delivers every change in order, the
     * untracked ones included.
     */
    @Test
    void catchupHoldsTheOutboxNearHalfTheBoundAndDeliversEveryChangeInOrder() throws Exception {
        long bound = 4_000;
        Outbox outbox = new Outbox("slow", bound, () -> { }, failures::add);
        Subscriber sub = new Subscriber(6, "slow", ReplicatorMode.SERVING, "01", "01", outbox, () -> "[\"status\",{}]",
                new ProtocolCodec(), bound);
        CatchupSnapshot snapshot = new Snapshot() {
            @Override
            public String lastWatermark() {
                return "07";
            }

            @Override
            public CatchupCursor catchup(String replicaVersion, String watermark) {
                return inserts(5, 40, 80);
            }
        };
        AtomicReference<Thread> reader = new AtomicReference<>();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1), r -> {
            Thread t = new Thread(r, "catchup-reader");
            reader.set(t);
            return t;
        });
        try {
            new CatchupRunner(pool, bound, (s, e) -> { }, s -> { }).startCatchup(snapshot,
                    List.of(new CatchupRunner.Request(sub, "01", "01")));
            List<String> seen = new ArrayList<>();
            long largest = 0;
            while (seen.size() < 200) {
                // The slowest client there is: it takes a message only once the reader has stopped
                // to wait for it (there is no signal for "parked" other than the thread's state).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (reader.get() == null || reader.get().getState() != Thread.State.WAITING) {
                    assertTrue(System.nanoTime() < deadline, "the catch-up reader never waited for the client");
                    Thread.onSpinWait();
                }
                largest = Math.max(largest, outbox.bufferedBytes());
                SubscriptionMessage m = outbox.take();
                assertTrue(m != null, "the subscription ended after " + seen.size() + " changes, buffered " + largest
                        + ": " + failures);
                if (m.json().contains("\"insert\"")) {
                    seen.add(m.json());
                }
                m.consumed();
            }
            List<String> expected = new ArrayList<>();
            for (int b = 0; b < 5; b++) {
                for (int i = 1; i <= 40; i++) {
                    expected.add("[\"data\"," + insert(String.format("%02d", 3 + b), i, "x".repeat(80)) + "]");
                }
            }
            assertEquals(expected, seen);
            long oneMessage = seen.stream().mapToLong(String::length).max().orElseThrow();
            assertTrue(largest <= bound / 2 + oneMessage, "buffered " + largest + " against half the bound " + bound / 2);
            assertTrue(largest > bound / 4, "the reader never filled the outbox to a quarter of the bound: " + largest);
            assertTrue(failures.isEmpty(), "" + failures);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A cursor over whole transactions {@code watermarks}, each a begin, one insert and a commit, in one batch. */
    private static CatchupCursor transactions(String... watermarks) {
        List<ChangeLogEntry> batch = new ArrayList<>();
        for (String w : watermarks) {
            batch.add(new ChangeLogEntry(w, 0, "begin", "{\"tag\":\"begin\"}", null));
            batch.add(new ChangeLogEntry(w, 1, "insert", insert(w, 1, ""), null));
            batch.add(new ChangeLogEntry(w, 2, "commit", "{\"tag\":\"commit\"}", null));
        }
        return cursor(List.of(batch));
    }

    /**
     * A snapshot of whole transactions {@code watermarks}, ending at the last; each catch-up from
     * it adds the watermark it started from to {@code froms}.
     */
    private static CatchupSnapshot transactionsSnapshot(List<String> froms, String... watermarks) {
        return new Snapshot() {
            @Override
            public String lastWatermark() {
                return watermarks[watermarks.length - 1];
            }

            @Override
            public CatchupCursor catchup(String replicaVersion, String watermark) {
                froms.add(watermark);
                return transactions(watermarks);
            }
        };
    }

    /**
     * A subscriber whose backlog went over its bound while it caught up is not disconnected, nor
     * taken live with a hole: the round ends at its snapshot's last commit, and the runner asks for
     * another round from there. The next round, from that watermark, then takes it live.
     */
    @Test
    void aRoundWhoseBacklogWasDroppedAsksForAnotherRoundFromWhereItEnded() throws Exception {
        long bound = 1_000;
        Outbox outbox = new Outbox("late", bound, () -> { }, failures::add);
        Subscriber sub = new Subscriber(6, "late", ReplicatorMode.SERVING, "01", "01", outbox, () -> "[\"status\",{}]",
                new ProtocolCodec(), bound);
        outbox.append("[\"status\",{\"earlier\":1}]", null, null);
        outbox.take().consumed(); // a client that reads, if more slowly than the stream goes
        String big = "[\"data\",{\"tag\":\"insert\",\"p\":\"" + "x".repeat(600) + "\"}]";
        sub.send(new WatermarkedChange("05", "insert", big));
        sub.send(new WatermarkedChange("05", "insert", big)); // over the bound: the backlog is dropped
        assertTrue(failures.isEmpty(), "not disconnected: " + failures);
        assertEquals(List.of(), sub.backlogSnapshot());

        List<String> froms = new ArrayList<>();
        List<Subscriber> again = new ArrayList<>();
        CountDownLatch asked = new CountDownLatch(1);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1));
        try {
            CatchupRunner runner = new CatchupRunner(pool, bound, (s, e) -> { }, s -> {
                again.add(s);
                asked.countDown();
            });
            runner.startCatchup(transactionsSnapshot(froms, "03", "04"), List.of(new CatchupRunner.Request(sub, "01", "01")));
            List<String> got = new ArrayList<>();
            while (asked.getCount() > 0 || outbox.pendingMessages() > 0) {
                SubscriptionMessage m = outbox.poll();
                if (m != null) {
                    got.add(m.json());
                    m.consumed();
                } else {
                    Thread.onSpinWait();
                }
            }
            assertEquals(List.of(sub), again);
            assertEquals(List.of("01"), froms);
            assertEquals(7, got.size(), "the status and two transactions: " + got);
            assertTrue(sub.isCatchingUp(), "not live: the live changes since the drop are in the change log only");
            assertEquals("04", sub.watermark(), "the next round starts at the last commit sent");

            // The next round, as the registry starts it: a fresh backlog, a request from the watermark.
            sub.startRound();
            sub.send(new WatermarkedChange("06", "begin", "[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"06\"}]"));
            new CatchupRunner(pool, bound, (s, e) -> { }, s -> { }).startCatchup(transactionsSnapshot(froms, "05"),
                    List.of(new CatchupRunner.Request(sub, "01", sub.watermark())));
            List<String> tags = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (tags.size() < 4) {
                assertTrue(System.nanoTime() < deadline, "second round delivered " + tags);
                SubscriptionMessage m = outbox.poll();
                if (m != null) {
                    tags.add(m.json().substring(2, m.json().indexOf('"', 2)));
                    m.consumed();
                } else {
                    Thread.onSpinWait();
                }
            }
            assertEquals(List.of("01", "04"), froms);
            assertEquals(List.of("begin", "data", "commit", "begin"), tags, "round two, then the kept live begin");
            assertTrue(failures.isEmpty(), "" + failures);
        } finally {
            pool.shutdownNow();
        }
    }
}

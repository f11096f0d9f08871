package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.protocol.json.ProtocolCodec;

/** Ports of upstream's subscriber.test.ts, forwarder.test.ts and broadcast.test.ts. */
class SubscriberForwarderBroadcastTest {

    private static final String STATUS = "[\"status\",{\"tag\":\"status\"}]";

    private static Subscriber sub(String id, String watermark, int version) {
        return new Subscriber(version, id, ReplicatorMode.SERVING, "01", watermark,
                new Outbox(id, 1 << 20, () -> { }, t -> { }), () -> STATUS, new ProtocolCodec(), 1 << 20);
    }

    private static WatermarkedChange c(String w, String tag) {
        String json = switch (tag) {
            case "begin" -> "[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"" + w + "\"}]";
            case "commit" -> "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"" + w + "\"}]";
            case "rollback" -> "[\"rollback\",{\"tag\":\"rollback\"}]";
            default -> "[\"data\",{\"tag\":\"" + tag + "\",\"w\":\"" + w + "\"}]";
        };
        return new WatermarkedChange(w, tag, json);
    }

    /** @return a live v6 subscriber at watermark 01, its status not yet taken */
    private static Subscriber live(String id) {
        Subscriber s = sub(id, "01", 6);
        s.setCaughtUp();
        return s;
    }

    /** @return {@code n} live subscribers at watermark 01 whose status was consumed */
    private static List<Subscriber> caughtUp(int n) throws InterruptedException {
        List<Subscriber> subs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Subscriber s = sub("s" + i, "01", 6);
            s.setCaughtUp();
            drain(s);
            subs.add(s);
        }
        return subs;
    }

    /** Takes and acknowledges everything available. */
    private static List<String> drain(Subscriber s) throws InterruptedException {
        List<String> out = new ArrayList<>();
        while (s.outbox().pendingMessages() > 0) {
            SubscriptionMessage m = s.outbox().take();
            out.add(m.json());
            m.consumed();
        }
        return out;
    }

    @Test
    void catchupAndBacklog() throws Exception {
        Subscriber s = sub("s", "01", 6);
        s.sendStatus("[\"status\",{\"tag\":\"status\",\"early\":1}]"); // before initialization: dropped
        s.send(c("0b", "begin"));
        s.send(c("0b", "insert"));
        s.send(c("0b", "commit")); // backlog
        assertEquals(3, s.backlogSnapshot().size());
        s.catchup(c("09", "begin"));
        s.sendStatus("[\"status\",{\"tag\":\"status\",\"mid\":1}]"); // sent in the middle of catch-up
        s.catchup(c("09", "commit"));
        s.setCaughtUp();
        assertEquals(List.of(STATUS, c("09", "begin").json(), "[\"status\",{\"tag\":\"status\",\"mid\":1}]",
                c("09", "commit").json(), c("0b", "begin").json(), c("0b", "insert").json(), c("0b", "commit").json()),
                drain(s));
        s.send(c("0c", "begin"));
        assertEquals(List.of(c("0c", "begin").json()), drain(s));
    }

    @Test
    void watermarkFilteringDropsOldAndReplayedTransactions() throws Exception {
        Subscriber s = sub("s", "05", 6);
        s.setCaughtUp();
        s.send(c("04", "begin"));
        s.send(c("05", "commit"));
        s.send(c("07", "begin"));
        s.send(c("07", "commit"));
        s.send(c("07", "begin")); // replay: dropped
        s.send(c("07", "commit"));
        assertEquals(List.of(STATUS, c("07", "begin").json(), c("07", "commit").json()), drain(s));
        assertEquals("07", s.watermark());
    }

    @Test
    void ackedAdvancesOnlyWhenCommitConsumed() throws Exception {
        Subscriber s = sub("s", "01", 6);
        s.setCaughtUp();
        s.send(c("03", "begin"));
        var commit = s.send(c("03", "commit"));
        assertEquals("03", s.watermark());
        assertEquals("01", s.acked());
        SubscriptionMessage status = s.outbox().take();
        status.consumed();
        s.outbox().take().consumed();
        assertEquals("01", s.acked());
        assertFalse(commit.isDone());
        s.outbox().take().consumed();
        assertEquals("03", s.acked());
        assertEquals(Outbox.Result.CONSUMED, commit.get());
    }

    @Test
    void protocolFilterAndStatusVersions() throws Exception {
        Subscriber v4 = sub("v4", "01", 4);
        Subscriber v1 = sub("v1", "01", 1);
        for (Subscriber s : List.of(v4, v1)) {
            s.setCaughtUp();
            s.send(c("03", "begin"));
            s.send(c("03", "update-table-metadata"));
            s.send(c("03", "commit"));
        }
        assertEquals(List.of(STATUS, c("03", "begin").json(), c("03", "commit").json()), drain(v4));
        assertEquals(List.of(c("03", "begin").json(), c("03", "update-table-metadata").json(),
                c("03", "commit").json()).subList(0, 1), drain(v1).subList(0, 1));
    }

    @Test
    void forwarderQueuesSubscribersAddedDuringTransaction() throws Exception {
        for (String end : List.of("commit", "rollback")) {
            Forwarder f = new Forwarder(System::currentTimeMillis);
            Subscriber early = live("early");
            Subscriber late = live("late");
            f.add(early);
            f.forward(c("03", "begin"));
            f.add(late);
            assertTrue(f.isQueued(late));
            f.forward(c("03", "insert"));
            f.forward(c("03", end));
            assertTrue(f.isActive(late));
            f.forward(c("05", "begin"));
            f.forward(c("05", "commit"));
            assertEquals(6, drain(early).size());
            assertEquals(List.of(STATUS, c("05", "begin").json(), c("05", "commit").json()), drain(late));
            assertEquals(List.of("05", "05"), f.acks());
        }
    }

    /**
     * A run of changes (what the stream loop fans out at once) reaches a subscriber exactly as the
     * same changes one at a time: the replay filter, the protocol filter, the catch-up backlog, the
     * watermark and the acknowledged commit.
     */
    @Test
    void aRunIsDeliveredAsItsChangesOneAtATimeWouldBe() throws Exception {
        List<WatermarkedChange[]> runs = List.of(
                new WatermarkedChange[] {c("03", "begin")},
                new WatermarkedChange[] {c("03", "insert"), c("03", "commit")}, // a replay: filtered
                new WatermarkedChange[] {c("07", "begin")},
                new WatermarkedChange[] {c("07", "insert"), c("07", "update-table-metadata"), c("07", "commit")},
                new WatermarkedChange[] {c("09", "begin")},
                new WatermarkedChange[] {c("09", "insert")},
                new WatermarkedChange[] {c("09", "rollback")});
        for (int version : new int[] {4, 6}) {
            for (boolean catchingUp : new boolean[] {false, true}) {
                Subscriber single = sub("single", "03", version);
                Subscriber batched = sub("batched", "03", version);
                if (!catchingUp) {
                    single.setCaughtUp();
                    batched.setCaughtUp();
                }
                for (WatermarkedChange[] run : runs) {
                    for (WatermarkedChange change : run) {
                        single.send(change);
                    }
                    batched.sendUntracked(run, run.length);
                }
                String what = "v" + version + (catchingUp ? ", catching up" : ", live");
                assertEquals(single.backlogSnapshot(), batched.backlogSnapshot(), what);
                single.setCaughtUp();
                batched.setCaughtUp();
                List<String> expected = drain(single);
                assertEquals(expected, drain(batched), what);
                assertEquals(version >= 5 ? 8 : 7, expected.size(), what + ": the v4 filter drops the metadata change");
                assertEquals("07", batched.watermark(), what);
                assertEquals("07", batched.acked(), what);
            }
        }
    }

    /**
     * At the byte bound a live subscriber is disconnected (to catch up from the change log when it
     * reconnects), and so is one still catching up that has consumed nothing; one catching up that
     * has consumed messages drops its backlog and stays: its round ends without going live, and the
     * next round starts from its watermark with an empty backlog.
     */
    @Test
    void aRunOverTheByteBoundFailsALiveOrStalledSubscriberAndDropsAProgressingOnesBacklog() throws Exception {
        String big = "x".repeat(60);
        WatermarkedChange[] run = {new WatermarkedChange("03", "insert", big), new WatermarkedChange("03", "insert", big)};
        Outbox liveOutbox = new Outbox("live", 100, () -> { }, t -> { });
        Subscriber live = new Subscriber(6, "live", ReplicatorMode.SERVING, "01", "01", liveOutbox, () -> STATUS,
                new ProtocolCodec(), 100);
        live.setCaughtUp();
        drain(live);
        live.sendUntracked(run, 2);
        assertTrue(liveOutbox.isClosed(), "the second change passes the bound");
        assertTrue(liveOutbox.failure().orElseThrow() instanceof Outbox.BufferLimitException);
        assertNull(liveOutbox.take(), "nothing is delivered after the failure");

        Outbox stalledOutbox = new Outbox("stalled", 100, () -> { }, t -> { });
        Subscriber stalled = new Subscriber(6, "stalled", ReplicatorMode.SERVING, "01", "01", stalledOutbox,
                () -> STATUS, new ProtocolCodec(), 100);
        stalledOutbox.append("[\"status\",{}]", null, null); // its catch-up's first message, never read
        stalled.sendUntracked(run, 2);
        assertTrue(stalledOutbox.failure().orElseThrow() instanceof Outbox.BufferLimitException,
                "catching up, but it stopped reading");

        // Before its catch-up sent anything, nobody can tell: the backlog is dropped. Then its
        // catch-up sends a message it never reads, and a bound's worth of live changes later, so
        // it is disconnected after all.
        Outbox waitingOutbox = new Outbox("waiting", 100, () -> { }, t -> { });
        Subscriber waiting = new Subscriber(6, "waiting", ReplicatorMode.SERVING, "01", "01", waitingOutbox,
                () -> STATUS, new ProtocolCodec(), 100);
        waiting.sendUntracked(run, 2);
        assertFalse(waitingOutbox.isClosed());
        assertEquals(List.of(), waiting.backlogSnapshot());
        waitingOutbox.append("[\"status\",{}]", null, null);
        waiting.sendUntracked(run, 1);
        assertFalse(waitingOutbox.isClosed(), "less than a bound since the drop");
        waiting.sendUntracked(run, 1);
        assertTrue(waitingOutbox.failure().orElseThrow() instanceof Outbox.BufferLimitException,
                "a bound since the drop, and nothing read");

        Outbox lateOutbox = new Outbox("late", 100, () -> { }, t -> { });
        Subscriber late = new Subscriber(6, "late", ReplicatorMode.SERVING, "01", "01", lateOutbox, () -> STATUS,
                new ProtocolCodec(), 100);
        lateOutbox.append("[\"status\",{\"earlier\":1}]", null, null);
        lateOutbox.take().consumed(); // the client reads
        late.sendUntracked(run, 2);
        late.send(new WatermarkedChange("03", "commit", "[\"commit\"]"));
        assertFalse(lateOutbox.isClosed(), "still connected");
        assertEquals(List.of(), late.backlogSnapshot(), "the backlog is dropped, and nothing is kept after it");
        assertFalse(late.setCaughtUp(), "the round ends without going live");
        assertTrue(late.isCatchingUp());
        late.startRound();
        late.send(new WatermarkedChange("05", "begin", "[\"begin\"]"));
        assertEquals(1, late.backlogSnapshot().size(), "the next round keeps live changes again");
        assertTrue(late.setCaughtUp());
        assertEquals(List.of(STATUS, "[\"begin\"]"), drain(late));
    }

    @Test
    void aRunEndsATransactionOnlyAtItsEnd() throws Exception {
        Forwarder f = new Forwarder(System::currentTimeMillis);
        Subscriber early = live("early");
        Subscriber late = live("late");
        f.add(early);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> f.forward(new WatermarkedChange[] {c("03", "commit"), c("05", "begin")}, 2));
        assertEquals("change 1 of a run of 2 ends a transaction", refused.getMessage());
        assertEquals(List.of(STATUS), drain(early), "a refused run sends nothing");

        f.forward(new WatermarkedChange[] {c("03", "begin"), c("03", "insert")}, 2);
        assertTrue(f.inTransaction(), "a begin inside a run opens the transaction");
        f.add(late);
        assertTrue(f.isQueued(late));
        f.forward(new WatermarkedChange[] {c("03", "insert"), c("03", "commit")}, 2);
        assertTrue(f.isActive(late), "queued subscribers join after the run that commits");
        f.forward(new WatermarkedChange[] {c("05", "begin")}, 1);
        f.forward(new WatermarkedChange[] {c("05", "commit")}, 1);
        assertEquals(6, drain(early).size());
        assertEquals(List.of(STATUS, c("05", "begin").json(), c("05", "commit").json()), drain(late));
    }

    @Test
    void broadcastWithoutTrackingAndWithTracking() throws Exception {
        AtomicLong clock = new AtomicLong(1000);
        Subscriber a = sub("a", "01", 6);
        Subscriber b = sub("b", "01", 6);
        a.setCaughtUp();
        b.setCaughtUp();
        drain(a);
        drain(b);
        Broadcast.withoutTracking(List.of(a, b), new WatermarkedChange[] {c("03", "begin")}, 1);
        Broadcast tracked = new Broadcast(List.of(a, b), c("03", "commit"), clock::get);
        assertFalse(tracked.isDone());
        drain(a);
        assertFalse(tracked.isDone());
        drain(b);
        assertTrue(tracked.isDone());
        assertTrue(new Broadcast(List.of(), c("04", "begin"), clock::get).isDone());
    }

    @Test
    void flowControlWindowWaitsForTheOldestFlushOnlyWhenFull() throws Exception {
        Forwarder f = new Forwarder(System::currentTimeMillis);
        Subscriber a = sub("a", "01", 6);
        a.setCaughtUp();
        drain(a);
        f.add(a);
        f.forwardWithFlowControl(c("03", "begin"));
        assertEquals(0, f.awaitWindow(2), "one unsettled flush fits a window of 2");
        f.forwardWithFlowControl(c("03", "insert"));
        java.util.concurrent.CompletableFuture<Long> waiting = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return f.awaitWindow(2);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        // Negative check: nothing can settle the first flush until the subscriber consumes it.
        assertThrows(java.util.concurrent.TimeoutException.class,
                () -> waiting.get(200, java.util.concurrent.TimeUnit.MILLISECONDS), "the window of 2 is full");
        drain(a);
        waiting.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(0, f.awaitWindow(1), "both flushes are settled: no wait even in lock-step");
        assertEquals(0, f.broadcastsInFlight(), "settled flushes are dropped from the window");

        f.forwardWithFlowControl(c("03", "commit"));
        java.util.concurrent.CompletableFuture<Long> lockStep = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return f.awaitWindow(1);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThrows(java.util.concurrent.TimeoutException.class,
                () -> lockStep.get(200, java.util.concurrent.TimeUnit.MILLISECONDS), "a window of 1 is upstream's lock-step");
        drain(a);
        lockStep.get(10, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Test
    void effectiveWindowNeverExceedsWhatTheSubscriberBoundHolds() {
        StreamerSettings s = StreamerSettings.defaults("t", "h:1");
        assertEquals(StreamerSettings.DEFAULT_FLOW_CONTROL_WINDOW, s.effectiveFlowControlWindow());
        assertEquals(3, s.withSubscriberMaxBufferedBytes(256 << 10).effectiveFlowControlWindow());
        assertEquals(1, s.withSubscriberMaxBufferedBytes(128 << 10).effectiveFlowControlWindow());
        assertEquals(1, s.withFlowControlWindow(1).effectiveFlowControlWindow());
    }

    /** Every subscriber's ack thread settles its part at once: each counts once, none is lost. */
    @Test
    void aBroadcastSettledFromManyThreadsAtOnceCountsEverySubscriberOnce() throws Exception {
        List<Subscriber> subs = caughtUp(48);
        Broadcast b = new Broadcast(subs, c("03", "commit"), System::currentTimeMillis);
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (Subscriber s : subs.subList(1, subs.size())) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    drain(s);
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), failures);
        assertEquals(1, b.pendingCount());
        assertFalse(b.isDone(), "one subscriber has not consumed it");
        drain(subs.get(0));
        assertEquals(0, b.pendingCount());
        assertTrue(b.isDone());
    }

    @Test
    void checkProgressReleasesAfterMajorityPlusPadding() throws Exception {
        AtomicLong clock = new AtomicLong(1000);
        List<Subscriber> subs = caughtUp(3);
        Broadcast b = new Broadcast(subs, c("03", "begin"), clock::get);
        clock.addAndGet(5000);
        assertFalse(b.checkProgress(1000), "nobody done yet");
        drain(subs.get(0));
        assertFalse(b.checkProgress(1000), "1 of 3 is not a majority");
        drain(subs.get(1));
        assertFalse(b.checkProgress(1000), "majority, but padding not yet elapsed");
        assertFalse(b.checkProgress(-1), "negative padding disables early release");
        clock.addAndGet(999);
        assertFalse(b.checkProgress(1000));
        clock.addAndGet(1);
        assertTrue(b.checkProgress(1000));
        assertTrue(b.isDone());
        assertEquals(1, b.pendingCount());
    }

    @Test
    void subscribersOfOneChangeGetIndependentViewsOfItsUtf8() throws Exception {
        Subscriber a = sub("a", "01", 6);
        Subscriber b = sub("b", "01", 6);
        a.setCaughtUp();
        b.setCaughtUp();
        WatermarkedChange change = new WatermarkedChange("0b", "insert",
                "[\"data\",{\"tag\":\"insert\",\"t\":\"h\u00e9\ud83d\ude00\"}]");
        a.send(change);
        b.send(change);
        a.outbox().take().consumed(); // the status frame
        b.outbox().take().consumed();
        SubscriptionMessage ma = a.outbox().take();
        SubscriptionMessage mb = b.outbox().take();
        byte[] expected = change.json().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.nio.ByteBuffer va = ma.utf8();
        assertTrue(va.isReadOnly());
        byte[] read = new byte[va.remaining()];
        va.get(read); // moves only this view
        assertArrayEquals(expected, read);
        assertEquals(expected.length, mb.utf8().remaining());
        assertEquals(java.nio.ByteBuffer.wrap(expected), mb.utf8());
        assertEquals(java.nio.ByteBuffer.wrap(expected), ma.utf8(), "a new view on every call");
        Outbox own = new Outbox("o", 1 << 20, () -> { }, t -> { });
        own.append("[\"status\",{}]", null, null);
        assertEquals(java.nio.ByteBuffer.wrap("[\"status\",{}]".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                own.take().utf8(), "a message of one subscriber alone is encoded from its text");
    }

    @Test
    void outboxBoundAndOutOfOrderAck() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        Outbox o = new Outbox("o", 10, () -> { }, failures::add);
        assertTrue(o.append("x".repeat(50), null, null) != null, "a single message larger than the bound passes");
        assertNull(o.append("y", null, null), "bound hit");
        o.take().consumed();
        Outbox.Message m1 = o.append("aaaa", null, null);
        Outbox.Message m2 = o.append("bbbb", null, null);
        o.take();
        SubscriptionMessage t2 = o.take();
        t2.consumed();
        assertTrue(failures.get(0) instanceof Outbox.OutOfOrderAckException);
        assertEquals(Outbox.Result.UNCONSUMED, m1.result().get());
        assertEquals(Outbox.Result.UNCONSUMED, m2.result().get());
        assertNull(o.take());
    }

    /**
     * A run of acks in one call settles exactly as one call per message would: bytes released,
     * commit callbacks in order, waiting futures completed; a message consumed before is ignored;
     * a message that skips an unconsumed one fails the subscription after the ones before it
     * settled; and a message of another subscription is refused.
     */
    @Test
    void aRunOfAcksSettlesLikeOneAckAtATime() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        List<String> commits = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        Outbox.Message a = o.append("a", null, null);
        Outbox.Message c1 = o.append("c1", "w1", commits::add);
        Outbox.Message b = o.append("bb", null, null);
        Outbox.Message c2 = o.append("c2", "w2", commits::add);
        Outbox.Message d = o.append("d", null, null);
        Outbox.Message e = o.append("e", null, null);
        var waiting = c2.result();
        SubscriptionMessage[] taken = new SubscriptionMessage[8];
        assertEquals(6, o.poll(taken));

        o.consumed(new SubscriptionMessage[] {a, a, c1}, 0, 3);
        assertEquals(List.of("w1"), commits, "a repeated message is consumed once");
        assertEquals(4, o.pendingMessages());
        assertEquals(2 + 2 + 1 + 1, o.bufferedBytes());

        o.consumed(taken, 0, 4); // a and c1 again, then b and c2
        assertEquals(List.of("w1", "w2"), commits);
        assertEquals(Outbox.Result.CONSUMED, waiting.get(), "a future asked for before settles on the run");
        assertEquals(2, o.pendingMessages());
        assertEquals(4, o.consumedMessages());

        Outbox other = new Outbox("other", 1 << 20, () -> { }, t -> { });
        SubscriptionMessage foreign = other.append("x", null, null);
        assertThrows(IllegalArgumentException.class, () -> o.consumed(new SubscriptionMessage[] {foreign}, 0, 1));
        assertTrue(failures.isEmpty(), "refusing a foreign message does not fail the subscription");

        o.consumed(new SubscriptionMessage[] {e}, 0, 1);
        assertEquals(1, failures.size());
        assertTrue(failures.get(0) instanceof Outbox.OutOfOrderAckException);
        assertEquals("subscriber o acknowledged message 6 before message 5", failures.get(0).getMessage());
        assertEquals(Outbox.Result.UNCONSUMED, d.result().get());
        o.consumed(new SubscriptionMessage[] {d}, 0, 1);
        assertEquals(4, o.consumedMessages(), "acks after the failure are ignored");
    }

    /**
     * A foreign message inside a run is refused as the n-th of n single calls would be: the messages
     * before it are consumed with their commit callbacks run and their futures completed, and the
     * subscription goes on.
     */
    @Test
    void aForeignMessageInARunIsRefusedAfterTheMessagesBeforeItSettled() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        List<String> commits = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        Outbox.Message commit = o.append("c", "w1", commits::add);
        Outbox.Message next = o.append("n", null, null);
        var waiting = commit.result();
        assertEquals(commit, o.take());
        assertEquals(next, o.take());
        SubscriptionMessage foreign = new Outbox("other", 1 << 20, () -> { }, t -> { }).append("x", null, null);

        assertThrows(IllegalArgumentException.class,
                () -> o.consumed(new SubscriptionMessage[] {commit, foreign, next}, 0, 3));
        assertEquals(List.of("w1"), commits, "the commit before the foreign message reported its watermark");
        assertEquals(Outbox.Result.CONSUMED, waiting.getNow(null), "and completed its future");
        assertEquals(1, o.consumedMessages(), "the message after it is not consumed");
        assertTrue(failures.isEmpty());
        o.consumed(new SubscriptionMessage[] {next}, 0, 1);
        assertEquals(2, o.consumedMessages());
    }

    /**
     * A fanned-out run is queued as the streamer's shared changes: a transport that acknowledges
     * by count is handed those very objects (every subscriber the same), and settling them by
     * count releases their bytes and reports the newest commit, while the outbox's own messages
     * among them (a status) settle as they always do.
     */
    @Test
    void sharedChangesAreHandedOutAsTheyAreAndSettledByCount() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        List<String> commits = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        Outbox p = new Outbox("p", 1 << 20, () -> { }, t -> { });
        Outbox.Message status = o.append(STATUS, null, null);
        var statusResult = status.result();
        WatermarkedChange[] run = {c("02", "begin"), c("02", "insert"), c("02", "commit"), c("03", "begin"),
                c("03", "insert"), c("03", "commit")};
        assertEquals(6, o.appendAll(run, 6, commits::add));
        assertEquals(6, p.appendAll(run, 6, w -> { }));
        long bytes = STATUS.length();
        for (WatermarkedChange c : run) {
            bytes += c.json().length();
        }
        assertEquals(bytes, o.bufferedBytes());

        SubscriptionMessage[] first = new SubscriptionMessage[5];
        assertEquals(5, o.pollShared(first));
        assertTrue(first[0] == status && first[1] == run[0], "its own message, then the shared changes");
        SubscriptionMessage[] fromP = new SubscriptionMessage[8];
        assertEquals(6, p.pollShared(fromP));
        assertTrue(fromP[2] == run[2], "the change itself, not a message per subscriber");
        assertThrows(UnsupportedOperationException.class, () -> fromP[2].consumed(),
                "a shared change cannot say which subscriber consumed it");
        SubscriptionMessage[] taken = new SubscriptionMessage[8];
        assertEquals(2, o.pollShared(taken), "the rest");
        assertTrue(taken[0] == run[4]);

        o.consumedNext(3); // the status, begin, insert
        assertEquals(Outbox.Result.CONSUMED, statusResult.getNow(null), "the outbox's own message settles");
        assertEquals(List.of(), commits, "no commit consumed yet");
        assertEquals(4, o.pendingMessages());
        o.consumedNext(4); // 02's commit and all of 03
        assertEquals(List.of("03"), commits, "the newest commit of the run is reported");
        assertEquals(0, o.bufferedBytes());
        assertEquals(7, o.consumedMessages());
        assertTrue(failures.isEmpty());
        o.consumedNext(0);
        assertThrows(IllegalArgumentException.class, () -> o.consumedNext(-1));
    }

    /**
     * A consumed run leaves the ring at once: the character count, the bound, the commits reported
     * and the messages settled must stay exact while runs wrap around the ring's end and the ring
     * grows with entries outstanding, shared changes and messages mixed.
     */
    @Test
    void consumedRunsAreCountedExactlyAcrossTheRingsEndAndItsGrowth() {
        List<Throwable> failures = new ArrayList<>();
        List<String> commits = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        SubscriptionMessage[] taken = new SubscriptionMessage[64];
        java.util.ArrayDeque<SubscriptionMessage> outstanding = new java.util.ArrayDeque<>();
        List<Outbox.Message> own = new ArrayList<>();
        long expectedBuffered = 0;
        long consumed = 0;
        // Up to 45 entries stay outstanding, so the ring (16 at first) wraps and doubles twice.
        for (int round = 0; round < 40; round++) {
            String w = String.format("%04d", round);
            WatermarkedChange[] run = {c(w, "begin"), c(w, "insert"), c(w, "update"), c(w, "commit")};
            o.appendAll(run, run.length, commits::add);
            if (round % 7 == 0) {
                own.add(o.append("status " + w, null, null));
            }
            int n = o.pollShared(taken);
            for (int i = 0; i < n; i++) {
                outstanding.add(taken[i]);
                expectedBuffered += taken[i].json().length();
            }
            int consume = round < 39 ? Math.max(0, outstanding.size() - 5 - round) : outstanding.size();
            for (int i = 0; i < consume; i++) {
                expectedBuffered -= outstanding.poll().json().length();
            }
            o.consumedNext(consume);
            consumed += consume;
            assertEquals(expectedBuffered, o.bufferedBytes(), "round " + round);
            assertEquals(consumed, o.consumedMessages());
        }
        assertEquals(0, o.bufferedBytes());
        assertEquals("0039", commits.get(commits.size() - 1), "the last round's commit is reported last");
        for (int i = 1; i < commits.size(); i++) {
            assertTrue(commits.get(i - 1).compareTo(commits.get(i)) < 0, "commits reported in order: " + commits);
        }
        for (Outbox.Message m : own) {
            assertEquals(Outbox.Result.CONSUMED, m.result().getNow(null), m + " settled");
        }
        assertTrue(failures.isEmpty(), failures.toString());

        // The bound is the same rule on the recorded counts: a run stops where it would exceed it.
        Outbox bounded = new Outbox("b", 3 * c("01", "insert").json().length(), () -> { }, t -> { });
        WatermarkedChange[] four = {c("01", "insert"), c("01", "insert"), c("01", "insert"), c("01", "insert")};
        assertEquals(3, bounded.appendAll(four, 4, x -> { }));
        bounded.pollShared(taken);
        bounded.consumedNext(2);
        assertEquals(2, bounded.appendAll(four, 4, x -> { }), "room for two again after two were consumed");
    }

    /**
     * Acknowledging more than was taken fails the subscription, after the messages that were
     * taken settled; what was appended and not taken is released unconsumed.
     */
    @Test
    void acknowledgingMoreThanWasTakenFailsTheSubscription() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        List<String> commits = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        WatermarkedChange[] run = {c("02", "begin"), c("02", "commit")};
        o.appendAll(run, 2, commits::add);
        Outbox.Message untaken = o.append("later", null, null);
        SubscriptionMessage[] taken = new SubscriptionMessage[2];
        assertEquals(2, o.pollShared(taken));
        o.consumedNext(4);
        assertEquals(List.of("02"), commits, "the taken ones settled first");
        assertEquals(1, failures.size());
        assertTrue(failures.get(0) instanceof Outbox.OutOfOrderAckException);
        assertEquals("subscriber o acknowledged 2 message(s) more than it was sent", failures.get(0).getMessage());
        assertEquals(Outbox.Result.UNCONSUMED, untaken.result().get());
        o.consumedNext(1);
        assertEquals(2, o.consumedMessages(), "acks after the failure are ignored");
    }

    /**
     * A transport that takes messages one by one gets a message of its own subscription for a
     * shared change, with the same rules as any other: consumed in order, its commit reported,
     * and released unconsumed when the subscription ends.
     */
    @Test
    void aSharedChangeTakenOneByOneIsAMessageOfItsSubscription() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        List<String> commits = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        WatermarkedChange[] run = {c("02", "begin"), c("02", "insert"), c("02", "commit")};
        o.appendAll(run, 3, commits::add);
        SubscriptionMessage begin = o.take();
        assertTrue(begin instanceof Outbox.Message, "a message of this subscription");
        assertEquals(run[0].json(), begin.json());
        assertTrue(begin.sharedUtf8() == run[0].sharedUtf8(), "still the one shared encoding");
        SubscriptionMessage[] rest = new SubscriptionMessage[4];
        assertEquals(2, o.poll(rest));
        rest[1].consumed(); // the commit, while the begin is still unconsumed
        assertEquals(1, failures.size(), "skipping an unconsumed message is a violation, as for any message");

        Outbox q = new Outbox("q", 1 << 20, () -> { }, t -> { });
        q.appendAll(run, 3, commits::add);
        q.take().consumed();
        q.take().consumed();
        SubscriptionMessage commit = q.take();
        commit.consumed();
        commit.consumed();
        assertEquals(List.of("02"), commits, "reported once; a repeated consumed() is ignored");
        assertEquals(3, q.consumedMessages());
    }

    @Test
    void aMessageSettlesOnceWhetherItsResultIsAskedBeforeOrAfter() throws Exception {
        Outbox o = new Outbox("o", 1 << 20, () -> { }, t -> { });
        Outbox.Message early = o.append("a", null, null);
        Outbox.Message late = o.append("b", null, null);
        java.util.concurrent.CompletableFuture<Outbox.Result> asked = early.result();
        assertTrue(!asked.isDone(), "not settled before the client consumed it");
        o.take().consumed();
        assertEquals(Outbox.Result.CONSUMED, asked.get(), "a future asked for before settles on the ack");
        assertEquals(asked, early.result(), "and it is the same future afterwards");
        SubscriptionMessage second = o.take();
        second.consumed();
        o.close();
        assertEquals(Outbox.Result.CONSUMED, late.result().get(),
                "a future asked for after settling holds how it settled; the later close changes nothing");
        Outbox.Message released = new Outbox("r", 1 << 20, () -> { }, t -> { }).append("c", null, null);
        assertEquals(null, released.result().getNow(null));
    }

    @Test
    void failAfterQueuedDeliversWhatIsQueuedThenFails() throws Exception {
        List<Throwable> failures = new ArrayList<>();
        Outbox o = new Outbox("o", 1 << 20, () -> { }, failures::add);
        Outbox.Message rollback = o.append("rollback", null, null);
        IllegalStateException reset = new IllegalStateException("reset");
        o.failAfterQueued(reset);
        assertNull(o.append("late", null, null), "nothing is appended after the end");
        assertTrue(failures.isEmpty(), "not failed while a frame is still queued");
        assertEquals("rollback", o.take().json(), "the queued frame is still delivered");
        assertNull(o.take(), "then the stream ends");
        assertEquals(List.of(reset), failures);
        assertEquals(reset, o.failure().orElseThrow());
        assertEquals(Outbox.Result.UNCONSUMED, rollback.result().get(), "released with the failure");

        List<Throwable> direct = new ArrayList<>();
        Outbox empty = new Outbox("e", 1 << 20, () -> { }, direct::add);
        empty.failAfterQueued(reset);
        assertEquals(List.of(reset), direct, "with nothing queued it fails at once");
        assertNull(empty.take());
    }

    /**
     * Appends, takes and consumes in uneven steps, far past the outbox's initial ring, so that it
     * grows while its oldest message sits anywhere in it: messages are taken in append order, each
     * once, and the byte count follows; closing releases the rest, oldest first, as unconsumed.
     */
    @Test
    void theOutboxRingGrowsAndWrapsWithoutLosingOrder() throws Exception {
        Outbox o = new Outbox("o", 1 << 20, () -> { }, t -> { });
        List<Outbox.Message> appended = new ArrayList<>();
        List<SubscriptionMessage> takenButNotConsumed = new ArrayList<>();
        int nextTake = 0;
        for (int round = 0; round < 30; round++) {
            for (int i = 0; i < 1 + (round * 29) % 70; i++) {
                appended.add(o.append("m" + appended.size(), null, null));
            }
            for (int i = 0; i < (round * 17) % 60 && nextTake < appended.size(); i++, nextTake++) {
                SubscriptionMessage t = o.poll();
                assertEquals("m" + nextTake, t.json());
                takenButNotConsumed.add(t);
            }
            int consume = takenButNotConsumed.size() / 2;
            for (int i = 0; i < consume; i++) {
                takenButNotConsumed.remove(0).consumed();
            }
            assertEquals(appended.size() - (nextTake - takenButNotConsumed.size()), o.pendingMessages());
        }
        long unconsumedChars = 0;
        for (int i = nextTake - takenButNotConsumed.size(); i < appended.size(); i++) {
            unconsumedChars += ("m" + i).length();
        }
        assertEquals(unconsumedChars, o.bufferedBytes());
        o.close();
        for (int i = 0; i < appended.size(); i++) {
            Outbox.Result expected = i < nextTake - takenButNotConsumed.size() ? Outbox.Result.CONSUMED
                    : Outbox.Result.UNCONSUMED;
            assertEquals(expected, appended.get(i).result().getNow(null), "message " + i);
        }
        assertNull(o.poll());
        assertEquals(0, o.pendingMessages());
    }

    /** A batch pull takes what is ready, in order, up to the array's length, and nothing once closed. */
    @Test
    void aBatchPollTakesWhatIsReadyInOrder() throws Exception {
        Outbox o = new Outbox("o", 1 << 20, () -> { }, t -> { });
        for (int i = 0; i < 5; i++) {
            o.append("m" + i, null, null);
        }
        SubscriptionMessage[] into = new SubscriptionMessage[3];
        assertEquals(3, o.poll(into));
        assertEquals(List.of("m0", "m1", "m2"), java.util.Arrays.stream(into).map(SubscriptionMessage::json).toList());
        assertEquals("m3", o.poll().json(), "a single poll goes on where the batch stopped");
        SubscriptionMessage[] rest = new SubscriptionMessage[3];
        assertEquals(1, o.poll(rest));
        assertEquals("m4", rest[0].json());
        assertNull(rest[1], "the rest of the array is not touched");
        assertEquals(0, o.poll(rest));
        assertFalse(o.isReady());
        for (SubscriptionMessage m : into) {
            m.consumed();
        }
        assertEquals(2, o.pendingMessages(), "taken in a batch, consumed one by one, in order");
        o.append("m5", null, null);
        o.close();
        assertEquals(0, o.poll(rest), "nothing once closed");
    }
}

package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.protocol.json.ProtocolCodec;

/** Registration, the lock-step hand-over to a stream, the version check, detach, fail and the bound. */
@Timeout(20)
class SubscriberRegistryTest {

    private static final String STATUS = "[\"status\",{\"tag\":\"status\"}]";

    private final Forwarder forwarder = new Forwarder(System::currentTimeMillis);
    private final StreamerCounters counters = new StreamerCounters();
    private final MemoryChangeLog log = new MemoryChangeLog();
    private final Gate gate = new Gate();

    /** A supervisor stand-in. */
    static final class Gate implements SubscriberRegistry.Gate {
        volatile String refusal;
        final AtomicInteger servingConnected = new AtomicInteger();

        @Override
        public String refusal() {
            return refusal;
        }

        @Override
        public void servingSubscriberConnected() {
            servingConnected.incrementAndGet();
        }
    }

    private SubscriberRegistry registry(int maxPending) {
        SubscriberRegistry r = new SubscriberRegistry(forwarder, counters, new ProtocolCodec(), 1 << 20, maxPending,
                STATUS);
        r.replicaVersion("01");
        return r;
    }

    private static SubscriberContext ctx(String id, String replicaVersion, ReplicatorMode mode) {
        return new SubscriberContext(ChangeStreamer.PROTOCOL_VERSION, id, null, mode, replicaVersion, "01", false);
    }

    private static SubscriberContext ctx(String id) {
        return ctx(id, "01", ReplicatorMode.SERVING);
    }

    private static final String END = "<end>";

    /** Takes and consumes the next message, as a transport does once the client acknowledged it. */
    private static String next(Subscription s) throws InterruptedException {
        SubscriptionMessage m = s.take();
        if (m == null) {
            return END;
        }
        m.consumed();
        return m.json();
    }

    private MemoryChangeLog.MemoryStorer storer() {
        return (MemoryChangeLog.MemoryStorer) log.start("t", null, null);
    }

    private static Subscriber subscriberOf(MemoryChangeLog.MemoryStorer s, int i) {
        return ((CatchupRunner.Request) s.catchups().get(i)).subscriber();
    }

    @Test
    void subscribersWaitForAStorerAndAreHandedOverWithACatchupRequest() throws Exception {
        SubscriberRegistry r = registry(8);
        Subscription a = r.subscribe(ctx("a"), gate);
        Subscription b = r.subscribe(ctx("b"), gate);
        assertEquals(2, r.pendingCount(), "no stream runs: the registrations wait");
        assertTrue(forwarder.subscribers().isEmpty());

        MemoryChangeLog.MemoryStorer s = storer();
        s.holdCatchups = true;
        r.attach(s);
        assertEquals(0, r.pendingCount());
        assertEquals(2, forwarder.subscribers().size(), "forwarder and storer got them in one step");
        assertEquals(List.of("a", "b"), List.of(subscriberOf(s, 0).id, subscriberOf(s, 1).id));
        assertEquals("01", ((CatchupRunner.Request) s.catchups().get(0)).replicaVersion());
        assertSame(s, r.storer());

        Subscription c = r.subscribe(ctx("c"), gate);
        assertEquals(3, s.catchups().size(), "with a storer running, a subscription is handed over at once");
        assertEquals(3, counters.subscriptions());
        a.close();
        b.close();
        c.close();
    }

    @Test
    void registrationNeverWaitsForTheStreamLockAndTheHolderDrainsIt() throws Exception {
        SubscriberRegistry r = registry(8);
        MemoryChangeLog.MemoryStorer s = storer();
        r.attach(s);
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread session = new Thread(() -> {
            r.streamLock().lock();
            try {
                locked.countDown();
                release.await(10, TimeUnit.SECONDS); // a session held back by the storer's back-pressure
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                r.streamLock().unlock();
            }
            r.drainPending(); // what the session does after every message
        });
        session.start();
        assertTrue(locked.await(10, TimeUnit.SECONDS));

        Subscription sub = r.subscribe(ctx("late"), gate); // returns although the lock is held
        assertEquals(1, r.pendingCount());
        assertTrue(s.catchups().isEmpty());

        release.countDown();
        session.join(10_000);
        assertEquals(0, r.pendingCount(), "the lock holder registered it after unlocking");
        assertEquals(1, s.catchups().size());
        assertEquals(1, forwarder.subscribers().size());
        sub.close();
    }

    @Test
    void afterTheStreamEndsRegistrationsWaitForTheNextStorer() throws Exception {
        SubscriberRegistry r = registry(8);
        MemoryChangeLog.MemoryStorer first = storer();
        r.attach(first);
        r.streamLock().lock();
        try {
            r.detachStorerLocked();
        } finally {
            r.streamLock().unlock();
        }
        assertNull(r.storer());
        Subscription sub = r.subscribe(ctx("between"), gate);
        assertEquals(1, r.pendingCount());
        MemoryChangeLog.MemoryStorer second = storer();
        r.attach(second);
        assertTrue(first.catchups().isEmpty());
        assertEquals(1, second.catchups().size());
        sub.close();
    }

    @Test
    void aDifferentReplicaVersionGetsAnErrorFrameAtSubscribeOrAtHandOver() throws Exception {
        SubscriberRegistry r = registry(8);
        Subscription wrong = r.subscribe(ctx("wrong", "00", ReplicatorMode.SERVING), gate);
        assertEquals("[\"error\",{\"type\":1,\"message\":\"current replica version is 01 (requested 00)\"}]",
                next(wrong));
        assertEquals(END, next(wrong), "the subscription ends after the error");
        assertEquals(0, r.pendingCount());

        // During a re-sync the version is unknown: the check happens when the subscriber is handed over.
        r.replicaVersion(null);
        Subscription old = r.subscribe(ctx("old", "01", ReplicatorMode.SERVING), gate);
        Subscription fresh = r.subscribe(ctx("new", "05", ReplicatorMode.SERVING), gate);
        assertEquals(2, r.pendingCount());
        r.replicaVersion("05");
        MemoryChangeLog.MemoryStorer s = storer();
        s.holdCatchups = true;
        r.attach(s);
        assertEquals("[\"error\",{\"type\":1,\"message\":\"current replica version is 05 (requested 01)\"}]",
                next(old));
        assertEquals(1, s.catchups().size());
        assertEquals("new", subscriberOf(s, 0).id);
        fresh.close();
    }

    @Test
    void aClosedWaitingSubscriberIsDetachedAndNeverHandedOver() {
        SubscriberRegistry r = registry(8);
        Subscription sub = r.subscribe(ctx("gone"), gate);
        sub.close();
        assertEquals(0, r.pendingCount());
        MemoryChangeLog.MemoryStorer s = storer();
        r.attach(s);
        assertTrue(s.catchups().isEmpty());
        assertTrue(forwarder.subscribers().isEmpty());
        assertEquals(0, counters.droppedSubscribers(), "an unsubscribe is not a drop");
    }

    @Test
    void failAllEndsWaitingAndRegisteredSubscriptionsWithTheCause() throws Exception {
        SubscriberRegistry r = registry(8);
        Subscription registered = r.subscribe(ctx("registered"), gate);
        r.attach(storer());
        r.streamLock().lock();
        try {
            r.detachStorerLocked();
        } finally {
            r.streamLock().unlock();
        }
        Subscription waiting = r.subscribe(ctx("waiting"), gate);
        IllegalStateException cause = new IllegalStateException("re-syncing; reconnect");

        assertEquals(2, r.failAll(cause));
        assertSame(cause, waiting.failure().orElseThrow());
        assertEquals(0, r.pendingCount());
        assertTrue(forwarder.subscribers().isEmpty());
        assertEquals(STATUS, next(registered), "what was queued before the failure is still delivered");
        assertEquals(END, next(registered));
        assertSame(cause, registered.failure().orElseThrow());
        assertEquals(END, next(waiting));
        assertEquals(2, counters.droppedSubscribers());
    }

    @Test
    void overTheBoundASubscriberIsRefusedAndMayReconnectOnceTheQueueDrains() throws Exception {
        SubscriberRegistry r = registry(2);
        Subscription a = r.subscribe(ctx("a"), gate);
        Subscription b = r.subscribe(ctx("b"), gate);
        Subscription over = r.subscribe(ctx("over"), gate);
        assertEquals(2, r.pendingCount(), "the bound holds");
        Throwable refused = over.failure().orElseThrow();
        assertTrue(refused.getMessage().contains("too many subscribers (2) waiting"), refused.getMessage());
        assertEquals(END, next(over), "the refused subscription ends at once; its client reconnects");
        assertTrue(a.failure().isEmpty(), "the waiting ones are untouched");

        MemoryChangeLog.MemoryStorer s = storer();
        r.attach(s);
        Subscription again = r.subscribe(ctx("over"), gate);
        assertTrue(again.failure().isEmpty());
        assertEquals(3, s.catchups().size());
        for (Subscription x : List.of(a, b, again)) {
            x.close();
        }
    }

    @Test
    void aStoppedStreamerRefusesAndOnlyServingSubscribersStartTheStream() {
        SubscriberRegistry r = registry(8);
        r.subscribe(ctx("backup", "01", ReplicatorMode.BACKUP), gate);
        assertEquals(0, gate.servingConnected.get());
        r.subscribe(ctx("serving"), gate);
        assertEquals(1, gate.servingConnected.get());

        gate.refusal = "change streamer is stopped: boom";
        Subscription late = r.subscribe(ctx("late"), gate);
        assertEquals("change streamer is stopped: boom", late.failure().orElseThrow().getMessage());
        assertEquals(2, r.pendingCount());
    }

    @Test
    void aSubscriberLetInJustBeforeTheStopIsNotStranded() throws Exception {
        SubscriberRegistry r = registry(8);
        // The gate still says "running" (the stop is under way), but the registry has ended.
        r.endAll(new IllegalStateException("change streamer stopped"));
        Subscription sub = r.subscribe(ctx("racing"), gate);
        assertEquals(0, r.pendingCount());
        assertEquals(END, next(sub));
        assertEquals("change streamer stopped", sub.failure().orElseThrow().getMessage());
    }

    @Test
    void endAllFailsRegisteredSubscribersAfterWhatIsQueued() throws Exception {
        SubscriberRegistry r = registry(8);
        Subscription sub = r.subscribe(ctx("s"), gate);
        r.attach(storer());
        r.endAll(new IllegalStateException("change streamer stopped"));
        assertEquals(STATUS, next(sub));
        assertEquals(END, next(sub));
        assertEquals("change streamer stopped", sub.failure().orElseThrow().getMessage());
        assertFalse(r.pendingCount() > 0);
    }
}

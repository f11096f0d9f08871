package org.zrm.changestreamer.internal;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.Storer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.ErrorType;

/**
 * Subscribers from the moment they connect until they leave: the queue of registrations not yet
 * handed to the stream, the hand-over itself, the replica-version check, and detaching or failing
 * them.
 *
 * <h2>Lock-step hand-over (spec §1.5)</h2>
 * Registering a subscriber means adding it to the {@link Forwarder} and asking the running storer
 * to catch it up, in one critical section under the <em>stream lock</em>, which the
 * {@link StreamSession} also holds while it stores and forwards one message. The forwarder and the
 * storer therefore see the subscriber at the same stream position. {@link #subscribe} never waits
 * for that lock: it queues the registration and registers it only if the lock is free
 * ({@code tryLock}); the session drains the queue after each message it releases the lock for
 * ({@link #drainPending()}), so no registration is stranded and a subscriber does not wait while
 * the storer's back-pressure holds the stream. Registrations made while no storer runs (start-up,
 * back-off, re-sync) wait for the next {@link #attach}.
 *
 * <h2>Bound</h2>
 * At most {@code maxPending} registrations wait at a time. A subscription over the bound is ended
 * at once with a failure (no error frame, like every failure that is not the client's fault); the
 * client reconnects after its usual delay, by which time the stream has usually started and the
 * queue drained. Nothing is lost: a subscriber's position is its own watermark.
 */
final class SubscriberRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(SubscriberRegistry.class);

    /**
     * Default bound of waiting registrations. They pile up only while no stream runs (start-up
     * delay, back-off, re-sync), one per connecting view-syncer or backup replicator; a thousand
     * is far above any deployment and still small in memory (a registration is a subscriber
     * object with an empty outbox).
     */
    static final int DEFAULT_MAX_PENDING = 1024;

    /** What the registry asks of the supervisor when a subscriber connects. */
    interface Gate {
        /** @return why subscriptions are refused (the streamer has stopped), or {@code null} */
        String refusal();

        /** A serving subscriber connected: the stream should start without the start-up delay. */
        void servingSubscriberConnected();
    }

    private final ReentrantLock streamLock = new ReentrantLock();
    private final ConcurrentLinkedQueue<Subscriber> pending = new ConcurrentLinkedQueue<>();
    /** Size of {@link #pending}, kept apart because the queue's own size() walks it. */
    private final AtomicInteger pendingCount = new AtomicInteger();
    private final int maxPending;
    private final Forwarder forwarder;
    private final StreamerCounters counters;
    private final ProtocolCodec codec;
    private final long maxBufferedBytes;
    /** Written under {@link #streamLock}; volatile so that status reads need not take the lock. */
    private volatile Storer storer;
    private volatile String replicaVersion;
    private volatile String latestStatusJson;
    /** Set once by {@link #endAll}: the streamer has stopped for good. */
    private volatile Throwable ended;

    /**
     * @param forwarder where registered subscribers receive live changes
     * @param counters counts subscriptions and dropped subscribers
     * @param codec encodes the frames subscribers get
     * @param maxBufferedBytes each subscriber's bound on unconsumed characters
     * @param maxPending bound of waiting registrations, at least 1
     * @param initialStatusJson the {@code status} frame a subscriber gets first until the source
     *     reports something better
     */
    SubscriberRegistry(Forwarder forwarder, StreamerCounters counters, ProtocolCodec codec, long maxBufferedBytes,
            int maxPending, String initialStatusJson) {
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPending must be at least 1: " + maxPending);
        }
        this.forwarder = forwarder;
        this.counters = counters;
        this.codec = codec;
        this.maxBufferedBytes = maxBufferedBytes;
        this.maxPending = maxPending;
        this.latestStatusJson = initialStatusJson;
    }

    /**
     * Creates a subscriber for {@code ctx} and queues its registration; never blocks. Rejections
     * arrive in-band: a different replica version gets an error frame, a stopped streamer or a
     * full queue ends the subscription with a failure.
     */
    Subscription subscribe(SubscriberContext ctx, Gate gate) {
        counters.subscribed();
        Subscriber[] self = new Subscriber[1];
        Outbox outbox = new Outbox(ctx.id(), maxBufferedBytes, () -> detach(self[0], null),
                cause -> detach(self[0], cause));
        Subscriber sub = new Subscriber(ctx.protocolVersion(), ctx.id(), ctx.mode(), ctx.replicaVersion(),
                ctx.watermark(), outbox, () -> latestStatusJson, codec, maxBufferedBytes);
        self[0] = sub;
        String ours = replicaVersion;
        if (ours != null && !ours.equals(ctx.replicaVersion())) {
            rejectReplicaVersion(sub, ours);
            return outbox;
        }
        String refusal = gate.refusal();
        if (refusal != null) {
            sub.fail(new IllegalStateException(refusal));
            return outbox;
        }
        if (ctx.mode() == ReplicatorMode.SERVING) {
            gate.servingSubscriberConnected();
        }
        LOG.info("change-streamer: subscriber {} ({} v{}, task {}) connected at {}", ctx.id(), ctx.mode().wireName(),
                ctx.protocolVersion(), ctx.taskID(), ctx.watermark());
        if (pendingCount.incrementAndGet() > maxPending) {
            pendingCount.decrementAndGet();
            LOG.warn("change-streamer: subscriber {} refused: {} registrations are already waiting for the stream to"
                    + " start; it will reconnect", ctx.id(), maxPending);
            sub.fail(new IllegalStateException("too many subscribers (" + maxPending + ") waiting for the change"
                    + " stream to start; reconnect later"));
            return outbox;
        }
        queue(sub);
        return outbox;
    }

    /** Queues a registration counted in {@code pendingCount}, and registers it if it can now. */
    private void queue(Subscriber sub) {
        pending.add(sub);
        Throwable end = ended;
        if (end != null) {
            // The streamer stopped after the gate let this one in; endAll may have drained the
            // queue before the add, and nobody else would.
            failPending(end);
            return;
        }
        drainPending();
    }

    private void rejectReplicaVersion(Subscriber sub, String ours) {
        String message = "current replica version is " + ours + " (requested " + sub.replicaVersion + ")";
        LOG.warn("change-streamer: subscriber {} rejected: {}", sub.id, message);
        sub.close(ErrorType.WRONG_REPLICA_VERSION, message);
    }

    /** The lock the session's store-and-forward step and the registration step share. */
    ReentrantLock streamLock() {
        return streamLock;
    }

    /**
     * Registers waiting subscribers if the stream lock is free and a storer runs. Cheap when
     * nothing waits (one volatile read), so the session calls it after every message. Loops
     * because a registration queued while another thread held the lock is drained by that thread
     * after it unlocks, i.e. here.
     */
    void drainPending() {
        while (!pending.isEmpty()) {
            if (!streamLock.tryLock()) {
                return; // the holder drains after unlocking
            }
            try {
                if (storer == null) {
                    return; // registered when the next stream starts
                }
                registerPendingLocked();
            } finally {
                streamLock.unlock();
            }
        }
    }

    /**
     * Hands the registry a freshly started storer: waiting subscribers are registered with it, and
     * later ones are until {@link #detachStorerLocked()}.
     */
    void attach(Storer s) {
        streamLock.lock();
        try {
            storer = s;
            registerPendingLocked();
        } finally {
            streamLock.unlock();
        }
        drainPending();
    }

    /** The stream has ended: registrations wait for the next storer. Caller holds the stream lock. */
    void detachStorerLocked() {
        storer = null;
    }

    private void registerPendingLocked() {
        Subscriber sub;
        while ((sub = pending.poll()) != null) {
            pendingCount.decrementAndGet();
            if (sub.isClosed()) {
                continue;
            }
            String ours = replicaVersion;
            if (!ours.equals(sub.replicaVersion)) {
                rejectReplicaVersion(sub, ours);
                continue;
            }
            // Another round of a subscriber already registered joins again as a new one does: at the
            // stream position of its snapshot, and after the transaction open there.
            forwarder.remove(sub);
            sub.startRound();
            forwarder.add(sub);
            storer.enqueueCatchup(new CatchupRunner.Request(sub, ours, sub.watermark()));
        }
    }

    /**
     * Queues another catch-up round of a registered subscriber whose backlog was dropped (see
     * {@link Subscriber}): it is registered again, from its watermark, like a new subscriber but
     * outside the bound of waiting registrations (it is not a new connection). Never blocks.
     */
    void catchUpAgain(Subscriber sub) {
        counters.catchupRepeated();
        pendingCount.incrementAndGet();
        queue(sub);
    }

    /** Removes a subscriber that unsubscribed ({@code cause == null}) or failed; from any thread. */
    void detach(Subscriber sub, Throwable cause) {
        if (sub == null) {
            return;
        }
        forwarder.remove(sub);
        if (pending.remove(sub)) {
            pendingCount.decrementAndGet();
        }
        if (cause != null) {
            counters.subscriberDropped();
            LOG.warn("change-streamer: subscriber {} disconnected: {}", sub.id, cause.getMessage());
        } else {
            LOG.info("change-streamer: subscriber {} unsubscribed at {} (acked {})", sub.id, sub.watermark(), sub.acked());
        }
    }

    /**
     * Fails every waiting and registered subscription and removes them (no error frame: clients
     * reconnect); a rollback already queued for a registered one is delivered first.
     *
     * @return how many were failed
     */
    int failAll(Throwable cause) {
        int n = failPending(cause);
        for (Subscriber s : forwarder.subscribers()) {
            s.failAfterQueued(cause);
            forwarder.remove(s);
            n++;
        }
        return n;
    }

    /** Ends every subscription because the streamer stopped; registered ones get what is queued first. */
    void endAll(Throwable cause) {
        ended = cause;
        failPending(cause);
        for (Subscriber s : forwarder.subscribers()) {
            s.failAfterQueued(cause);
        }
    }

    private int failPending(Throwable cause) {
        int n = 0;
        Subscriber sub;
        while ((sub = pending.poll()) != null) {
            pendingCount.decrementAndGet();
            sub.fail(cause);
            n++;
        }
        return n;
    }

    /** @param version the replica version subscribers must have; {@code null} while re-syncing */
    void replicaVersion(String version) {
        replicaVersion = version;
    }

    String replicaVersion() {
        return replicaVersion;
    }

    /** Sets the {@code status} frame new subscribers get first, without sending it to anyone. */
    void statusForNewSubscribers(String json) {
        latestStatusJson = json;
    }

    /** Sets the {@code status} frame new subscribers get first and sends it to the registered ones. */
    void publishStatus(String json) {
        latestStatusJson = json;
        forwarder.sendStatus(json);
    }

    /** @return the running storer, or {@code null} between streams; for status only */
    Storer storer() {
        return storer;
    }

    int pendingCount() {
        return pendingCount.get();
    }

    List<Subscriber> subscribers() {
        return forwarder.subscribers();
    }
}

package org.zrm.changesource.pg.internal.stream;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;

/**
 * Lets several producers share one change stream, one transaction at a time (upstream's
 * {@code ChangeStreamMultiplexer}): the replication pump and the backfill manager.
 *
 * <p><b>Reservations.</b> A producer {@linkplain #tryReserve reserves} the stream before it pushes
 * a transaction and {@linkplain #release releases} it with the watermark of the last transaction it
 * committed. A free stream is granted at once, with the last released watermark; otherwise the
 * request waits, and requests are granted in FIFO order. {@link #waiterDelayNanos()} tells the
 * holder how long the oldest request has waited, so that it can yield between transactions.
 * Statuses need no reservation (they may appear anywhere in the stream).
 *
 * <p><b>No thread hop for the live stream.</b> The pump pushes its own batches from its own thread
 * straight into the consumer's {@link MessageBuffer} ({@link #pushAll}); it never blocks here. When
 * the stream is reserved by someone else, {@link #tryReserve} queues the pump and returns an
 * ungranted reservation; the pump then stops reading the socket until the grant wakes it.
 *
 * <p><b>Bounds.</b> Messages go into the consumer's {@link MessageBuffer}, bounded in messages and
 * bytes. At the bound the pump stops reading the socket (TCP then throttles Postgres) and a
 * blocking producer ({@link #push}) waits for the consumer; neither drops anything. At most
 * {@link #MAX_WAITERS} reservation requests can wait; one more is a programming error
 * ({@link IllegalStateException}), since each producer has at most one request outstanding.
 *
 * <p><b>Listeners</b> see every message pushed, statuses the consumer never gets included, on the
 * pushing thread and in stream order for transactional messages (the pusher holds the
 * reservation while it notifies). A listener must be cheap and must not block.
 */
public final class ChangeStreamMultiplexer {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeStreamMultiplexer.class);

    /** The replication pump's producer name. */
    public static final String REPLICATION = "replication";

    /** Most reservation requests that may wait at once (two producers exist today). */
    public static final int MAX_WAITERS = 8;

    /** Sees every message pushed to the stream. */
    @FunctionalInterface
    public interface Listener {
        /** Called on the pushing thread; must not block and should not throw. */
        void onChange(ChangeStreamMessage message);
    }

    /** A producer that is told when the stream ends. */
    @FunctionalInterface
    public interface Cancelable {
        /** The stream ended (closed or failed); stop producing and release resources. */
        void cancel();
    }

    /** A granted or pending right to push one or more transactions. */
    public static final class Reservation {
        private final String producer;
        private final long requestedNanos;
        private final Runnable onGrant;
        private volatile String watermark;

        private Reservation(String producer, long requestedNanos, Runnable onGrant) {
            this.producer = producer;
            this.requestedNanos = requestedNanos;
            this.onGrant = onGrant;
        }

        /** @return whether the reservation has been granted (it then stays granted until released) */
        public boolean granted() {
            return watermark != null;
        }

        /** @return the watermark of the last transaction released before the grant, or null if not granted */
        public String watermark() {
            return watermark;
        }

        /** @return the producer's name, for logs */
        public String producer() {
            return producer;
        }
    }

    private final MessageBuffer buffer;
    private final LongSupplier nanoClock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition grantedOrEnded = lock.newCondition();
    private final ArrayDeque<Reservation> waiters = new ArrayDeque<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final List<Cancelable> producers = new CopyOnWriteArrayList<>();
    // Guarded by lock. lastWatermark is null exactly while holder is not.
    private String lastWatermark;
    private volatile Reservation holder;
    /** Whether {@code waiters} is non-empty; written under the lock, read without it. */
    private volatile boolean requested;
    private ChangeSourceException end;
    // Longest wait of any grant, per producer name, for status and tests.
    private final AtomicLong maxReplicationWaitNanos = new AtomicLong();
    private final AtomicLong replicationWaits = new AtomicLong();

    /**
     * @param lastWatermark the watermark the stream starts after (the first reservation gets it)
     * @param buffer the consumer's buffer
     */
    public ChangeStreamMultiplexer(String lastWatermark, MessageBuffer buffer) {
        this(lastWatermark, buffer, System::nanoTime);
    }

    ChangeStreamMultiplexer(String lastWatermark, MessageBuffer buffer, LongSupplier nanoClock) {
        this.lastWatermark = Objects.requireNonNull(lastWatermark, "lastWatermark");
        this.buffer = Objects.requireNonNull(buffer, "buffer");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    /** Adds a listener; call before producers start. */
    public ChangeStreamMultiplexer addListener(Listener l) {
        listeners.add(Objects.requireNonNull(l, "listener"));
        return this;
    }

    /** Adds a producer to cancel when the stream ends; cancelled at once if it already ended. */
    public ChangeStreamMultiplexer addProducer(Cancelable p) {
        producers.add(Objects.requireNonNull(p, "producer"));
        boolean ended;
        lock.lock();
        try {
            ended = end != null;
        } finally {
            lock.unlock();
        }
        if (ended) {
            cancelQuietly(p);
        }
        return this;
    }

    /**
     * Requests the reservation without blocking.
     *
     * @param producer name for logs
     * @param onGrant run (on the releasing thread, outside any lock) when a waiting request is
     *     granted later; not run if the request is granted at once; may be {@code null}
     * @return the request: {@linkplain Reservation#granted() granted} if the stream was free, else
     *     queued
     * @throws IllegalStateException if {@link #MAX_WAITERS} requests already wait
     */
    public Reservation tryReserve(String producer, Runnable onGrant) {
        Reservation r = new Reservation(producer, nanoClock.getAsLong(), onGrant);
        lock.lock();
        try {
            if (holder == null) {
                r.watermark = lastWatermark;
                lastWatermark = null;
                holder = r;
                return r;
            }
            if (waiters.size() >= MAX_WAITERS) {
                throw new IllegalStateException(MAX_WAITERS + " producers already wait for the change stream");
            }
            waiters.addLast(r);
            requested = true;
        } finally {
            lock.unlock();
        }
        // A holder waiting for room (awaitRoom) gives the stream up for this request; outside the
        // lock, since the buffer's lock is never taken inside this one.
        buffer.wakeWaitingProducers();
        return r;
    }

    /**
     * Reserves the stream, waiting for the current holder to release it.
     *
     * @param producer name for logs
     * @return the granted reservation
     * @throws ChangeSourceException the end of the stream, if it ended before the grant
     * @throws InterruptedException if interrupted while waiting; the request is withdrawn
     */
    public Reservation reserve(String producer) throws ChangeSourceException, InterruptedException {
        Reservation r = tryReserve(producer, null);
        if (r.granted()) {
            return r;
        }
        lock.lock();
        try {
            while (!r.granted()) {
                if (end != null) {
                    waiters.remove(r);
                    requested = !waiters.isEmpty();
                    throw end;
                }
                try {
                    grantedOrEnded.await();
                } catch (InterruptedException e) {
                    boolean removed = waiters.remove(r);
                    requested = !waiters.isEmpty();
                    if (!removed && r.granted()) {
                        // Granted while being interrupted: pass the stream on unchanged.
                        releaseLocked(r, r.watermark());
                    }
                    throw e;
                }
            }
            return r;
        } finally {
            lock.unlock();
        }
    }

    /** Withdraws a request that was not granted; releases it (unchanged) if it was. */
    public void withdraw(Reservation r) {
        Runnable grant = null;
        lock.lock();
        try {
            boolean removed = waiters.remove(r);
            requested = !waiters.isEmpty();
            if (!removed && holder == r) {
                grant = releaseLocked(r, r.watermark());
            }
        } finally {
            lock.unlock();
        }
        runGrant(grant);
    }

    /**
     * @return how long the oldest waiting request has waited, in nanoseconds (at least 1), or -1 if
     *     none waits
     */
    public long waiterDelayNanos() {
        lock.lock();
        try {
            Reservation first = waiters.peekFirst();
            return first == null ? -1 : Math.max(1, nanoClock.getAsLong() - first.requestedNanos);
        } finally {
            lock.unlock();
        }
    }

    /** @return the number of waiting requests */
    int waiterCount() {
        lock.lock();
        try {
            return waiters.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return whether a request waits (cheaper than {@link #waiterDelayNanos()}: no lock, no clock read) */
    public boolean hasWaiters() {
        return requested;
    }

    /**
     * Waits until the holder's next {@link #push} would not wait for the consumer, or until another
     * producer requests the stream, whichever comes first. A holder that waited inside
     * {@link #push} instead would keep a live transaction that asks meanwhile waiting for the
     * consumer as well; with this it can commit and release first, and push once it holds the
     * stream again.
     *
     * @param r the held reservation, or {@code null} to wait for room only (nothing held)
     * @return {@code true} if the consumer has room; {@code false} if a request waits for the stream
     * @throws IllegalStateException if {@code r} is not null and does not hold the stream
     * @throws ChangeSourceException the end of the stream
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitRoom(Reservation r) throws ChangeSourceException, InterruptedException {
        if (r == null) {
            return buffer.awaitBelow(BLOCKING_PRODUCER_MAX_BUFFERED_BYTES, () -> false);
        }
        checkHolder(r);
        return buffer.awaitBelow(BLOCKING_PRODUCER_MAX_BUFFERED_BYTES, () -> requested);
    }

    /**
     * Releases the reservation after the holder's last commit.
     *
     * @param r the held reservation
     * @param newWatermark the watermark of the last transaction the holder committed (its
     *     reservation's watermark if it committed none)
     * @throws IllegalStateException if {@code r} does not hold the stream
     */
    public void release(Reservation r, String newWatermark) {
        Objects.requireNonNull(newWatermark, "newWatermark");
        Runnable grant;
        lock.lock();
        try {
            grant = releaseLocked(r, newWatermark);
        } finally {
            lock.unlock();
        }
        runGrant(grant);
    }

    private Runnable releaseLocked(Reservation r, String newWatermark) {
        if (holder != r) {
            throw new IllegalStateException("release() by " + r.producer() + ", which does not hold the change stream");
        }
        Reservation next = waiters.pollFirst();
        requested = !waiters.isEmpty();
        if (next == null) {
            holder = null;
            lastWatermark = newWatermark;
            return null;
        }
        holder = next;
        next.watermark = newWatermark;
        long waited = nanoClock.getAsLong() - next.requestedNanos;
        if (REPLICATION.equals(next.producer)) {
            replicationWaits.incrementAndGet();
            maxReplicationWaitNanos.accumulateAndGet(waited, Math::max);
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("{} waited {} ms for the change stream reservation", next.producer,
                    String.format(java.util.Locale.ROOT, "%.3f", waited / 1e6));
        }
        grantedOrEnded.signalAll();
        return next.onGrant;
    }

    private static void runGrant(Runnable grant) {
        if (grant != null) {
            grant.run();
        }
    }

    /**
     * Most bytes (estimated in-memory size) a blocking producer may have waiting in the buffer
     * before it pushes more. The buffer is shared: a replication transaction queued behind a
     * backfill's messages waits until the consumer has stored and forwarded them all, however
     * quickly the backfill yielded the reservation. With the buffer's own bound (16 MiB by
     * default) that was up to 16 MiB of backfill rows in front of a live commit, 0.1 to 0.4 s at
     * the rate a 2-core machine forwards them (the backfill benchmark's p99). 64 KiB still keeps
     * one backfill message (one snapshot {@code COPY} message, about 200 KB of estimated size) ready
     * for the consumer while the producer reads the next: a push waits only until the buffer is
     * below the bound, and one message may take it past. Against 256 KiB (session 18, six runs
     * each) the time from the pump to the forwarded live commit during a backfill fell from a p99
     * of 8–16 ms (median 12) to 8–14 ms (median 8), with the same backfill rate.
     */
    public static final long BLOCKING_PRODUCER_MAX_BUFFERED_BYTES = 64 * 1024;

    /**
     * Pushes one message of the holder's transaction, waiting while the buffer is at its bound or
     * holds {@link #BLOCKING_PRODUCER_MAX_BUFFERED_BYTES} (the consumer's back-pressure on a
     * blocking producer). A {@code commit} waits only at the buffer's own bound: it is what lets
     * the holder release the stream, and holding it back behind the holder's own rows would only
     * keep a waiting live transaction waiting longer (it overshoots the lower bound by one small
     * message).
     *
     * @throws IllegalStateException if {@code r} does not hold the stream
     * @throws ChangeSourceException the end of the stream
     * @throws InterruptedException if interrupted while waiting for room; nothing was pushed
     */
    public void push(Reservation r, ChangeStreamMessage message, int cost)
            throws ChangeSourceException, InterruptedException {
        checkHolder(r);
        notifyListeners(message);
        buffer.offerWhenBelow(message, cost,
                message instanceof CommitMessage ? Long.MAX_VALUE : BLOCKING_PRODUCER_MAX_BUFFERED_BYTES);
    }

    /**
     * Pushes messages {@code [from, to)} of a batch without blocking (the pump's path; see
     * {@link MessageBuffer} for how far a batch may overshoot the bounds). Statuses that the
     * consumer does not need (no {@code ack}, no lag report) are shown to listeners only.
     *
     * @param r the held reservation, or {@code null} if the range holds statuses only
     * @throws IllegalStateException if the range holds a transactional message and {@code r} does
     *     not hold the stream
     */
    void pushAll(Reservation r, List<ChangeStreamMessage> batch, IntArray costs, int from, int to) {
        if (r != null) {
            checkHolder(r);
        }
        boolean notify = !listeners.isEmpty();
        for (int i = from; i < to; i++) {
            ChangeStreamMessage m = batch.get(i);
            if (r == null && !(m instanceof StatusMessage)) {
                throw new IllegalStateException("push() called without reserve()-ing the stream");
            }
            if (notify) {
                notifyListeners(m);
            }
        }
        buffer.offerRange(batch, costs, from, to, ChangeStreamMultiplexer::forwards);
    }

    /** Pushes a status, which needs no reservation. */
    public void pushStatus(StatusMessage status, int cost) {
        notifyListeners(status);
        if (forwards(status)) {
            buffer.offer(status, cost);
        }
    }

    /**
     * Whether the consumer needs the message: everything but statuses without {@code ack} and
     * without a lag report (upstream forwards only those, to spare the change streamer churn).
     */
    static boolean forwards(ChangeStreamMessage m) {
        return !(m instanceof StatusMessage s) || Boolean.TRUE.equals(s.status().ack()) || s.status().lagReport() != null;
    }

    private void checkHolder(Reservation r) {
        if (r == null || holder != r) {
            throw new IllegalStateException("push() called without reserve()-ing the stream");
        }
    }

    private void notifyListeners(ChangeStreamMessage m) {
        for (Listener l : listeners) {
            try {
                l.onChange(m);
            } catch (RuntimeException e) {
                // A listener's bug must not corrupt the stream (the message is pushed regardless).
                LOG.error("change stream listener {} failed on a {} message", l, m.type(), e);
            }
        }
    }

    /**
     * Ends the multiplexer: waiting requests fail with {@code reason} and every producer is
     * cancelled (once). The buffer itself is ended by its owner. Idempotent.
     */
    public void fail(ChangeSourceException reason) {
        Objects.requireNonNull(reason, "reason");
        lock.lock();
        try {
            if (end != null) {
                return;
            }
            end = reason;
            grantedOrEnded.signalAll();
        } finally {
            lock.unlock();
        }
        for (Cancelable p : producers) {
            cancelQuietly(p);
        }
    }

    private static void cancelQuietly(Cancelable p) {
        try {
            p.cancel();
        } catch (RuntimeException e) {
            LOG.error("cancelling change stream producer {} failed", p, e);
        }
    }

    /** @return how many times the replication pump had to wait for a reservation */
    public long replicationWaits() {
        return replicationWaits.get();
    }

    /** @return the longest the replication pump waited for a reservation, in nanoseconds */
    public long maxReplicationWaitNanos() {
        return maxReplicationWaitNanos.get();
    }
}

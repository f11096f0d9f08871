package org.zrm.changestreamer.internal;

import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/**
 * One subscriber's outgoing message stream (the {@link Subscription} handed to the transport).
 *
 * <p>Appends never block. Every appended message counts against the subscriber's byte bound until
 * it is consumed; the messages in between are "buffered" whether or not the transport has taken
 * them yet. <b>At the bound</b>: {@link #append} refuses the message and reports {@code false}; the
 * owner then fails the subscription (retryable, no error frame) so that the client reconnects and
 * catches up from the change log instead of holding the heap. A single message larger than the
 * bound is still accepted when nothing else is buffered, so that one huge transaction row can
 * always be delivered.
 *
 * <p>Consumption must follow the append order. A {@link SubscriptionMessage#consumed()} that skips
 * an unconsumed message is a protocol violation (upstream hazard H4): the subscription fails with
 * {@link OutOfOrderAckException} instead of throwing into the transport.
 */
final class Outbox implements Subscription {

    /** Why a message's push settled: the client consumed it, or the subscription ended first. */
    enum Result { CONSUMED, UNCONSUMED }

    private static final int INITIAL_CAPACITY = 16;

    private final String id;
    private final long maxBufferedBytes;
    private final Runnable onClose;
    private final Consumer<Throwable> onFailure;

    // All guarded by "this".
    /**
     * The unconsumed messages, oldest first, in a ring: {@code size} of them from {@code head},
     * of which the first {@code taken} were taken by the transport and the rest wait for it. One
     * ring, not a queue of untaken and another of unconsumed messages: a fan-out appends each
     * message to every subscriber, and the second queue was one more store per message and
     * subscriber. It grows by doubling and never shrinks; the byte bound limits what it holds.
     */
    private Message[] ring = new Message[INITIAL_CAPACITY];
    private int head;
    private int size;
    private int taken;
    private long bufferedBytes;
    private long nextSeq;
    private boolean ended;        // no more appends; take() returns null once untaken is empty
    private boolean closed;       // closed by the transport or failed: everything is released
    private Throwable failure;
    private Throwable failAfterTaken; // set by failAfterQueued: fail once untaken is drained
    private long consumedMessages;
    /** The transport's {@link #onReady} callback; {@code null} for a transport that blocks in take(). */
    private volatile Runnable readyListener;

    /**
     * @param id subscriber id, for messages
     * @param maxBufferedBytes bound on appended-but-unconsumed characters
     * @param onClose called once when the transport closes the subscription (unsubscribe)
     * @param onFailure called once when the subscription fails from inside (bound, protocol error)
     */
    Outbox(String id, long maxBufferedBytes, Runnable onClose, Consumer<Throwable> onFailure) {
        this.id = id;
        this.maxBufferedBytes = maxBufferedBytes;
        this.onClose = onClose;
        this.onFailure = onFailure;
    }

    /**
     * Appends a message.
     *
     * @param json the downstream text
     * @param commitWatermark the commit watermark if this is a {@code commit} frame, else {@code null}
     * @param onConsumed called with the watermark when a commit frame is consumed; may be {@code null}
     * @return the message, or {@code null} if the subscription has ended or the byte bound is hit
     *     (in the latter case the caller must fail the subscription)
     */
    Message append(String json, String commitWatermark, Consumer<String> onConsumed) {
        return append(json, null, commitWatermark, onConsumed);
    }

    /**
     * {@link #append(String, String, Consumer)} of a change that every subscriber shares, so that
     * the message hands out the change's one UTF-8 encoding ({@link SubscriptionMessage#utf8()}).
     *
     * @param onCommitConsumed called with the watermark when the change is a {@code commit} and is
     *     consumed
     */
    Message append(WatermarkedChange change, Consumer<String> onCommitConsumed) {
        return append(change.json(), change, commitWatermark(change), onCommitConsumed);
    }

    /**
     * @return the watermark a consumed {@code change} reports, if it is a {@code commit}; else
     *     {@code null}, and then its message calls no callback when consumed
     */
    private static String commitWatermark(WatermarkedChange change) {
        return change.isCommit() ? change.watermark() : null;
    }

    private Message append(String json, WatermarkedChange shared, String commitWatermark,
            Consumer<String> onConsumed) {
        Message m;
        synchronized (this) {
            if (ended || closed) {
                return null;
            }
            boolean wasIdle = taken == size;
            m = add(json, shared, commitWatermark, onConsumed);
            if (m == null || !wasIdle) {
                return m;
            }
            notifyAll();
        }
        signalReady();
        return m;
    }

    /**
     * Appends consecutive changes that every subscriber shares, nobody waiting on their results,
     * under one lock: the streamer fans out runs of a transaction's changes, and taking this lock
     * once per change and subscriber (shared with the subscriber's sender and ack reader) was most
     * of the stream loop's fan-out. Stops at the byte bound, as {@link #append} does.
     *
     * @param onCommitConsumed called with the watermark when a {@code commit} among them is
     *     consumed
     * @return how many were appended, from the first: fewer than {@code n} if the subscription has
     *     ended or the byte bound is hit (in the latter case the caller must fail the subscription)
     */
    int appendAll(WatermarkedChange[] changes, int n, Consumer<String> onCommitConsumed) {
        int appended = 0;
        synchronized (this) {
            if (ended || closed) {
                return 0;
            }
            boolean wasIdle = taken == size;
            while (appended < n) {
                WatermarkedChange c = changes[appended];
                if (add(c.json(), c, commitWatermark(c), onCommitConsumed) == null) {
                    break;
                }
                appended++;
            }
            if (appended == 0 || !wasIdle) {
                return appended;
            }
            notifyAll();
        }
        signalReady();
        return appended;
    }

    /**
     * Adds a message within the byte bound; the caller holds the lock and wakes the sender if the
     * queue was idle. A sender waits, or is told to look, only on an idle queue: later appends
     * find it pulling, and it asks {@link #isReady()} before it stops.
     *
     * @return the message, or {@code null} at the bound
     */
    private Message add(String json, WatermarkedChange shared, String commitWatermark, Consumer<String> onConsumed) {
        long chars = json.length();
        if (bufferedBytes > 0 && bufferedBytes + chars > maxBufferedBytes) {
            return null;
        }
        Message m = new Message(nextSeq++, json, shared, commitWatermark, onConsumed);
        bufferedBytes += chars;
        push(m);
        return m;
    }

    /** Runs the transport's {@link #onReady} callback, outside this lock (it schedules a pull). */
    private void signalReady() {
        Runnable listener = readyListener;
        if (listener != null) {
            listener.run();
        }
    }

    /** @return whether {@code size} more characters would exceed the bound now */
    synchronized boolean wouldExceed(long size) {
        return bufferedBytes > 0 && bufferedBytes + size > maxBufferedBytes;
    }

    /** Ends the stream normally after the messages appended so far. */
    void end() {
        synchronized (this) {
            ended = true;
            notifyAll();
        }
        signalReady();
    }

    /**
     * Ends the stream at once because of {@code cause}: untaken messages are dropped and every
     * unconsumed message settles as {@link Result#UNCONSUMED}. The client reconnects.
     */
    void fail(Throwable cause) {
        if (release(cause)) {
            onFailure.accept(cause);
        }
    }

    /**
     * Ends the stream because of {@code cause} after the messages appended so far have been taken,
     * then fails it as {@link #fail} does. Used when the stream itself ends (reset, stop) right
     * after the streamer appended a final frame (the {@code rollback} of an interrupted
     * transaction): the client sees that frame before the close instead of losing it to a race
     * with the failure. Nothing more can be appended; the untaken messages stay within the byte
     * bound they were appended under, and a transport that closes instead of draining releases
     * them as usual.
     */
    void failAfterQueued(Throwable cause) {
        boolean queued;
        synchronized (this) {
            if (ended || closed) {
                return;
            }
            ended = true;
            queued = taken < size;
            if (queued) {
                failAfterTaken = cause;
            }
        }
        if (!queued) {
            fail(cause);
            return;
        }
        // take() or isFinished() fails the subscription once it finds the queue drained; a
        // non-blocking sender is told to pull the rest first.
        signalReady();
    }

    @Override
    public SubscriptionMessage take() throws InterruptedException {
        Throwable cause;
        synchronized (this) {
            while (taken == size && !ended && !closed) {
                wait();
            }
            if (closed) {
                return null;
            }
            if (taken < size) {
                return nextUntaken();
            }
            cause = failAfterTaken;
        }
        if (cause != null) {
            fail(cause);
        }
        return null;
    }

    @Override
    public synchronized SubscriptionMessage poll() {
        return closed || taken == size ? null : nextUntaken();
    }

    @Override
    public synchronized int poll(SubscriptionMessage[] into) {
        if (closed) {
            return 0;
        }
        int n = Math.min(into.length, size - taken);
        for (int i = 0; i < n; i++) {
            into[i] = nextUntaken();
        }
        return n;
    }

    @Override
    public synchronized boolean isReady() {
        return closed || ended || taken < size;
    }

    @Override
    public boolean isFinished() {
        Throwable cause;
        synchronized (this) {
            if (closed) {
                return true;
            }
            if (!ended || taken < size) {
                return false;
            }
            cause = failAfterTaken;
        }
        if (cause != null) {
            fail(cause);
        }
        return true;
    }

    @Override
    public void onReady(Runnable listener) {
        readyListener = listener;
        if (isReady()) {
            listener.run();
        }
    }

    @Override
    public synchronized Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public void close() {
        if (release(null)) {
            onClose.run();
        }
    }

    /** @return {@code true} if this call released the subscription */
    private boolean release(Throwable cause) {
        Message[] pending;
        synchronized (this) {
            if (closed) {
                return false;
            }
            closed = true;
            ended = true;
            failure = cause;
            pending = new Message[size];
            for (int i = 0; i < size; i++) {
                int at = (head + i) & (ring.length - 1);
                pending[i] = ring[at];
                ring[at] = null;
                pending[i].settled = Result.UNCONSUMED;
            }
            head = 0;
            size = 0;
            taken = 0;
            bufferedBytes = 0;
            notifyAll();
        }
        for (Message m : pending) {
            m.completeWaiting(Result.UNCONSUMED);
        }
        signalReady();
        return true;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One lock for the run: a client acks every frame, so the reader used to take this lock,
     * which the stream loop appending and the sender pulling also take, once per message.
     */
    @Override
    public void consumed(SubscriptionMessage[] messages, int from, int n) {
        int end = from + n;
        int i = from;
        long firstSeq;
        Message skipping = null;
        SubscriptionMessage foreign = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            firstSeq = nextUnconsumedSeq();
            for (; i < end; i++) {
                if (!(messages[i] instanceof Message m) || m.outbox() != this) {
                    // Refused after the messages before it are settled, callbacks included, as
                    // one call per message would: throwing here would leave them consumed with
                    // their commit callbacks and futures never run.
                    foreign = messages[i];
                    break;
                }
                long next = nextUnconsumedSeq();
                if (m.seq < next) {
                    continue; // consumed before: idempotent
                }
                if (m.seq > next) {
                    skipping = m;
                    break;
                }
                removeOldest();
                bufferedBytes -= m.json.length();
                consumedMessages++;
                m.settled = Result.CONSUMED;
            }
        }
        // The callbacks run outside the lock, in order, for the messages this call consumed: those
        // with consecutive sequence numbers from the oldest unconsumed one it found.
        long expected = firstSeq;
        for (int j = from; j < i; j++) {
            Message m = (Message) messages[j];
            if (m.seq == expected) {
                expected++;
                if (m.commitWatermark != null && m.onConsumed != null) {
                    m.onConsumed.accept(m.commitWatermark);
                }
                m.completeWaiting(Result.CONSUMED);
            }
        }
        if (foreign != null) {
            throw new IllegalArgumentException(foreign + " is not a message of subscriber " + id);
        }
        if (skipping != null) {
            fail(new OutOfOrderAckException("subscriber " + id + " acknowledged message " + (skipping.seq + 1)
                    + " before message " + (nextUnconsumedSeqSafe() + 1)));
        }
    }

    private long nextUnconsumedSeq() {
        return size == 0 ? nextSeq : ring[head].seq;
    }

    private void push(Message m) {
        if (size == ring.length) {
            Message[] grown = new Message[ring.length << 1];
            for (int i = 0; i < size; i++) {
                grown[i] = ring[(head + i) & (ring.length - 1)];
            }
            ring = grown;
            head = 0;
        }
        ring[(head + size) & (ring.length - 1)] = m;
        size++;
    }

    /** @return the oldest message not yet taken; there must be one */
    private Message nextUntaken() {
        return ring[(head + taken++) & (ring.length - 1)];
    }

    private void removeOldest() {
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        size--;
        // A message is consumed after it was taken; one consumed before (which no transport does)
        // is not handed out any more.
        taken = Math.max(0, taken - 1);
    }

    private synchronized long nextUnconsumedSeqSafe() {
        return nextUnconsumedSeq();
    }

    /** @return characters appended but not consumed */
    synchronized long bufferedBytes() {
        return bufferedBytes;
    }

    /** @return messages appended but not consumed */
    synchronized int pendingMessages() {
        return size;
    }

    /** @return messages consumed so far */
    synchronized long consumedMessages() {
        return consumedMessages;
    }

    /** @return whether the subscription has been closed or failed */
    synchronized boolean isClosed() {
        return closed;
    }

    /** One appended message; it settles once, when consumed or released ({@link #result()}). */
    final class Message implements SubscriptionMessage {
        private final long seq;
        private final String json;
        /** The change this message carries, if it is shared with other subscribers; else null. */
        private final WatermarkedChange shared;
        private final String commitWatermark;
        private final Consumer<String> onConsumed;
        /**
         * How the message settled, once it has. Guarded by the outbox, like the ring: settling
         * happens as the message leaves the ring, and a lock of its own per message was one more
         * lock per message and subscriber on the ack path.
         */
        private Result settled;
        /**
         * Made only when someone asks ({@link #result()}): most live messages are fanned out
         * untracked, and a future per message and subscriber was pure overhead for them. Written
         * under the outbox's lock; volatile so that the thread that settled the message can
         * complete it after leaving the lock (once the message has settled, a future asked for is
         * made completed).
         */
        private volatile CompletableFuture<Result> result;

        private Message(long seq, String json, WatermarkedChange shared, String commitWatermark,
                Consumer<String> onConsumed) {
            this.seq = seq;
            this.json = json;
            this.shared = shared;
            this.commitWatermark = commitWatermark;
            this.onConsumed = onConsumed;
        }

        /** @return completes with how the message settled: consumed, or released unconsumed */
        CompletableFuture<Result> result() {
            synchronized (Outbox.this) {
                if (result == null) {
                    result = settled != null ? CompletableFuture.completedFuture(settled) : new CompletableFuture<>();
                }
                return result;
            }
        }

        /**
         * Completes the future of a message that has just settled as {@code how}, if one was asked
         * for before it did; called once per message, by the thread that settled it, after the
         * outbox's lock.
         */
        private void completeWaiting(Result how) {
            CompletableFuture<Result> waiting = result;
            if (waiting != null) {
                waiting.complete(how);
            }
        }

        private Outbox outbox() {
            return Outbox.this;
        }

        @Override
        public String json() {
            return json;
        }

        @Override
        public ByteBuffer utf8() {
            return shared != null ? shared.utf8() : SubscriptionMessage.super.utf8();
        }

        @Override
        public ByteBuffer sharedUtf8() {
            return shared != null ? shared.sharedUtf8() : SubscriptionMessage.super.sharedUtf8();
        }

        @Override
        public void consumed() {
            Outbox.this.consumed(new SubscriptionMessage[] {this}, 0, 1);
        }

        @Override
        public String toString() {
            return "message " + (seq + 1) + " of " + id;
        }
    }

    /** A subscriber acknowledged messages out of order (upstream hazard H4). */
    static final class OutOfOrderAckException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        OutOfOrderAckException(String message) {
            super(message);
        }
    }

    /** The subscriber buffered more than its bound of unconsumed bytes. */
    static final class BufferLimitException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        BufferLimitException(String message) {
            super(message);
        }
    }
}

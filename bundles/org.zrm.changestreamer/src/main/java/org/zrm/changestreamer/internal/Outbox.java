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
 *
 * <p><b>Shared entries.</b> A change fanned out without anyone waiting on it ({@link #appendAll})
 * is queued as the streamer's one {@link WatermarkedChange}, which every subscriber's outbox
 * holds, not as a {@link Message} of this outbox: a fan-out made, handed between threads and
 * settled an object per change and subscriber, each written on one core and read or written on
 * another. A transport that acknowledges by count ({@link #pollShared}, {@link #consumedNext})
 * never sees anything else for them; one that takes messages one by one ({@link #take},
 * {@link #poll()}) gets a {@link Message} made for the entry as it takes it, so the
 * message-by-message rules above hold for it unchanged. An entry's sequence number is its place
 * in the stream: {@code headSeq} for the oldest unconsumed one, counting on from there.
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
     * The unconsumed entries, oldest first, in a ring: {@code size} of them from {@code head},
     * of which the first {@code taken} were taken by the transport and the rest wait for it. An
     * entry is a {@link Message} or a shared {@link WatermarkedChange} (see the class
     * description). One ring, not a queue of untaken and another of unconsumed messages: a
     * fan-out appends each message to every subscriber, and the second queue was one more store
     * per message and subscriber. It grows by doubling and never shrinks; the byte bound limits
     * what it holds.
     */
    private Object[] ring = new Object[INITIAL_CAPACITY];
    private int head;
    private int size;
    private int taken;
    private long bufferedBytes;
    /** The sequence number of the entry at {@code head} (of the next one appended if empty). */
    private long headSeq;
    /** Called with the watermark of a consumed shared {@code commit}; set by {@link #appendAll}. */
    private Consumer<String> sharedCommitConsumed;
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
            // One callback for every shared entry, since an entry cannot carry its own: the
            // streamer passes its subscriber's, the same one each time.
            sharedCommitConsumed = onCommitConsumed;
            boolean wasIdle = taken == size;
            while (appended < n && addShared(changes[appended])) {
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

    /** Adds a shared entry within the byte bound, as {@link #add} adds a message; the caller holds the lock. */
    private boolean addShared(WatermarkedChange c) {
        long chars = c.jsonLength();
        if (exceeds(chars)) {
            return false;
        }
        bufferedBytes += chars;
        push(c);
        return true;
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
        if (exceeds(chars)) {
            return null;
        }
        Message m = new Message(headSeq + size, json, shared, commitWatermark, onConsumed);
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
        return exceeds(size);
    }

    /**
     * The byte bound's rule, the caller holding the lock: {@code chars} more exceed it unless
     * nothing is buffered (one message larger than the bound still passes alone).
     */
    private boolean exceeds(long chars) {
        return exceedsBound(bufferedBytes, chars, maxBufferedBytes);
    }

    /**
     * The byte bound's rule for any count of buffered characters: {@code more} on top of
     * {@code buffered} exceed {@code bound} unless nothing is buffered. The subscriber applies it
     * to its outbox and its backlog together.
     */
    static boolean exceedsBound(long buffered, long more, long bound) {
        return buffered > 0 && buffered + more > bound;
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

    /**
     * {@inheritDoc}
     *
     * <p>Shared entries are handed out as the streamer's {@link WatermarkedChange}s, the others as
     * this outbox's {@link Message}s.
     */
    @Override
    public synchronized int pollShared(SubscriptionMessage[] into) {
        if (closed) {
            return 0;
        }
        int n = Math.min(into.length, size - taken);
        int mask = ring.length - 1;
        for (int i = 0; i < n; i++) {
            into[i] = (SubscriptionMessage) ring[(head + taken++) & mask];
        }
        return n;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Callbacks (a {@code commit}'s, a waiting future) run after the lock, as for
     * {@link #consumed(SubscriptionMessage[], int, int)}: of the shared {@code commit}s only the
     * newest is reported, since a consumed commit implies the earlier ones and the subscriber
     * keeps the newest.
     */
    @Override
    public void consumedNext(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("negative count " + n);
        }
        String sharedCommit = null;
        Consumer<String> commitCallback;
        java.util.List<Message> settledMessages = null;
        int beyond;
        synchronized (this) {
            if (closed || n == 0) {
                return;
            }
            int k = Math.min(n, taken);
            beyond = n - k;
            // The ack reader consumes runs of dozens of entries, each a change the other
            // subscribers' readers touch too: one pass reads and clears each entry (a shared
            // change keeps its length and kind), and the ring's indices move once for the run.
            int mask = ring.length - 1;
            long chars = 0;
            for (int i = 0; i < k; i++) {
                int at = (head + i) & mask;
                Object e = ring[at];
                ring[at] = null;
                if (e instanceof WatermarkedChange c) {
                    chars += c.jsonLength();
                    if (c.isCommit()) {
                        sharedCommit = c.watermark();
                    }
                } else {
                    Message m = (Message) e;
                    chars += m.json.length();
                    m.settled = Result.CONSUMED;
                    if (settledMessages == null) {
                        settledMessages = new java.util.ArrayList<>();
                    }
                    settledMessages.add(m);
                }
            }
            advanceHead(k);
            bufferedBytes -= chars;
            consumedMessages += k;
            commitCallback = sharedCommitConsumed;
        }
        if (settledMessages != null) {
            for (Message m : settledMessages) {
                m.settle(Result.CONSUMED);
            }
        }
        if (sharedCommit != null && commitCallback != null) {
            commitCallback.accept(sharedCommit);
        }
        if (beyond > 0) {
            fail(new OutOfOrderAckException("subscriber " + id + " acknowledged " + beyond
                    + " message(s) more than it was sent"));
        }
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
        int settling = 0;
        synchronized (this) {
            if (closed) {
                return false;
            }
            closed = true;
            ended = true;
            failure = cause;
            // Only messages settle: a shared entry has nobody waiting on it.
            pending = new Message[size];
            for (int i = 0; i < size; i++) {
                int at = (head + i) & (ring.length - 1);
                if (ring[at] instanceof Message m) {
                    m.settled = Result.UNCONSUMED;
                    pending[settling++] = m;
                }
                ring[at] = null;
            }
            headSeq += size;
            head = 0;
            size = 0;
            taken = 0;
            bufferedBytes = 0;
            notifyAll();
        }
        for (int i = 0; i < settling; i++) {
            pending[i].completeWaiting(Result.UNCONSUMED);
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
        long unconsumedSeq = 0; // the oldest unconsumed message's, when one is skipped
        SubscriptionMessage foreign = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            firstSeq = headSeq;
            for (; i < end; i++) {
                if (!(messages[i] instanceof Message m) || m.outbox() != this) {
                    // Refused after the messages before it are settled, callbacks included, as
                    // one call per message would: throwing here would leave them consumed with
                    // their commit callbacks and futures never run.
                    foreign = messages[i];
                    break;
                }
                if (m.seq < headSeq) {
                    continue; // consumed before: idempotent
                }
                if (m.seq > headSeq) {
                    skipping = m;
                    unconsumedSeq = headSeq;
                    break;
                }
                ring[head] = null;
                advanceHead(1);
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
                m.settle(Result.CONSUMED);
            }
        }
        if (foreign != null) {
            throw new IllegalArgumentException(foreign + " is not a message of subscriber " + id);
        }
        if (skipping != null) {
            fail(new OutOfOrderAckException("subscriber " + id + " acknowledged message " + (skipping.seq + 1)
                    + " before message " + (unconsumedSeq + 1)));
        }
    }

    private void push(Object m) {
        if (size == ring.length) {
            Object[] grown = new Object[ring.length << 1];
            for (int i = 0; i < size; i++) {
                grown[i] = ring[(head + i) & (ring.length - 1)];
            }
            ring = grown;
            head = 0;
        }
        ring[(head + size) & (ring.length - 1)] = m;
        size++;
    }

    /**
     * @return the oldest message not yet taken, as a {@link Message} of this outbox: a shared
     *     entry is replaced by a message made for it now; there must be one
     */
    private Message nextUntaken() {
        int at = (head + taken) & (ring.length - 1);
        Object e = ring[at];
        Message m;
        if (e instanceof Message own) {
            m = own;
        } else {
            WatermarkedChange c = (WatermarkedChange) e;
            m = new Message(headSeq + taken, c.json(), c, commitWatermark(c), sharedCommitConsumed);
            ring[at] = m;
        }
        taken++;
        return m;
    }

    /**
     * Moves past the oldest {@code k} entries, {@code k <= size}, whose slots the caller has
     * already cleared (while reading them, so each slot is visited once).
     */
    private void advanceHead(int k) {
        head = (head + k) & (ring.length - 1);
        size -= k;
        headSeq += k;
        // A message is consumed after it was taken; one consumed before (which no transport does)
        // is not handed out any more.
        taken = Math.max(0, taken - k);
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

        /**
         * Runs what waits on a message that has just settled as {@code how}: its {@code commit}
         * callback if consumed, and its future if one was asked for. Called once per message, by
         * the thread that settled it, after the outbox's lock.
         */
        private void settle(Result how) {
            if (how == Result.CONSUMED && commitWatermark != null && onConsumed != null) {
                onConsumed.accept(commitWatermark);
            }
            completeWaiting(how);
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

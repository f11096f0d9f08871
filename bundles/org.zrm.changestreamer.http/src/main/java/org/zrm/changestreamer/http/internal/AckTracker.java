package org.zrm.changestreamer.http.internal;

import org.zrm.changestreamer.SubscriptionMessage;

/**
 * The frames of one connection that were sent and not yet acknowledged, in id order.
 *
 * <p>Upstream expects exactly one ack per frame, in order, and treats any other id as
 * "Unexpected ack" (an unhandled rejection in pipelined mode, spec H4). This port accepts the
 * upstream sequence and, because consuming a frame implies consuming every earlier one, also an
 * ack that skips ahead to any sent frame (it acknowledges all frames up to it). An ack for a frame
 * that was already acknowledged or never sent is a protocol error: {@link #ack} throws and the
 * connection is closed.
 *
 * <p>Frame ids are consecutive from 1, so a frame is stored as its message and its size in two
 * parallel rings, indexed from the oldest unacknowledged id: a fan-out records and settles one
 * frame per message and subscriber, and an object per frame (with a list per ack) was a good part
 * of what the send path allocated. The rings grow by doubling and never shrink; they hold at most
 * the frames of one send window ({@code send.maxUnackedChars}), since a frame is recorded only
 * once the window admitted it.
 */
final class AckTracker {

    /** Receives the messages of the frames an ack settles. */
    @FunctionalInterface
    interface Settled {
        /**
         * @param messages what the frames carried, oldest first, in {@code messages[0..n)}; frames
         *     nobody waits on are left out. The array is the tracker's and is reused by the next
         *     ack: read it during the call only.
         * @param n how many
         */
        void settled(SubscriptionMessage[] messages, int n);
    }

    private static final int INITIAL_CAPACITY = 64;

    // All guarded by this.
    private SubscriptionMessage[] messages = new SubscriptionMessage[INITIAL_CAPACITY];
    private long[] chars = new long[INITIAL_CAPACITY];
    /** Ring index of the oldest unacknowledged frame, whose id is {@code lastAcked + 1}. */
    private int head;
    private int size;
    private long lastAcked;
    /**
     * What {@link #ack} hands out, reused from ack to ack: the reader's only (acks come one at a
     * time), and an array per ack was the reader's allocation per read. Grows to the most frames
     * one ack settled, at most a send window's; not cleared, so it keeps up to that many settled
     * messages reachable until the next ack overwrites them.
     */
    private SubscriptionMessage[] settling = new SubscriptionMessage[INITIAL_CAPACITY];

    /**
     * Records consecutive frames before they are handed to the wire, so that no ack can arrive
     * first: {@code messages[from + i]} as frame {@code firstId + i}, of {@code frameChars[i]}
     * characters as the send window counts them, for {@code i < n}. One lock per batch of frames,
     * not per frame. The two arrays are indexed apart because the sender's are: it may resume a
     * batch of messages part-way, while it sizes the frames it sends from index 0.
     *
     * @param firstId the id after the previous frame's
     * @param messages what the frames carry; an element may be {@code null} for a frame nobody
     *     waits on
     */
    synchronized void sentAll(long firstId, SubscriptionMessage[] messages, int from, long[] frameChars, int n) {
        if (firstId != lastAcked + size + 1) {
            throw new IllegalStateException("frame " + firstId + " sent after frame " + (lastAcked + size));
        }
        while (size + n > this.messages.length) {
            grow();
        }
        int mask = this.messages.length - 1;
        for (int i = 0; i < n; i++) {
            int at = (head + size + i) & mask;
            this.messages[at] = messages[from + i];
            chars[at] = frameChars[i];
        }
        size += n;
    }

    /**
     * Removes the frames acknowledged by {@code id} and hands their messages to {@code each} at
     * once, oldest first, outside this lock. Called by one thread at a time (the connection's
     * reader).
     *
     * @return the characters of the acknowledged frames
     * @throws UnexpectedAckException if {@code id} is not a sent, unacknowledged frame
     */
    long ack(long id, Settled each) throws UnexpectedAckException {
        int k = 0;
        long total = 0;
        synchronized (this) {
            long first = lastAcked + 1;
            if (size == 0 || id < first || id > lastAcked + size) {
                throw new UnexpectedAckException("Unexpected ack for " + first + ": " + id);
            }
            int n = (int) (id - lastAcked);
            if (settling.length < n) {
                settling = new SubscriptionMessage[Math.max(n, settling.length << 1)];
            }
            for (int i = 0; i < n; i++) {
                int at = (head + i) & (messages.length - 1);
                if (messages[at] != null) {
                    settling[k++] = messages[at];
                }
                total += chars[at];
                messages[at] = null; // let the message go
            }
            head = (head + n) & (messages.length - 1);
            size -= n;
            lastAcked = id;
        }
        // The messages are handed out after the lock, which a consumer's callbacks must not run under.
        if (k > 0) {
            each.settled(settling, k);
        }
        return total;
    }

    synchronized int pendingCount() {
        return size;
    }

    private void grow() {
        int capacity = messages.length << 1;
        SubscriptionMessage[] m = new SubscriptionMessage[capacity];
        long[] c = new long[capacity];
        for (int i = 0; i < size; i++) {
            int at = (head + i) & (messages.length - 1);
            m[i] = messages[at];
            c[i] = chars[at];
        }
        messages = m;
        chars = c;
        head = 0;
    }

    /** An acknowledgement that matches no outstanding frame. */
    static final class UnexpectedAckException extends Exception {
        private static final long serialVersionUID = 1L;

        UnexpectedAckException(String message) {
            super(message);
        }
    }
}

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

    /** Receives each frame an ack settles, oldest first. */
    @FunctionalInterface
    interface Settled {
        /** @param message what the frame carried, or {@code null} for a frame nobody waits on */
        void settled(SubscriptionMessage message);
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
     * Records consecutive frames before they are handed to the wire, so that no ack can arrive
     * first: {@code messages[from + i]} as frame {@code firstId + i}, of {@code frameChars[from + i]}
     * characters as the send window counts them, for {@code i < n}. One lock per batch of frames,
     * not per frame.
     *
     * @param firstId the id after the previous frame's
     * @param messages what the frames carry; an element may be {@code null} for a frame nobody
     *     waits on
     */
    synchronized void sentAll(long firstId, SubscriptionMessage[] messages, long[] frameChars, int from, int n) {
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
            chars[at] = frameChars[from + i];
        }
        size += n;
    }

    /**
     * Removes the frames acknowledged by {@code id} and hands each to {@code each}, oldest first,
     * outside this lock.
     *
     * @return the characters of the acknowledged frames
     * @throws UnexpectedAckException if {@code id} is not a sent, unacknowledged frame
     */
    long ack(long id, Settled each) throws UnexpectedAckException {
        SubscriptionMessage single;
        SubscriptionMessage[] batch;
        long total = 0;
        synchronized (this) {
            long first = lastAcked + 1;
            if (size == 0 || id < first || id > lastAcked + size) {
                throw new UnexpectedAckException("Unexpected ack for " + first + ": " + id);
            }
            int n = (int) (id - lastAcked);
            // The usual case is one ack per frame: then nothing is copied (this runs once per frame
            // sent). The messages are handed out after the lock, which a consumer's callbacks must
            // not run under.
            single = n == 1 ? messages[head] : null;
            batch = n == 1 ? null : new SubscriptionMessage[n];
            for (int i = 0; i < n; i++) {
                int at = (head + i) & (messages.length - 1);
                if (batch != null) {
                    batch[i] = messages[at];
                }
                total += chars[at];
                messages[at] = null; // let the message go
            }
            head = (head + n) & (messages.length - 1);
            size -= n;
            lastAcked = id;
        }
        if (batch == null) {
            each.settled(single);
        } else {
            for (SubscriptionMessage m : batch) {
                each.settled(m);
            }
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

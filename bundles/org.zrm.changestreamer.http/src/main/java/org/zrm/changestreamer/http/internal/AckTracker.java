package org.zrm.changestreamer.http.internal;

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
 * <p>Frame ids are consecutive from 1, so a frame is stored as its size and whether it carries a
 * subscription's message, in two parallel rings indexed from the oldest unacknowledged id. The
 * messages themselves are not kept: the subscription settles its oldest ones by count
 * ({@link org.zrm.changestreamer.Subscription#consumedNext(int)}), and a reference per frame,
 * written by the sender and cleared by the reader on another core, was a good part of what an ack
 * cost a fan-out. The rings grow by doubling and never shrink; they hold at most the frames of one
 * send window ({@code send.maxUnackedChars}), since a frame is recorded only once the window
 * admitted it.
 */
final class AckTracker {

    /** Receives how many of the frames an ack settles carried a message. */
    @FunctionalInterface
    interface Settled {
        /**
         * @param n how many frames that carried a message the ack settled, at least 1; their
         *     messages are the oldest {@code n} the connection sent and had not yet settled
         */
        void settled(int n);
    }

    private static final int INITIAL_CAPACITY = 64;

    // All guarded by this.
    private long[] chars = new long[INITIAL_CAPACITY];
    private boolean[] carries = new boolean[INITIAL_CAPACITY];
    /** Ring index of the oldest unacknowledged frame, whose id is {@code lastAcked + 1}. */
    private int head;
    private int size;
    private long lastAcked;

    /**
     * Records consecutive frames before they are handed to the wire, so that no ack can arrive
     * first: frame {@code firstId + i} of {@code frameChars[i]} characters as the send window
     * counts them, for {@code i < n}. One lock per batch of frames, not per frame.
     *
     * @param firstId the id after the previous frame's
     * @param carryMessages whether the frames carry messages the subscription waits to hear of
     */
    synchronized void sentAll(long firstId, boolean carryMessages, long[] frameChars, int n) {
        if (firstId != lastAcked + size + 1) {
            throw new IllegalStateException("frame " + firstId + " sent after frame " + (lastAcked + size));
        }
        while (size + n > chars.length) {
            grow();
        }
        int mask = chars.length - 1;
        for (int i = 0; i < n; i++) {
            int at = (head + size + i) & mask;
            chars[at] = frameChars[i];
            carries[at] = carryMessages;
        }
        size += n;
    }

    /**
     * Removes the frames acknowledged by {@code id} and tells {@code each} how many of them
     * carried a message, outside this lock. Called by one thread at a time (the connection's
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
            int mask = chars.length - 1;
            for (int i = 0; i < n; i++) {
                int at = (head + i) & mask;
                if (carries[at]) {
                    k++;
                }
                total += chars[at];
            }
            head = (head + n) & mask;
            size -= n;
            lastAcked = id;
        }
        // Reported after the lock, which a consumer's callbacks must not run under.
        if (k > 0) {
            each.settled(k);
        }
        return total;
    }

    synchronized int pendingCount() {
        return size;
    }

    private void grow() {
        int capacity = chars.length << 1;
        long[] c = new long[capacity];
        boolean[] m = new boolean[capacity];
        for (int i = 0; i < size; i++) {
            int at = (head + i) & (chars.length - 1);
            c[i] = chars[at];
            m[i] = carries[at];
        }
        chars = c;
        carries = m;
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

package org.zrm.changestreamer.http.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The frames of one connection that were sent and not yet acknowledged, in id order.
 *
 * <p>Upstream expects exactly one ack per frame, in order, and treats any other id as
 * "Unexpected ack" (an unhandled rejection in pipelined mode, spec H4). This port accepts the
 * upstream sequence and, because consuming a frame implies consuming every earlier one, also an
 * ack that skips ahead to any sent frame (it acknowledges all frames up to it). An ack for a frame
 * that was already acknowledged or never sent is a protocol error: {@link #ack(long)} throws and
 * the connection is closed.
 */
final class AckTracker {

    /** A sent frame: its id, what to call when acknowledged, and its size for the send window. */
    record Sent(long id, Runnable onConsumed, long chars) {}

    private final ArrayDeque<Sent> pending = new ArrayDeque<>();
    private long lastAcked;

    /** Records a frame before it is handed to Jetty, so that its ack can never arrive first. */
    synchronized void sent(Sent frame) {
        pending.addLast(frame);
    }

    /**
     * Removes the frames acknowledged by {@code id}.
     *
     * @return the acknowledged frames, oldest first; the caller calls their {@code onConsumed}
     * @throws UnexpectedAckException if {@code id} is not a sent, unacknowledged frame
     */
    synchronized List<Sent> ack(long id) throws UnexpectedAckException {
        Sent first = pending.peekFirst();
        if (first == null || id < first.id() || id > pending.peekLast().id()) {
            long expected = first == null ? lastAcked + 1 : first.id();
            throw new UnexpectedAckException("Unexpected ack for " + expected + ": " + id);
        }
        if (first.id() == id) {
            // The usual case, one ack per frame: no list to grow (this runs once per frame sent).
            lastAcked = id;
            return List.of(pending.removeFirst());
        }
        List<Sent> acked = new ArrayList<>();
        while (!pending.isEmpty() && pending.peekFirst().id() <= id) {
            acked.add(pending.removeFirst());
        }
        lastAcked = id;
        return acked;
    }

    synchronized int pendingCount() {
        return pending.size();
    }

    /** An acknowledgement that matches no outstanding frame. */
    static final class UnexpectedAckException extends Exception {
        private static final long serialVersionUID = 1L;

        UnexpectedAckException(String message) {
            super(message);
        }
    }
}

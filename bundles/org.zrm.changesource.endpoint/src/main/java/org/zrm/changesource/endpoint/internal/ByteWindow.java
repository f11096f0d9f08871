package org.zrm.changesource.endpoint.internal;

/**
 * A bound on the characters handed to the socket but not yet written. {@link #acquire} blocks the
 * connection's sender while the window is full, so a slow client stops the sender from taking
 * more messages from its subscription; the subscription's own bound (the change streamer's
 * per-subscriber buffer) then disconnects a client that stays slow, and it catches up from the
 * change log when it reconnects. A single frame larger than the whole window is let through when
 * the window is empty, so one huge row can always be sent.
 */
final class ByteWindow {

    private final long max;
    private long used;      // guarded by this
    private boolean closed; // guarded by this

    ByteWindow(long max) {
        if (max < 1) {
            throw new IllegalArgumentException("window must be positive: " + max);
        }
        this.max = max;
    }

    /** @return {@code false} if the window was closed (the connection ended) */
    synchronized boolean acquire(long chars) throws InterruptedException {
        while (!closed && used > 0 && used + chars > max) {
            wait();
        }
        if (closed) {
            return false;
        }
        used += chars;
        return true;
    }

    synchronized void release(long chars) {
        used = Math.max(0, used - chars);
        notifyAll();
    }

    synchronized long used() {
        return used;
    }

    synchronized void close() {
        closed = true;
        notifyAll();
    }
}

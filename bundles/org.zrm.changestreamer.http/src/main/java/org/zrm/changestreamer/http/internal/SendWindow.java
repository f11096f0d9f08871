package org.zrm.changestreamer.http.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bound on outstanding characters of one connection, counted from when a frame is admitted until
 * it is released (written to the socket by the {@link WebSocketWire}, or acknowledged by the client).
 *
 * <p>At the bound a sender either blocks in {@link #acquire(long)}, or, sharing its thread with
 * other connections, is refused by {@link #tryAcquire(long, Runnable)} and called back once
 * characters are released. Nothing is dropped either way: the subscription's own queue (bounded by
 * the streamer's flow control and its per-subscriber byte bound) holds the messages not yet taken.
 * One frame larger than the whole bound is admitted when nothing is outstanding, otherwise it could
 * never be sent.
 */
final class SendWindow {

    private final long limit;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private long outstanding;
    private boolean closed;
    /** Who to call on the next release, after a refused {@link #tryAcquire}; guarded by the lock. */
    private Runnable waiter;

    SendWindow(long limit) {
        this.limit = limit;
    }

    /**
     * Waits until {@code chars} fit, then counts them as outstanding.
     *
     * @return {@code false} if the window was closed (the connection ended) instead
     */
    boolean acquire(long chars) throws InterruptedException {
        lock.lock();
        try {
            while (!closed && outstanding > 0 && outstanding + chars > limit) {
                released.await();
            }
            if (closed) {
                return false;
            }
            outstanding += chars;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Counts {@code chars} as outstanding if they fit now; otherwise remembers {@code onRelease}
     * and runs it once, on the thread of the next {@link #release} or of {@link #close}. Checking
     * and remembering happen under one lock, so a release between a refusal and the caller's
     * giving up cannot be missed.
     *
     * @param onRelease must not block (it schedules the sender again)
     * @return whether the characters were admitted; {@code false} also once the window is closed
     */
    boolean tryAcquire(long chars, Runnable onRelease) {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            if (outstanding > 0 && outstanding + chars > limit) {
                waiter = onRelease;
                return false;
            }
            outstanding += chars;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@code chars} would be admitted now, counting nothing; if not, remembers
     * {@code onRelease} as {@link #tryAcquire} does.
     */
    boolean fitsOrNotify(long chars, Runnable onRelease) {
        lock.lock();
        try {
            if (closed || outstanding == 0 || outstanding + chars <= limit) {
                return true;
            }
            waiter = onRelease;
            return false;
        } finally {
            lock.unlock();
        }
    }

    void release(long chars) {
        Runnable wake;
        lock.lock();
        try {
            outstanding = Math.max(0, outstanding - chars);
            released.signalAll();
            wake = waiter;
            waiter = null;
        } finally {
            lock.unlock();
        }
        if (wake != null) {
            wake.run();
        }
    }

    /** Wakes and fails every waiting and future {@link #acquire(long)} and {@link #tryAcquire}. */
    void close() {
        Runnable wake;
        lock.lock();
        try {
            closed = true;
            released.signalAll();
            wake = waiter;
            waiter = null;
        } finally {
            lock.unlock();
        }
        if (wake != null) {
            wake.run();
        }
    }

    long outstanding() {
        lock.lock();
        try {
            return outstanding;
        } finally {
            lock.unlock();
        }
    }
}

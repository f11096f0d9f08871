package org.zrm.changestreamer.http.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bound on outstanding characters of one connection, counted from when a frame is admitted until
 * it is released (written to the socket by the {@link WebSocketWire}, or acknowledged by the client).
 *
 * <p>At the bound a sender either blocks in {@link #acquire(long)}, or, sharing its thread with
 * other connections, is refused by {@link #tryAcquireFrames} and called back once
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
    /** Who to call on the next release, after a refused {@link #tryAcquireFrames}; guarded by the lock. */
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
     * Admits consecutive frames without waiting: counts the longest prefix of
     * {@code chars[from..to)} that fits, frame by frame (a frame fits while the bound holds, or
     * alone when nothing is outstanding), and takes the lock once for all of them: a fan-out sends
     * many small frames per connection, and a lock per frame was a good part of the sender's time.
     * If not even the first frame fits, {@code onRelease} runs once, on the thread of the next
     * release or of the close; it must not block. Checking and remembering happen under one lock,
     * so a release between a refusal and the caller's giving up cannot be missed.
     *
     * @return how many frames were admitted, from {@code from}; 0 if the window is closed or full
     */
    int tryAcquireFrames(long[] chars, int from, int to, Runnable onRelease) {
        lock.lock();
        try {
            if (closed) {
                return 0;
            }
            long total = outstanding;
            int i = from;
            while (i < to && (total == 0 || total + chars[i] <= limit)) {
                total += chars[i++];
            }
            if (i == from && from < to) {
                waiter = onRelease;
            }
            outstanding = total;
            return i - from;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@code chars} would be admitted now, counting nothing; if not, remembers
     * {@code onRelease} as {@link #tryAcquireFrames} does.
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

    /** Wakes and fails every waiting and future {@link #acquire(long)} and {@link #tryAcquireFrames}. */
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

package org.zrm.changestreamer.http.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bound on outstanding characters of one connection, counted from when a frame is admitted until
 * it is released (written by Jetty, or acknowledged by the client).
 *
 * <p>At the bound the sender thread blocks in {@link #acquire(long)}; nothing is dropped and the
 * subscription's own queue (bounded by the streamer's flow control) holds the messages not yet
 * taken. One frame larger than the whole bound is admitted when nothing is outstanding, otherwise
 * it could never be sent.
 */
final class SendWindow {

    private final long limit;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private long outstanding;
    private boolean closed;

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

    /** @return whether {@link #acquire(long)} of {@code chars} would return without waiting now */
    boolean fits(long chars) {
        lock.lock();
        try {
            return closed || outstanding == 0 || outstanding + chars <= limit;
        } finally {
            lock.unlock();
        }
    }

    void release(long chars) {
        lock.lock();
        try {
            outstanding = Math.max(0, outstanding - chars);
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes and fails every waiting and future {@link #acquire(long)}. */
    void close() {
        lock.lock();
        try {
            closed = true;
            released.signalAll();
        } finally {
            lock.unlock();
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

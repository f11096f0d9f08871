package org.zrm.storer.internal.queue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLogException;

/**
 * The FIFO between the stream loop (producer) and the writer thread, bounded in bytes and entries.
 *
 * <p>{@link #add} never blocks, so that catch-up requests and control entries are never stuck
 * behind a full queue. The data-plane producer calls {@link #awaitCapacity()} after each change:
 * once a bound is exceeded it blocks there until the writer has drained both counts below 80 % of
 * their bounds (upstream {@code readyForMore}/{@code #maybeReleaseBackPressure}). Because the
 * producer blocks after adding, the queue can exceed a bound by one message, which keeps a single
 * message larger than the bound from blocking forever.
 */
final class EntryQueue {

    private static final Logger LOG = LoggerFactory.getLogger(EntryQueue.class);
    /** Release once the backlog has shrunk below this share of the bound (upstream: 80 %). */
    static final double RELEASE_RATIO = 0.8;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Condition released = lock.newCondition();
    private final ArrayDeque<QueueEntry> entries = new ArrayDeque<>();
    private final long limitBytes;
    private final int limitMessages;

    private long bytes;              // guarded by lock
    private boolean pressured;       // guarded by lock
    private long pressureEvents;     // guarded by lock
    private long bytesAtLastRelease = -1; // guarded by lock
    private ChangeLogException closedBecause; // guarded by lock; non-null once closed

    EntryQueue(long limitBytes, int limitMessages) {
        this.limitBytes = limitBytes;
        this.limitMessages = limitMessages;
    }

    long limitBytes() {
        return limitBytes;
    }

    int limitMessages() {
        return limitMessages;
    }

    /**
     * Appends an entry without blocking. A commit or discard marks its begin entry as complete in
     * the same critical section, so the writer never sees a marked begin without its end queued.
     *
     * @return whether the queue is now over a bound (or a producer is held back), i.e. whether a
     *     data-plane producer must call {@link #awaitCapacity()}; saves it a second lock round
     *     per message in the common case
     * @throws ChangeLogException if the queue is closed (the writer stopped or failed)
     */
    boolean add(QueueEntry entry) throws ChangeLogException {
        lock.lock();
        try {
            throwIfClosed();
            if (entry instanceof QueueEntry.Commit c) {
                c.begin().end = QueueEntry.End.COMMIT;
            } else if (entry instanceof QueueEntry.Discard d) {
                d.begin().end = QueueEntry.End.DISCARD;
            }
            entries.addLast(entry);
            bytes += entry.bytes();
            changed.signalAll();
            return pressured || bytes > limitBytes || entries.size() > limitMessages;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Blocks the producer while the queue is over its bounds, until it is drained below 80 % of
     * them or closed.
     *
     * @throws ChangeLogException if the queue is (or gets) closed
     * @throws InterruptedException if the producer is interrupted while blocked
     */
    void awaitCapacity() throws ChangeLogException, InterruptedException {
        lock.lock();
        try {
            throwIfClosed();
            if (!pressured && (bytes > limitBytes || entries.size() > limitMessages)) {
                pressured = true;
                pressureEvents++;
                LOG.warn("storer-queue: applying back-pressure with {} queued entries (~{} MB; bounds {} entries, {} MB)",
                        entries.size(), mb(bytes), limitMessages, mb(limitBytes));
            }
            while (pressured) {
                released.await();
                throwIfClosed();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Takes the head, waiting for one. Releases a blocked producer once below 80 %. */
    QueueEntry take() throws InterruptedException {
        lock.lock();
        try {
            while (entries.isEmpty()) {
                changed.await();
            }
            QueueEntry entry = entries.removeFirst();
            bytes -= entry.bytes();
            if (pressured && bytes < limitBytes * RELEASE_RATIO && entries.size() < limitMessages * RELEASE_RATIO) {
                pressured = false;
                bytesAtLastRelease = bytes;
                LOG.info("storer-queue: releasing back-pressure with {} queued entries (~{} MB)",
                        entries.size(), mb(bytes));
                released.signalAll();
            }
            return entry;
        } finally {
            lock.unlock();
        }
    }

    /** @return the head without removing it, or {@code null} if the queue is empty */
    QueueEntry peek() {
        lock.lock();
        try {
            return entries.peekFirst();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until an entry is added (or a begin is marked complete) or the deadline passes.
     *
     * @param deadlineNanos a {@link System#nanoTime()} deadline
     * @return {@code false} if the deadline has passed
     */
    boolean awaitChange(long deadlineNanos) throws InterruptedException {
        lock.lock();
        try {
            long remaining = deadlineNanos - System.nanoTime();
            if (remaining <= 0) {
                return false;
            }
            changed.awaitNanos(remaining);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the queue: later {@link #add}s fail with {@code cause}, a blocked producer is woken
     * and fails too. Returns what was still queued, for the caller to fail or complete.
     */
    List<QueueEntry> close(ChangeLogException cause) {
        lock.lock();
        try {
            if (closedBecause == null) {
                closedBecause = cause;
            }
            List<QueueEntry> rest = new ArrayList<>(entries);
            entries.clear();
            bytes = 0;
            pressured = false;
            released.signalAll();
            changed.signalAll();
            return rest;
        } finally {
            lock.unlock();
        }
    }

    /** @return queued bytes as counted for back-pressure */
    long queuedBytes() {
        lock.lock();
        try {
            return bytes;
        } finally {
            lock.unlock();
        }
    }

    /** @return the number of queued entries */
    int size() {
        lock.lock();
        try {
            return entries.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return whether a producer is currently held back */
    boolean pressured() {
        lock.lock();
        try {
            return pressured;
        } finally {
            lock.unlock();
        }
    }

    /** @return the queued bytes when back-pressure was last released, or -1 if never */
    long bytesAtLastRelease() {
        lock.lock();
        try {
            return bytesAtLastRelease;
        } finally {
            lock.unlock();
        }
    }

    /** @return how often back-pressure was applied */
    long pressureEvents() {
        lock.lock();
        try {
            return pressureEvents;
        } finally {
            lock.unlock();
        }
    }

    private void throwIfClosed() throws ChangeLogException {
        if (closedBecause != null) {
            throw new ChangeLogException("storer queue is closed: " + closedBecause.getMessage(), closedBecause);
        }
    }

    private static String mb(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.2f", bytes / (1024.0 * 1024.0));
    }

}

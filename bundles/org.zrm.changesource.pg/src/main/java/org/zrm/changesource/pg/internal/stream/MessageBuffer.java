package org.zrm.changesource.pg.internal.stream;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * The bounded hand-off between the replication pump and the consumer of a change stream.
 *
 * <p><b>Bounds.</b> The pump asks {@link #hasRoom()} before it reads the next replication message
 * and stops reading the socket while the buffer holds {@code maxMessages} messages or
 * {@code maxBytes} bytes; Postgres is then throttled by TCP. One replication message may produce a
 * few protocol messages, and the pump hands messages over in batches of at most
 * {@link org.zrm.changesource.pg.internal.replication.ReplicationStream#FLUSH_EVERY} replication
 * messages ({@link #offerAll}), so the buffer can exceed its bounds by one batch's output (at most
 * that many times the configured maximum replication message size); {@link #offer} and
 * {@link #offerAll} never block and never drop. A producer that may block (the backfill thread)
 * uses {@link #offerWhenBelow}, which waits while the buffer is at a bound or holds the
 * producer's own, lower byte bound, and then adds one message, so it overshoots the bounds by at
 * most that message.
 *
 * <p><b>End.</b> {@link #finish} records how the stream ended. Messages already buffered are still
 * delivered for a clean end; for a failure the consumer sees the failure at once (undelivered
 * messages were never acked, so they are re-sent after the restart).
 */
public final class MessageBuffer {

    private final int maxMessages;
    private final long maxBytes;
    private final Runnable onRoom;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    // Producers that block for room (the backfill thread) wait here; the pump never does.
    private final Condition notFull = lock.newCondition();
    private final ArrayDeque<ChangeStreamMessage> messages = new ArrayDeque<>();
    // Costs of the buffered messages, in the same order: a ring of ints (no boxing per message).
    private int[] costs = new int[256];
    private int costHead;
    private long bytes;
    private volatile boolean full;
    // Producers blocked in offerWhenBelow; a take wakes them only when there are any.
    private int waitingProducers;
    private ChangeSourceException end;
    private boolean endIsClean;

    /**
     * @param maxMessages message bound (≥ 1)
     * @param maxBytes byte bound (≥ 1)
     * @param onRoom called (outside the lock) when a take makes room after the buffer was full
     */
    public MessageBuffer(int maxMessages, long maxBytes, Runnable onRoom) {
        if (maxMessages < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("buffer bounds must be positive");
        }
        this.maxMessages = maxMessages;
        this.maxBytes = maxBytes;
        this.onRoom = onRoom;
    }

    /** Whether the producer may read another replication message. */
    public boolean hasRoom() {
        return !full;
    }

    /** Adds a message; never blocks (see the class description for the bound). */
    public void offer(ChangeStreamMessage message, int cost) {
        lock.lock();
        try {
            if (end != null) {
                return;
            }
            add(message, cost);
            full = messages.size() >= maxMessages || bytes >= maxBytes;
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Adds a batch under one lock, waking the consumer once; never blocks. */
    void offerAll(java.util.List<ChangeStreamMessage> batch, IntArray batchCosts) {
        lock.lock();
        try {
            if (end != null) {
                return;
            }
            int n = batch.size();
            for (int i = 0; i < n; i++) {
                add(batch.get(i), batchCosts.get(i));
            }
            full = messages.size() >= maxMessages || bytes >= maxBytes;
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Adds the messages {@code [from, to)} of a batch under one lock, leaving out the statuses
     * {@code forward} rejects (they were shown to listeners and need not reach the consumer);
     * never blocks.
     */
    void offerRange(java.util.List<ChangeStreamMessage> batch, IntArray batchCosts, int from, int to,
            java.util.function.Predicate<ChangeStreamMessage> forward) {
        lock.lock();
        try {
            if (end != null) {
                return;
            }
            boolean added = false;
            for (int i = from; i < to; i++) {
                ChangeStreamMessage m = batch.get(i);
                if (forward.test(m)) {
                    add(m, batchCosts.get(i));
                    added = true;
                }
            }
            if (added) {
                full = messages.size() >= maxMessages || bytes >= maxBytes;
                notEmpty.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the buffer is below both bounds and holds less than {@code byteBound} bytes,
     * then adds the message. A producer that shares the buffer with the replication pump uses a
     * small {@code byteBound} so that what it queued never stands long in front of the pump's
     * messages; an empty buffer always takes one message, however large.
     *
     * @throws ChangeSourceException the end of the buffer, if it ended before or while waiting
     * @throws InterruptedException if interrupted while waiting; nothing was added
     */
    public void offerWhenBelow(ChangeStreamMessage message, int cost, long byteBound)
            throws ChangeSourceException, InterruptedException {
        lock.lockInterruptibly();
        try {
            awaitBelowLocked(byteBound, () -> false);
            add(message, cost);
            full = messages.size() >= maxMessages || bytes >= maxBytes;
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until {@link #offerWhenBelow} with {@code byteBound} would add at once, or until
     * {@code giveUp} answers {@code true}; it is asked before each wait and after each wake-up
     * ({@link #wakeWaitingProducers}). Adds nothing.
     *
     * @return {@code true} if there is room, {@code false} if {@code giveUp} ended the wait first
     * @throws ChangeSourceException the end of the buffer, if it ended before or while waiting
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitBelow(long byteBound, BooleanSupplier giveUp) throws ChangeSourceException, InterruptedException {
        lock.lockInterruptibly();
        try {
            return awaitBelowLocked(byteBound, giveUp);
        } finally {
            lock.unlock();
        }
    }

    /** {@link #awaitBelow}'s wait, under the lock. */
    private boolean awaitBelowLocked(long byteBound, BooleanSupplier giveUp)
            throws ChangeSourceException, InterruptedException {
        while (end == null && (full || bytes >= byteBound)) {
            if (giveUp.getAsBoolean()) {
                return false;
            }
            waitingProducers++;
            try {
                notFull.await();
            } finally {
                waitingProducers--;
            }
        }
        if (end != null) {
            throw end;
        }
        return true;
    }

    /** Wakes the producers waiting for room so that they ask their {@code giveUp} condition again. */
    public void wakeWaitingProducers() {
        lock.lock();
        try {
            if (waitingProducers > 0) {
                notFull.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    private void add(ChangeStreamMessage message, int cost) {
        int n = messages.size();
        if (n == costs.length) {
            int[] grown = new int[n * 2];
            for (int i = 0; i < n; i++) {
                grown[i] = costs[(costHead + i) % n];
            }
            costs = grown;
            costHead = 0;
        }
        costs[(costHead + n) % costs.length] = cost;
        messages.addLast(message);
        bytes += cost;
    }

    private int removeCost() {
        int c = costs[costHead];
        costHead = (costHead + 1) % costs.length;
        return c;
    }

    /**
     * Ends the buffer; the first end wins.
     *
     * @param reason the end of the stream
     * @param clean whether buffered messages are still delivered before {@code reason}
     */
    public void finish(ChangeSourceException reason, boolean clean) {
        lock.lock();
        try {
            if (end == null) {
                end = reason;
                endIsClean = clean;
                if (!clean) {
                    messages.clear();
                    costHead = 0;
                    bytes = 0;
                }
                notEmpty.signalAll();
                notFull.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * @param timeout how long to wait; {@code null} waits indefinitely
     * @return the next message, or {@code null} on timeout
     */
    public ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException, InterruptedException {
        boolean signal;
        ChangeStreamMessage m;
        lock.lockInterruptibly();
        try {
            long nanos = timeout == null ? Long.MAX_VALUE : Math.max(0, timeout.toNanos());
            while (messages.isEmpty()) {
                if (end != null) {
                    throw end;
                }
                if (timeout == null) {
                    notEmpty.await();
                } else {
                    if (nanos <= 0) {
                        return null;
                    }
                    nanos = notEmpty.awaitNanos(nanos);
                }
            }
            if (end != null && !endIsClean) {
                throw end;
            }
            m = messages.pollFirst();
            bytes -= removeCost();
            boolean wasFull = full;
            full = messages.size() >= maxMessages || bytes >= maxBytes;
            signal = wasFull && !full;
            if (waitingProducers > 0) {
                notFull.signalAll(); // a producer may wait for a bound of its own, below the buffer's
            }
        } finally {
            lock.unlock();
        }
        if (signal && onRoom != null) {
            onRoom.run();
        }
        return m;
    }

    /** @return the number of buffered messages */
    public int size() {
        lock.lock();
        try {
            return messages.size();
        } finally {
            lock.unlock();
        }
    }
}

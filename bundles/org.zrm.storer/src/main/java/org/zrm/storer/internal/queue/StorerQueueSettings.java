package org.zrm.storer.internal.queue;

import java.time.Duration;
import java.util.Objects;

/**
 * Bounds of the storer queue: memory back-pressure and group commit.
 *
 * <p><b>Back-pressure.</b> The queue counts the characters of the queued changes' JSON text plus a
 * fixed per-entry overhead. Once that count exceeds {@link #limitBytes} or the number of queued
 * entries exceeds {@code maxQueuedMessages}, the producer blocks in
 * {@link StorerQueue#enqueue} until the writer has drained both below 80 % of their bound
 * (hysteresis as upstream, so the producer is not woken for every single row).
 *
 * <p><b>Group commit.</b> While the writer was busy (a database commit running), the producer may
 * have queued further complete upstream transactions; the writer then writes them into the same
 * database transaction. A group is closed, and committed, as soon as any bound is reached: it holds
 * {@code maxGroupTransactions} upstream transactions, or {@code maxGroupBytes} characters of change
 * text, or {@code maxGroupDelay} has passed since the group's first upstream commit was written.
 * With the default delay of zero the writer never waits for more work: it only coalesces what is
 * already queued, so group commit adds no latency to an idle stream.
 *
 * @param backPressureLimitHeapProportion share of the free heap (at construction) that queued
 *     changes may use; upstream {@code changeStreamer.backPressureLimitHeapProportion}, default
 *     0.04; must be in (0, 1]
 * @param backPressureLimitBytes absolute cap on queued change text in characters (bytes for ASCII);
 *     0 means no cap beyond the heap proportion
 * @param maxQueuedMessages bound on queued entries, whatever their size, so that a flood of tiny
 *     messages cannot hold the heap through per-entry overhead; at least 1
 * @param maxGroupTransactions upstream transactions per database transaction; 1 turns group commit
 *     off; 1..100000
 * @param maxGroupBytes change text per group, in characters; once a group reaches it no further
 *     transaction joins (the transaction that crosses it is complete already); at least 1
 * @param maxGroupDelay how long the writer may wait for the next queued transaction to complete
 *     before it commits a group; zero (default) means never wait; at most one second
 */
public record StorerQueueSettings(
        double backPressureLimitHeapProportion,
        long backPressureLimitBytes,
        int maxQueuedMessages,
        int maxGroupTransactions,
        long maxGroupBytes,
        Duration maxGroupDelay) {

    /** Upstream default for {@code backPressureLimitHeapProportion}. */
    public static final double DEFAULT_HEAP_PROPORTION = 0.04;
    /** Default {@link #maxQueuedMessages}. */
    public static final int DEFAULT_MAX_QUEUED_MESSAGES = 50_000;
    /** Default {@link #maxGroupTransactions}. */
    public static final int DEFAULT_MAX_GROUP_TRANSACTIONS = 1_000;
    /** Default {@link #maxGroupBytes}: 8 MiB of change text. */
    public static final long DEFAULT_MAX_GROUP_BYTES = 8L << 20;
    /** Upper bound of {@link #maxGroupTransactions}. */
    public static final int MAX_GROUP_TRANSACTIONS_LIMIT = 100_000;
    /** Upper bound of {@link #maxGroupDelay}. */
    public static final Duration MAX_GROUP_DELAY_LIMIT = Duration.ofSeconds(1);

    /** Validates the bounds; the messages name the offending setting. */
    public StorerQueueSettings {
        Objects.requireNonNull(maxGroupDelay, "maxGroupDelay");
        if (!(backPressureLimitHeapProportion > 0 && backPressureLimitHeapProportion <= 1)) {
            throw new IllegalArgumentException(
                    "backPressureLimitHeapProportion must be in (0, 1], got " + backPressureLimitHeapProportion);
        }
        if (backPressureLimitBytes < 0) {
            throw new IllegalArgumentException(
                    "backPressureLimitBytes must be >= 0 (0 = no absolute cap), got " + backPressureLimitBytes);
        }
        if (maxQueuedMessages < 1) {
            throw new IllegalArgumentException("maxQueuedMessages must be >= 1, got " + maxQueuedMessages);
        }
        if (maxGroupTransactions < 1 || maxGroupTransactions > MAX_GROUP_TRANSACTIONS_LIMIT) {
            throw new IllegalArgumentException("maxGroupTransactions must be in 1.."
                    + MAX_GROUP_TRANSACTIONS_LIMIT + ", got " + maxGroupTransactions);
        }
        if (maxGroupBytes < 1) {
            throw new IllegalArgumentException("maxGroupBytes must be >= 1, got " + maxGroupBytes);
        }
        if (maxGroupDelay.isNegative() || maxGroupDelay.compareTo(MAX_GROUP_DELAY_LIMIT) > 0) {
            throw new IllegalArgumentException(
                    "maxGroupDelay must be between 0 and " + MAX_GROUP_DELAY_LIMIT + ", got " + maxGroupDelay);
        }
    }

    /** The defaults: upstream's heap proportion, no absolute cap, group commit without added wait. */
    public static StorerQueueSettings defaults() {
        return new StorerQueueSettings(DEFAULT_HEAP_PROPORTION, 0, DEFAULT_MAX_QUEUED_MESSAGES,
                DEFAULT_MAX_GROUP_TRANSACTIONS, DEFAULT_MAX_GROUP_BYTES, Duration.ZERO);
    }

    /** @return a copy with another absolute byte cap */
    public StorerQueueSettings withBackPressureLimitBytes(long bytes) {
        return new StorerQueueSettings(backPressureLimitHeapProportion, bytes, maxQueuedMessages,
                maxGroupTransactions, maxGroupBytes, maxGroupDelay);
    }

    /** @return a copy with another message bound */
    public StorerQueueSettings withMaxQueuedMessages(int messages) {
        return new StorerQueueSettings(backPressureLimitHeapProportion, backPressureLimitBytes, messages,
                maxGroupTransactions, maxGroupBytes, maxGroupDelay);
    }

    /** @return a copy with other group-commit bounds */
    public StorerQueueSettings withGroupCommit(int transactions, long bytes, Duration delay) {
        return new StorerQueueSettings(backPressureLimitHeapProportion, backPressureLimitBytes,
                maxQueuedMessages, transactions, bytes, delay);
    }

    /**
     * The byte bound in force: the heap proportion of the heap that is free now (upstream:
     * {@code (heap_size_limit - used_heap_size) * proportion}), capped by
     * {@link #backPressureLimitBytes} when that is set. Never below 1.
     *
     * @param runtime the JVM whose heap is measured
     */
    public long limitBytes(Runtime runtime) {
        long used = runtime.totalMemory() - runtime.freeMemory();
        long free = Math.max(0, runtime.maxMemory() - used);
        long byHeap = (long) (free * backPressureLimitHeapProportion);
        long limit = backPressureLimitBytes > 0 ? Math.min(byHeap, backPressureLimitBytes) : byHeap;
        return Math.max(1, limit);
    }
}

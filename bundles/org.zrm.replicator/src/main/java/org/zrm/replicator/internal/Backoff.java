package org.zrm.replicator.internal;

/** Exponential backoff: {@code initial}, doubling, capped at {@code max}. Not thread-safe. */
final class Backoff {

    private final long initialMs;
    private final long maxMs;
    private long nextMs;

    Backoff(long initialMs, long maxMs) {
        if (initialMs <= 0 || maxMs < initialMs) {
            throw new IllegalArgumentException("backoff needs 0 < initial <= max, got " + initialMs + ", " + maxMs);
        }
        this.initialMs = initialMs;
        this.maxMs = maxMs;
        this.nextMs = initialMs;
    }

    /** The delay to wait now; the following one doubles. */
    long next() {
        long d = nextMs;
        nextMs = Math.min(maxMs, nextMs * 2);
        return d;
    }

    void reset() {
        nextMs = initialMs;
    }
}

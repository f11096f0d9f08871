package org.zrm.storer.internal;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * Recycles the byte arrays that COPY batches are encoded into.
 *
 * <p>Why: a default batch of W3-sized changes is about 4–5 MB, so a 50,000-change transaction
 * would otherwise allocate some 100 MB of short-lived arrays, most of them humongous for G1. That
 * garbage costs collections and concurrent GC work on the same cores the Postgres backend needs.
 * The write pipeline holds at most two batches at a time (one executing, one being prepared), so
 * two retained arrays cover steady state.
 *
 * <p>Bounds: at most {@link #RETAINED} arrays are kept, each at most {@link #MAX_RETAINED_BYTES};
 * a larger array (one huge batch) is used once and left to the collector, and a release when two
 * are already kept drops the array. So the pool never holds more than
 * {@code RETAINED × MAX_RETAINED_BYTES} bytes. Thread-safe: arrays are acquired on the storer
 * thread and released on the change-log writer thread.
 */
final class CopyBuffers {

    /** Arrays kept for reuse: the pipeline's depth. */
    static final int RETAINED = 2;
    /** Largest array kept for reuse. */
    static final int MAX_RETAINED_BYTES = 16 << 20;

    private final ArrayBlockingQueue<byte[]> free = new ArrayBlockingQueue<>(RETAINED);

    /** @return an array of at least {@code capacity} bytes, recycled if one is free and large enough */
    byte[] acquire(int capacity) {
        byte[] b = free.poll();
        if (b != null && b.length >= capacity) {
            return b;
        }
        // A too-small recycled array is dropped: the batch sizes of one stream are similar, so the
        // new, larger array is the better one to keep.
        return new byte[capacity];
    }

    /** Returns an array for reuse once nothing reads it any more. */
    void release(byte[] b) {
        if (b.length <= MAX_RETAINED_BYTES) {
            free.offer(b); // full: two arrays are kept already; this one goes to the collector
        }
    }

    /** @return arrays currently kept, for tests */
    int retained() {
        return free.size();
    }
}

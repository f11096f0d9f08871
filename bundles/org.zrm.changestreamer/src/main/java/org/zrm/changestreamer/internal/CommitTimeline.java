package org.zrm.changestreamer.internal;

import org.zrm.watermark.Watermarks;

/**
 * When each recent commit was forwarded, so that a subscriber's lag can be told in time: the age
 * of the oldest commit it has not acknowledged yet.
 *
 * <p>Bounded: a ring of the last {@value #CAPACITY} commits. When it is full the oldest entry is
 * overwritten; a subscriber behind every remembered commit is then reported at least as late as
 * the oldest one, a lower bound ({@link Lag#atLeast()}).
 *
 * <p>Thread-safe: the stream thread appends, HTTP threads look up, under this object's monitor.
 */
final class CommitTimeline {
    static final int CAPACITY = 4096;

    /**
     * @param ms milliseconds since the first unacknowledged commit was forwarded, 0 when caught up
     * @param atLeast whether that commit is older than the timeline remembers, so {@code ms} is a lower bound
     */
    record Lag(long ms, boolean atLeast) {}

    private final String[] watermarks;
    private final long[] forwardedAt;
    private int next;
    private int size;

    CommitTimeline() {
        this(CAPACITY);
    }

    CommitTimeline(int capacity) {
        watermarks = new String[capacity];
        forwardedAt = new long[capacity];
    }

    synchronized void forwarded(String commitWatermark, long nowMs) {
        watermarks[next] = commitWatermark;
        forwardedAt[next] = nowMs;
        next = (next + 1) % watermarks.length;
        size = Math.min(size + 1, watermarks.length);
    }

    /**
     * @param acked the subscriber's last acknowledged watermark, {@code null} if none
     * @return its lag, or {@code null} if no commit was forwarded yet
     */
    synchronized Lag lagOf(String acked, long nowMs) {
        if (size == 0) {
            return null;
        }
        int oldest = (next - size + watermarks.length) % watermarks.length;
        // Commits are appended in watermark order: the first one past the ack is the oldest unacked.
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            String w = watermarks[(oldest + mid) % watermarks.length];
            if (acked != null && Watermarks.compare(w, acked) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo == size) {
            return new Lag(0, false);
        }
        long at = forwardedAt[(oldest + lo) % watermarks.length];
        boolean truncated = lo == 0 && size == watermarks.length;
        return new Lag(Math.max(0, nowMs - at), truncated);
    }

    /** @return the newest forwarded commit, {@code null} if none */
    synchronized String newest() {
        return size == 0 ? null : watermarks[(next - 1 + watermarks.length) % watermarks.length];
    }
}

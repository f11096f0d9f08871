package org.zrm.changesource.pg.internal.sync;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Live counters of one initial sync, safe to read from any thread (e.g. a {@code /status}
 * handler) through {@link #snapshot()}.
 */
public final class SyncProgress {

    /** The phase of initial sync. */
    public enum Phase {
        SETUP,
        COPYING,
        INDEXING,
        DONE,
        FAILED
    }

    /**
     * An immutable view.
     *
     * @param totalRowsEstimate sum of {@code pg_class.reltuples} (an estimate, may be 0)
     * @param totalBytesEstimate sum of {@code pg_table_size} (on-disk size, not COPY bytes)
     * @param eta remaining time estimated from the row rate, or {@code null} if unknown
     */
    public record Snapshot(Phase phase, String replicaVersion, int tablesDone, int tablesTotal, long rows,
            long totalRowsEstimate, long bytes, long totalBytesEstimate, Duration elapsed, double rowsPerSecond,
            double mbPerSecond, Duration eta) {

        /** One log line's worth of text. */
        public String describe() {
            return String.format(java.util.Locale.ROOT,
                    "phase=%s tables=%d/%d rows=%d/~%d copied=%.1fMB rate=%.0f rows/s %.2f MB/s elapsed=%ds eta=%s",
                    phase, tablesDone, tablesTotal, rows, totalRowsEstimate, bytes / 1048576.0, rowsPerSecond,
                    mbPerSecond, elapsed.toSeconds(), eta == null ? "?" : eta.toSeconds() + "s");
        }
    }

    private final long startNanos = System.nanoTime();
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.SETUP);
    private final AtomicReference<String> replicaVersion = new AtomicReference<>();
    private final AtomicInteger tablesDone = new AtomicInteger();
    private final AtomicInteger tablesTotal = new AtomicInteger();
    private final AtomicLong rows = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong totalRows = new AtomicLong();
    private final AtomicLong totalBytes = new AtomicLong();

    void phase(Phase p) {
        phase.set(p);
    }

    void replicaVersion(String v) {
        replicaVersion.set(v);
    }

    void tables(int total) {
        tablesTotal.set(total);
    }

    void estimate(long rowsEstimate, long bytesEstimate) {
        totalRows.addAndGet(rowsEstimate);
        totalBytes.addAndGet(bytesEstimate);
    }

    void copied(long r, long b) {
        rows.addAndGet(r);
        bytes.addAndGet(b);
    }

    void tableDone() {
        tablesDone.incrementAndGet();
    }

    public Snapshot snapshot() {
        Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
        double secs = Math.max(elapsed.toMillis() / 1000.0, 0.001);
        long r = rows.get();
        long b = bytes.get();
        double rate = r / secs;
        long remaining = totalRows.get() - r;
        Duration eta = rate > 0 && remaining > 0 ? Duration.ofMillis((long) (remaining / rate * 1000)) : null;
        return new Snapshot(phase.get(), replicaVersion.get(), tablesDone.get(), tablesTotal.get(), r, totalRows.get(),
                b, totalBytes.get(), elapsed, rate, b / 1048576.0 / secs, eta);
    }
}

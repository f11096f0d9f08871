package org.zrm.changesource.pg.internal.backfill;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.zrm.protocol.DownloadStatus;

/**
 * Live counters of one backfill run, written by the backfill thread and read by {@code /status}
 * and {@code /metrics} handlers through {@link #snapshot()}.
 */
final class BackfillProgress {

    /**
     * An immutable view.
     *
     * @param rows rows sent so far (from the run's cumulative status, else counted)
     * @param totalRows the run's estimate of the table's rows (0 until its first message)
     * @param bytes estimated in-memory size of the rows sent so far
     * @param totalBytes the run's estimate of the columns' upstream size, or -1 if unknown
     * @param eta remaining time at the current row rate, or {@code null} if unknown
     */
    record Snapshot(String table, List<String> columns, long rows, long totalRows, long bytes, long totalBytes,
            long transactions, Duration elapsed, double rowsPerSecond, Duration eta) {

        String describe() {
            return String.format(Locale.ROOT, "rows=%d/~%d sent=%.1fMB (upstream ~%s) transactions=%d rate=%.0f rows/s"
                    + " elapsed=%ds eta=%s", rows, totalRows, bytes / 1048576.0,
                    totalBytes < 0 ? "?" : String.format(Locale.ROOT, "%.1fMB", totalBytes / 1048576.0), transactions,
                    rowsPerSecond, elapsed.toSeconds(), eta == null ? "?" : eta.toSeconds() + "s");
        }
    }

    private final String table;
    private final List<String> columns;
    private final long startNanos;
    private volatile long rows;
    private volatile long totalRows;
    private volatile long bytes;
    private volatile long totalBytes = -1;
    private volatile long transactions;

    BackfillProgress(String table, List<String> columns, long startNanos) {
        this.table = table;
        this.columns = List.copyOf(columns);
        this.startNanos = startNanos;
    }

    /** One message sent (backfill thread only). */
    void sent(int rowCount, long cost, DownloadStatus status) {
        bytes += cost;
        if (status != null) {
            rows = status.rows();
            totalRows = status.totalRows();
            if (status.totalBytes() != null) {
                totalBytes = status.totalBytes();
            }
        } else {
            rows += rowCount;
        }
    }

    /** One backfill transaction committed (backfill thread only). */
    void committed() {
        transactions++;
    }

    Snapshot snapshot(long nowNanos) {
        Duration elapsed = Duration.ofNanos(Math.max(0, nowNanos - startNanos));
        double secs = Math.max(elapsed.toMillis() / 1000.0, 0.001);
        long r = rows;
        long total = totalRows;
        double rate = r / secs;
        long remaining = total - r;
        Duration eta = rate > 0 && remaining > 0 ? Duration.ofMillis((long) (remaining / rate * 1000)) : null;
        return new Snapshot(table, columns, r, total, bytes, totalBytes, transactions, elapsed, rate, eta);
    }
}

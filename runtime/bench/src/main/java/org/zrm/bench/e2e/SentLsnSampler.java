package org.zrm.bench.e2e;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * Samples how far the walsender serving a slot has decoded and sent the WAL
 * ({@code pg_stat_replication.sent_lsn}), so that a live transaction's commit → subscriber latency
 * can be split at the server's edge: the time until the walsender has passed the transaction's WAL
 * (the server's share: WAL flush, decoding, the change DB's own WAL when both share a cluster) and
 * the time from there to the subscriber (the runtime's share, with the client's).
 *
 * <p>Postgres offers no notification for a walsender's progress, so a thread polls every
 * {@value #PERIOD_MICROS} µs; the split is as fine as that, and it is an upper bound for the
 * server's share: a sample is timed when its query returns, and on saturated cores that query
 * waits for a core too. In an instrumented run (docs/BENCHMARKS.md, session 18) the runtime
 * received every live commit at most 118 ms after its commit timestamp (p99 36 ms, the commit's own
 * flush included), while this sampler put the server's p99 at 103–130 ms in four of ten slices.
 * Bounded: at most {@code capacity} samples are kept, later ones are dropped (the run then reports
 * the split only for what was sampled). Samples whose position did not move are not kept.
 */
final class SentLsnSampler implements AutoCloseable {

    static final long PERIOD_MICROS = 2_000;

    private final Connection conn;
    private final String slot;
    private final long[] nanos;
    private final long[] lsns;
    private final Thread thread;
    private volatile boolean stop;
    private volatile SQLException failure;
    // Written by the sampling thread only; read after close(), which joins it.
    private int size;

    /**
     * Starts sampling {@code slot}'s walsender on {@code conn}, which this sampler owns from now on.
     *
     * @param capacity samples to keep at most
     */
    SentLsnSampler(Connection conn, String slot, int capacity) {
        this.conn = conn;
        this.slot = slot;
        this.nanos = new long[capacity];
        this.lsns = new long[capacity];
        this.thread = new Thread(this::run, "bench-sent-lsn");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try (PreparedStatement ps = conn.prepareStatement("SELECT (r.sent_lsn - '0/0')::int8 FROM pg_stat_replication r"
                + " JOIN pg_replication_slots s ON s.active_pid = r.pid WHERE s.slot_name = ?")) {
            ps.setString(1, slot);
            long last = -1;
            while (!stop && size < nanos.length) {
                try (ResultSet rs = ps.executeQuery()) {
                    long now = System.nanoTime();
                    if (rs.next()) {
                        long lsn = rs.getLong(1);
                        if (lsn != last) {
                            nanos[size] = now;
                            lsns[size] = lsn;
                            size++;
                            last = lsn;
                        }
                    }
                }
                TimeUnit.MICROSECONDS.sleep(PERIOD_MICROS);
            }
        } catch (SQLException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The first sample time at which the walsender had passed {@code lsn}, or {@code -1} if no
     * sample shows it. Call after {@link #close()}.
     */
    long reachedAt(long lsn) {
        int i = Arrays.binarySearch(lsns, 0, size, lsn + 1);
        int at = i >= 0 ? i : -i - 1;
        return at < size ? nanos[at] : -1;
    }

    /** Stops sampling and closes the connection; throws what made sampling fail, if anything did. */
    @Override
    public void close() throws SQLException, InterruptedException {
        stop = true;
        thread.join();
        conn.close();
        if (failure != null) {
            throw failure;
        }
    }
}

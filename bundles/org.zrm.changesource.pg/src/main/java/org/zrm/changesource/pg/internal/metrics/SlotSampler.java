package org.zrm.changesource.pg.internal.metrics;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples this shard's replication slots from {@code pg_replication_slots} at a fixed interval on
 * one thread of its own, over one ordinary connection (never the replication connection, whose
 * walsender must not be kept waiting). {@code /status} and {@code /metrics} read the last sample
 * ({@link #reading()}) and so never wait on the database.
 *
 * <p>The interval is clamped to [{@value #MIN_INTERVAL_MS}, {@value #MAX_INTERVAL_MS}] ms so that a
 * misconfiguration can neither hammer the catalog nor leave the figures hours old; each query is
 * bounded by a statement timeout.
 */
public final class SlotSampler implements AutoCloseable {
    /** Shortest sampling interval accepted. */
    public static final long MIN_INTERVAL_MS = 1_000;
    /** Longest sampling interval accepted. */
    public static final long MAX_INTERVAL_MS = 600_000;
    private static final int STATEMENT_TIMEOUT_MS = 5_000;
    private static final Logger LOG = LoggerFactory.getLogger(SlotSampler.class);

    /** Opens an ordinary connection to the upstream database. */
    @FunctionalInterface
    public interface Db {
        Connection open() throws SQLException;
    }

    private final Db db;
    private final String slotLike;
    private final String legacySlot;
    private final long intervalMs;
    private final LongSupplier clock;
    private final ScheduledExecutorService executor;
    private final java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile SlotReading reading = SlotReading.NONE;
    private Connection connection;   // confined to the executor thread
    private String lastLoggedError;  // confined to the executor thread

    /**
     * @param slotLike escaped {@code LIKE} pattern of the shard's slot names
     * @param legacySlot the shard's pre-pool slot name, also sampled
     * @param intervalMs the sampling interval, clamped (see the class description)
     */
    public SlotSampler(Db db, String slotLike, String legacySlot, long intervalMs, LongSupplier clock, String threadName) {
        this.db = db;
        this.slotLike = slotLike;
        this.legacySlot = legacySlot;
        this.intervalMs = clampInterval(intervalMs);
        this.clock = clock;
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        ex.setRemoveOnCancelPolicy(true);
        this.executor = ex;
    }

    /** @return {@code ms} within [{@value #MIN_INTERVAL_MS}, {@value #MAX_INTERVAL_MS}] */
    public static long clampInterval(long ms) {
        return Math.max(MIN_INTERVAL_MS, Math.min(MAX_INTERVAL_MS, ms));
    }

    /** @return the effective interval */
    public long intervalMs() {
        return intervalMs;
    }

    /** Starts sampling now and then every interval; later calls do nothing. Does not wait for the first sample. */
    public void start() {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        executor.scheduleWithFixedDelay(this::sampleQuietly, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** @return the last sample, never {@code null} */
    public SlotReading reading() {
        return reading;
    }

    /** Takes one sample now on the caller's thread (tests; the sampler thread must not run then). */
    SlotReading sampleNow() throws SQLException {
        if (connection == null || connection.isClosed()) {
            connection = db.open();
            try (Statement s = connection.createStatement()) {
                s.execute("SET statement_timeout = " + STATEMENT_TIMEOUT_MS);
            }
        }
        String currentLsn = null;
        List<SlotSample> slots = new ArrayList<>();
        try (PreparedStatement ps = connection.prepareStatement("SELECT c.lsn, s.slot_name, s.active, s.wal_status,"
                + " s.safe_wal_size, s.restart_lsn::text, s.confirmed_flush_lsn::text"
                + " FROM (SELECT pg_current_wal_lsn()::text AS lsn) c"
                + " LEFT JOIN pg_replication_slots s ON s.slot_name LIKE ? OR s.slot_name = ? ORDER BY s.slot_name")) {
            ps.setString(1, slotLike);
            ps.setString(2, legacySlot);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    currentLsn = rs.getString(1);
                    String name = rs.getString(2);
                    if (name == null) {
                        continue;
                    }
                    long safe = rs.getLong(5);
                    Long safeWalSize = rs.wasNull() ? null : safe;
                    slots.add(SlotSample.of(name, rs.getBoolean(3), rs.getString(4), safeWalSize, currentLsn,
                            rs.getString(6), rs.getString(7)));
                }
            }
        }
        SlotReading r = new SlotReading(clock.getAsLong(), currentLsn, slots, null);
        reading = r;
        return r;
    }

    private void sampleQuietly() {
        try {
            sampleNow();
            if (lastLoggedError != null) {
                LOG.info("replication slot sampling works again");
                lastLoggedError = null;
            }
        } catch (SQLException | RuntimeException e) {
            // Keep the last good figures (marked with the failure) and retry at the next interval;
            // an exception escaping here would silently end the schedule.
            reading = reading.failed(e.toString());
            if (!e.toString().equals(lastLoggedError)) {
                LOG.warn("sampling replication slots failed (retrying every {} ms): {}", intervalMs, e.toString());
                lastLoggedError = e.toString();
            }
            closeConnection();
        }
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException e) {
                LOG.debug("closing the slot-sampling connection failed: {}", e.toString());
            }
            connection = null;
        }
    }

    /**
     * Stops sampling; the sampler thread closes its connection after a sample in progress (bounded
     * by the statement timeout). Returns at once: DS deactivation must not wait on the database.
     */
    @Override
    public void close() {
        try {
            executor.execute(this::closeConnection);
        } catch (java.util.concurrent.RejectedExecutionException alreadyClosed) {
            return;
        }
        // Cancels the periodic sample; the close task queued above still runs.
        executor.shutdown();
    }
}

package org.zrm.changesource.pg.internal.stream;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Timings;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.watermark.Lsn;

/**
 * Measures replication lag (upstream's {@code LagReporter}, spec §2.10): emits a non-transactional
 * logical message {@code {app}/{shard}/lag-report/v1} carrying its send time, and turns the
 * message's arrival in the replication stream into a {@code status} with a {@code lagReport}. The
 * next report is scheduled when the expected one arrives, so at most one is in flight.
 *
 * <p>Thread-safe: reports are initiated on the scheduler, messages processed on the pump thread.
 */
public final class LagReporter {

    /** Opens a normal (non-replication) connection to the upstream database. */
    @FunctionalInterface
    public interface Db {
        Connection open() throws SQLException;
    }

    private static final Logger LOG = LoggerFactory.getLogger(LagReporter.class);

    private final String prefix;
    private final long intervalMs;
    private final Db db;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier clock;
    private final ProtocolCodec codec;

    private Expected expected;
    private ScheduledFuture<?> next;
    private boolean stopped;
    private int serverVersion;

    public LagReporter(String appId, int shardNum, long intervalMs, Db db, ScheduledExecutorService scheduler,
            LongSupplier clock, ProtocolCodec codec) {
        this.prefix = appId + "/" + shardNum + "/lag-report/v1";
        this.intervalMs = intervalMs;
        this.db = db;
        this.scheduler = scheduler;
        this.clock = clock;
        this.codec = codec;
    }

    /** @return the logical message prefix of lag reports */
    public String prefix() {
        return prefix;
    }

    /**
     * Initiates the first report now.
     *
     * @return the time it is sent (epoch ms)
     */
    public synchronized long start() {
        long now = clock.getAsLong();
        schedule(0);
        return now;
    }

    /** Stops scheduling reports. */
    public synchronized void stop() {
        stopped = true;
        if (next != null) {
            next.cancel(false);
        }
    }

    private synchronized void schedule(long delayMs) {
        if (!stopped) {
            next = scheduler.schedule(this::initiate, Math.max(0, delayMs), TimeUnit.MILLISECONDS);
        }
    }

    private void initiate() {
        String id = UUID.randomUUID().toString();
        long now = clock.getAsLong();
        try (Connection c = db.open()) {
            if (serverVersion == 0) {
                serverVersion = c.getMetaData().getDatabaseMajorVersion() * 10000;
            }
            // PG 17 can flush the message immediately; before that it rides along with the next WAL flush.
            String flush = serverVersion >= 170000 ? ", true" : "";
            try (PreparedStatement ps = c.prepareStatement("WITH CTE AS (SELECT extract(epoch from now()) * 1000"
                    + " AS \"commitTimeMs\") SELECT \"commitTimeMs\", pg_logical_emit_message(false, ?,"
                    + " json_build_object('id', ?::text, 'sendTimeMs', ?::int8, 'commitTimeMs', \"commitTimeMs\")::text"
                    + flush + ")::text AS lsn FROM CTE")) {
                ps.setString(1, prefix);
                ps.setString(2, id);
                ps.setLong(3, now);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    synchronized (this) {
                        expected = new Expected(id, now, rs.getDouble(1), Lsn.parse(rs.getString(2)).asLong());
                    }
                }
            }
        } catch (SQLException e) {
            if ("42501".equals(e.getSQLState())) {
                LOG.warn("replication lag reports disabled: insufficient privilege to emit logical messages;"
                        + " run GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text[, boolean])"
                        + " TO <user> to enable them");
                stop();
                return;
            }
            LOG.warn("lag report {} failed, retrying in {}ms: {}", prefix, intervalMs, e.toString());
            schedule(intervalMs);
        } catch (RuntimeException e) {
            // A scheduled task's exception would vanish in its Future: log it and keep reporting.
            LOG.warn("lag report {} failed, retrying in {}ms", prefix, intervalMs, e);
            schedule(intervalMs);
        }
    }

    /**
     * @return whether {@code message} is a lag report of this shard
     */
    public boolean isLagReport(PgOutputMessage.Message message) {
        return message.prefix().equals(prefix);
    }

    /** Converts a received lag-report message into a status. */
    public synchronized StatusMessage process(PgOutputMessage.Message message) {
        long now = clock.getAsLong();
        Object parsed = codec.decodeValue(new String(message.content(), StandardCharsets.UTF_8));
        if (!(parsed instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("malformed lag report: " + parsed);
        }
        String id = String.valueOf(m.get("id"));
        double send = ((Number) m.get("sendTimeMs")).doubleValue();
        double commit = ((Number) m.get("commitTimeMs")).doubleValue();
        return received(id, send, commit, now, message.messageLsn());
    }

    /**
     * Before PG 17 the report message may sit unflushed; once the stream has passed its LSN it
     * counts as received.
     *
     * @return a lag status, or {@code null}
     */
    public synchronized StatusMessage checkCurrentLsn(long lsn) {
        Expected e = expected;
        if (e == null || Long.compareUnsigned(lsn, e.lsn) <= 0) {
            return null;
        }
        return received(e.id, e.sendTimeMs, e.commitTimeMs, clock.getAsLong(), lsn);
    }

    private StatusMessage received(String id, double send, double commit, long now, long lsn) {
        double nextSend = Math.max(now, send + intervalMs);
        if (expected != null && expected.id.equals(id)) {
            expected = null;
            schedule((long) (nextSend - now));
        } else {
            LOG.debug("extraneous lag report {}", id);
        }
        return new StatusMessage(new DownstreamStatus(false,
                new LagReport(new Timings(send, commit, now, Passthrough.NONE), nextSend, Passthrough.NONE),
                Passthrough.NONE), Lsn.of(lsn).toWatermark());
    }

    private record Expected(String id, long sendTimeMs, double commitTimeMs, long lsn) {}
}

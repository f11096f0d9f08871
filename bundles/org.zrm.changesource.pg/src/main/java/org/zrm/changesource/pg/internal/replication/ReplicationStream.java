package org.zrm.changesource.pg.internal.replication;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyDual;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutor;
import org.postgresql.jdbc.PgConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.types.PgValueFormatException;
import org.zrm.watermark.Lsn;

/**
 * The logical replication stream of one slot, driven by hand over pgjdbc's
 * {@link CopyDual} (pgjdbc's {@code PGReplicationStream} hides keepalives and cannot detect a dead
 * inbound connection).
 *
 * <p><b>Threads.</b> One pump thread owns the connection: it reads CopyData without blocking,
 * parses it, hands it to the {@link StreamHandler}, and writes Standby Status Updates (acks and
 * keepalives). When it has caught up with the walsender it waits about a millisecond before reading
 * again, so it reads and hands over batches instead of waking for every row. pgjdbc holds the connection lock during a read, so writing from any other thread
 * could stall behind it; other threads therefore only post the ack position ({@link #ack}) and wake
 * the pump. A watchdog task on the shared scheduler enforces inbound liveness; it aborts the
 * socket, which is the only way to interrupt a pump blocked in the middle of a message.
 *
 * <p><b>Liveness</b> (upstream 1.8 plus the fixes made after it): a status update is sent whenever
 * nothing was sent for {@code keepaliveFraction × wal_sender_timeout}; a reply-requested keepalive
 * is answered at once; if nothing at all arrives for {@code 2 × wal_sender_timeout} (or the
 * configured override) while the pump is reading, the connection is torn down with a retryable
 * error. Both are disabled when {@code wal_sender_timeout = 0} (unless an override is configured
 * for the inbound check). Time spent not reading because the handler is full (downstream
 * back-pressure) never counts as silence: the window restarts when reading resumes.
 */
public final class ReplicationStream implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationStream.class);

    /** Standby Status Updates carry microseconds since 2000-01-01. */
    private static final long PG_EPOCH_MILLIS = 946_684_800_000L;
    private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Most messages handled between two {@link StreamHandler#flush()} calls while data keeps coming. */
    public static final int FLUSH_EVERY = 64;
    /**
     * While messages keep arriving, acks are sent at most this often: acking every small
     * transaction would cost a write and a flush here and a reply to process in the walsender per
     * transaction, which halves single-row throughput. As soon as the stream is idle (nothing
     * pending on the socket, or the handler is full) the latest ack goes out at once.
     */
    private static final long ACK_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /**
     * When nothing is buffered (neither in pgjdbc nor in the kernel), the pump waits this long
     * before reading again instead of polling at once. The walsender sends every row with its own
     * {@code send()}; a pump that is faster than the walsender otherwise wakes for each row, hands
     * tiny batches to the consumer thread and competes for the CPU with the walsender it waits for
     * (W1 ran at half the {@code pg_recvlogical} rate that way). Waiting lets a batch accumulate in
     * the socket buffer; it adds at most this much latency to the first message of a burst.
     */
    private static final long COALESCE_NANOS = TimeUnit.MICROSECONDS.toNanos(1000);

    private final Connection connection;
    private final CopyDual copy;
    private final StreamSettings settings;
    private final StreamHandler handler;
    private final PgOutputParser parser;
    private final long walSenderTimeoutMs;
    private final long keepaliveNanos;
    private final long inboundTimeoutNanos;
    private final Thread pump;
    private final int backendPid;
    private final ScheduledFuture<?> watchdog;
    /** pgjdbc's buffered socket input, to tell whether a read would wait; null if unavailable. */
    private final InputStream pendingInput;

    private final AtomicLong requestedAck = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile ChangeSourceException watchdogFailure;
    private volatile long lastReceivedNanos;
    // Wall-clock twins of the figures above, for the operator's "age of ..." metrics only.
    private volatile long lastReceivedAtMillis;
    private volatile long lastAckSentAtMillis;
    private volatile long lastAckedLsn;
    private volatile boolean reading = true;

    // Pump-thread state.
    private long lastSentNanos;
    private long lastSentAck;
    private long lastAckSentNanos;
    private int unflushed;

    private ReplicationStream(Connection connection, CopyDual copy, StreamSettings settings, StreamHandler handler,
            ColumnParsers parsers, long walSenderTimeoutMs, ScheduledExecutorService scheduler, long startLsn,
            InputStream pendingInput) {
        this.connection = connection;
        this.pendingInput = pendingInput;
        this.copy = copy;
        this.settings = settings;
        this.handler = handler;
        this.parser = new PgOutputParser(parsers);
        this.walSenderTimeoutMs = walSenderTimeoutMs;
        this.keepaliveNanos = walSenderTimeoutMs > 0
                ? TimeUnit.MILLISECONDS.toNanos((long) Math.floor(walSenderTimeoutMs * settings.keepaliveFraction()))
                : 0;
        long override = settings.inboundTimeout().toMillis();
        long inboundMs = override > 0 ? override : override < 0 ? 0 : 2 * walSenderTimeoutMs;
        this.inboundTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(inboundMs);
        this.backendPid = pid(connection);
        this.lastReceivedNanos = System.nanoTime();
        this.lastSentNanos = lastReceivedNanos;
        this.pump = new Thread(this::pumpLoop, "zrm-pg-replication-" + settings.slot());
        this.pump.setDaemon(true);
        if (inboundTimeoutNanos > 0) {
            long period = Math.max(10, Math.min(1000, inboundMs / 10));
            this.watchdog = scheduler.scheduleAtFixedRate(this::checkInbound, period, period, TimeUnit.MILLISECONDS);
        } else {
            this.watchdog = null;
        }
        LOG.info("replication stream on slot {} started at {}: wal_sender_timeout={}ms, manual keepalive after {}ms,"
                        + " inbound timeout {}", settings.slot(), Lsn.of(startLsn), walSenderTimeoutMs,
                TimeUnit.NANOSECONDS.toMillis(keepaliveNanos),
                inboundMs > 0 ? inboundMs + "ms" : "disabled");
    }

    /**
     * Starts streaming on an open replication connection ({@code replication=database}, simple
     * query mode), which the stream then owns and closes.
     *
     * @param connection the replication connection
     * @param settings slot, publications and liveness settings
     * @param startLsn the position to start at ({@code major(lastWatermark) + 1})
     * @param parsers value parsers for column types
     * @param handler receives messages on the pump thread
     * @param scheduler runs the inbound-liveness watchdog
     * @return the running stream
     * @throws AutoResetException if the slot was invalidated (SQLSTATE 55000)
     * @throws ChangeSourceException if the slot stayed active for another walsender for all
     *     attempts, or another error occurred
     * @throws InterruptedException if interrupted while backing off
     */
    public static ReplicationStream start(Connection connection, StreamSettings settings, long startLsn,
            ColumnParsers parsers, StreamHandler handler, ScheduledExecutorService scheduler)
            throws ChangeSourceException, InterruptedException {
        Objects.requireNonNull(handler, "handler");
        boolean ok = false;
        try {
            long wst = walSenderTimeoutMs(connection);
            PGStream pgStream = enableNonBlockingPolling(connection);
            CopyDual copy = startReplication(connection, settings, startLsn);
            ReplicationStream stream = new ReplicationStream(connection, copy, settings, handler, parsers, wst,
                    scheduler, startLsn, bufferedInput(pgStream));
            stream.pump.start();
            ok = true;
            return stream;
        } catch (SQLException e) {
            throw PgErrors.translate("starting replication on slot " + settings.slot(), e);
        } finally {
            if (!ok) {
                PgErrors.closeQuietly(connection, "replication connection");
            }
        }
    }

    static long walSenderTimeoutMs(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT EXTRACT(EPOCH FROM (setting || unit)::interval) * 1000 AS \"walSenderTimeoutMs\""
                        + " FROM pg_settings WHERE name = 'wal_sender_timeout'")) {
            if (!rs.next()) {
                throw new SQLException("wal_sender_timeout is not reported by pg_settings");
            }
            return new BigDecimal(rs.getString(1)).longValue();
        }
    }

    /**
     * pgjdbc answers "is a message pending?" from a cache for up to a second after a negative
     * check (its {@code minStreamAvailableCheckDelay}), which would delay every idle-to-busy
     * transition by up to 1 s. Its own replication API sets the delay to 0 on its stream; we do the
     * same. The stream is reachable only through a protected field, hence reflection; if that fails
     * the stream still works, just with that latency, and we say so.
     */
    static PGStream enableNonBlockingPolling(Connection connection) {
        try {
            QueryExecutor executor = connection.unwrap(PgConnection.class).getQueryExecutor();
            Field f = org.postgresql.core.QueryExecutorBase.class.getDeclaredField("pgStream");
            f.setAccessible(true);
            PGStream stream = (PGStream) f.get(executor);
            stream.setMinStreamAvailableCheckDelay(0);
            return stream;
        } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
            LOG.warn("cannot disable pgjdbc's stream-availability cache ({}); idle replication latency may reach 1 s",
                    e.toString());
            return null;
        }
    }

    /**
     * pgjdbc's buffered input stream, whose {@code available()} counts its own buffer plus the
     * kernel's ({@code FIONREAD}) without waiting. Reachable only by reflection; without it the pump
     * simply never coalesces reads (see {@link #COALESCE_NANOS}).
     */
    static InputStream bufferedInput(PGStream stream) {
        if (stream == null) {
            return null;
        }
        try {
            Field f = PGStream.class.getDeclaredField("pgInput");
            f.setAccessible(true);
            return (InputStream) f.get(stream);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.info("cannot reach pgjdbc's input buffer ({}); replication reads are not coalesced", e.toString());
            return null;
        }
    }

    private static CopyDual startReplication(Connection connection, StreamSettings settings, long startLsn)
            throws SQLException, ChangeSourceException, InterruptedException {
        String sql = settings.startCommand(startLsn);
        int attempts = settings.slotActiveRetries() + 1;
        long delayMs = Math.max(1, settings.slotActiveRetryDelay().toMillis());
        for (int attempt = 1; ; attempt++) {
            try {
                return connection.unwrap(PGConnection.class).getCopyAPI().copyDual(sql);
            } catch (SQLException e) {
                String state = e.getSQLState();
                if (PgErrors.OBJECT_IN_USE.equals(state)) {
                    if (attempt >= attempts) {
                        throw new ChangeSourceException("exceeded max attempts (" + attempts
                                + ") to start the Postgres stream: " + e.getMessage(), e);
                    }
                    // The previous walsender of the slot (terminated by the takeover) releases it
                    // asynchronously; a short bounded back-off is all that is needed.
                    LOG.warn("attempt {}: replication slot {} is still active, retrying in {}ms: {}", attempt,
                            settings.slot(), delayMs, e.getMessage());
                    Thread.sleep(delayMs);
                    delayMs = Math.min(delayMs * 2, 1000);
                    continue;
                }
                if (PgErrors.OBJECT_NOT_IN_PREREQUISITE_STATE.equals(state)) {
                    LOG.error("replication slot {} cannot be streamed ({}); the replica must be re-synced",
                            settings.slot(), e.getMessage());
                    throw new AutoResetException("unable to start replication stream on slot " + settings.slot()
                            + ": " + e.getMessage(), e);
                }
                throw e;
            }
        }
    }

    /**
     * Posts a position to confirm upstream (write = flush = apply). Thread-safe, never blocks; only
     * the highest posted position is sent, by the pump thread.
     *
     * @param lsn the position (unsigned)
     */
    public void ack(long lsn) {
        requestedAck.accumulateAndGet(lsn, (a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b);
        LockSupport.unpark(pump);
    }

    /** Wakes the pump, e.g. when the handler has room again. */
    public void wake() {
        LockSupport.unpark(pump);
    }

    private static int pid(Connection c) {
        try {
            return c.unwrap(PGConnection.class).getBackendPID();
        } catch (SQLException e) {
            return 0;
        }
    }

    /** @return when the last message (data or keepalive) arrived from the walsender, epoch ms; 0 if none yet */
    public long lastReceivedAtMillis() {
        return lastReceivedAtMillis;
    }

    /** @return when a standby status update last moved the confirmed position, epoch ms; 0 if never */
    public long lastAckSentAtMillis() {
        return lastAckSentAtMillis;
    }

    /** @return the last position confirmed upstream (unsigned), 0 if none */
    public long lastAckedLsn() {
        return lastAckedLsn;
    }

    /** @return the process id of our walsender, 0 if unknown */
    public int backendPid() {
        return backendPid;
    }

    /** @return the server's {@code wal_sender_timeout} in ms, as read when the stream started */
    public long walSenderTimeoutMs() {
        return walSenderTimeoutMs;
    }

    /** @return the inbound-silence limit in ms, 0 if disabled */
    public long inboundTimeoutMs() {
        return TimeUnit.NANOSECONDS.toMillis(inboundTimeoutNanos);
    }

    /** Stops the stream and closes the connection; the handler then sees a closed-stream end. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            abortConnection();
            LockSupport.unpark(pump);
        }
    }

    private void checkInbound() {
        if (closed.get() || !reading) {
            return;
        }
        long silentNanos = System.nanoTime() - lastReceivedNanos;
        if (silentNanos > inboundTimeoutNanos) {
            long ms = TimeUnit.NANOSECONDS.toMillis(silentNanos);
            LOG.warn("no message received on replication slot {} in {}ms (limit {}ms, wal_sender_timeout {}ms);"
                            + " tearing down the replication connection to reconnect", settings.slot(), ms,
                    inboundTimeoutMs(), walSenderTimeoutMs);
            watchdogFailure = new ChangeSourceException("replication stream inbound timeout after " + ms + "ms");
            closed.set(true);
            abortConnection();
            LockSupport.unpark(pump);
        }
    }

    private void abortConnection() {
        try {
            // abort() closes the socket without taking pgjdbc's connection lock, which the pump
            // may hold while blocked in a read.
            connection.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            LOG.debug("aborting replication connection of slot {}: {}", settings.slot(), e.toString());
        }
    }

    private void pumpLoop() {
        ChangeSourceException end;
        try {
            runPump();
            end = new ChangeStreamClosedException("replication stream on slot " + settings.slot() + " closed");
        } catch (ChangeSourceException e) {
            end = e;
        } catch (SQLException e) {
            end = PgErrors.translate("replication stream on slot " + settings.slot(), e);
        } catch (RuntimeException e) {
            end = new ChangeSourceException("replication stream on slot " + settings.slot() + " failed: " + e, e);
        }
        if (watchdogFailure != null) {
            end = watchdogFailure;
        } else if (closed.get() && !(end instanceof ChangeStreamClosedException)) {
            end = new ChangeStreamClosedException("replication stream on slot " + settings.slot() + " closed", end);
        }
        closed.set(true);
        if (watchdog != null) {
            watchdog.cancel(false);
        }
        PgErrors.closeQuietly(connection, "replication connection");
        try {
            handler.onEnd(end);
        } catch (RuntimeException e) {
            LOG.error("stream handler of slot {} failed at end of stream", settings.slot(), e);
        }
    }

    private void runPump() throws SQLException, ChangeSourceException {
        int idleRounds = 0;
        boolean busy = false;
        while (!closed.get()) {
            long now = System.nanoTime();
            sendStatusIfDue(now, busy);
            if (!handler.hasRoom()) {
                flush(false);
                sendStatusIfDue(now, false);
                reading = false;
                LockSupport.parkNanos(this, parkNanos(now));
                continue;
            }
            if (!reading) {
                // Back-pressure is over: restart the silence window (upstream fix #6348).
                lastReceivedNanos = System.nanoTime();
                reading = true;
            }
            if (busy && nothingPending()) {
                // Hand the batch over now, then let the next one accumulate (COALESCE_NANOS).
                flush(true);
                sendStatusIfDue(now, false);
                LockSupport.parkNanos(this, Math.min(parkNanos(now), COALESCE_NANOS));
                busy = false;
                if (closed.get()) {
                    break;
                }
            }
            byte[] data = copy.readFromCopy(false);
            if (data == null) {
                busy = false;
                flush(true);
                if (!copy.isActive()) {
                    LOG.warn("replication stream on slot {} closed by the server", settings.slot());
                    return;
                }
                // Nothing pending: pgjdbc has already waited ~1 ms on the socket; back off a little
                // more while idle so an idle stream costs next to nothing.
                if (++idleRounds > 100) {
                    LockSupport.parkNanos(this, Math.min(parkNanos(now), TimeUnit.MILLISECONDS.toNanos(1)));
                }
                continue;
            }
            idleRounds = 0;
            busy = true;
            lastReceivedNanos = System.nanoTime();
            lastReceivedAtMillis = System.currentTimeMillis();
            dispatch(data);
            if (++unflushed >= FLUSH_EVERY) {
                flush(false);
            }
        }
        flush(false);
    }

    private boolean nothingPending() {
        if (pendingInput == null) {
            return false;
        }
        try {
            return pendingInput.available() == 0;
        } catch (IOException e) {
            // The read that follows reports the broken connection with pgjdbc's own error.
            return false;
        }
    }

    /** @param drained whether the socket has nothing more pending right now */
    private void flush(boolean drained) {
        unflushed = 0;
        handler.flush(drained);
    }

    private long parkNanos(long now) {
        long wait = MAX_PARK_NANOS;
        if (keepaliveNanos > 0) {
            wait = Math.min(wait, Math.max(1, lastSentNanos + keepaliveNanos - now));
        }
        return wait;
    }

    private void dispatch(byte[] data) throws ChangeSourceException, SQLException {
        if (data.length > settings.maxMessageBytes()) {
            throw new org.zrm.changesource.ChangeSourceAbortedException("replication message of " + data.length
                    + " bytes on slot " + settings.slot() + " exceeds replication.maxMessageBytes ("
                    + settings.maxMessageBytes() + "); raise it to stream this transaction");
        }
        if (data.length == 0) {
            throw new PgOutputFormatException("empty CopyData message");
        }
        switch (data[0]) {
            case 'w': {
                if (data.length < 25) {
                    throw new PgOutputFormatException("truncated XLogData message");
                }
                long dataStart = readLong(data, 1);
                PgOutputMessage msg;
                try {
                    msg = parser.parse(data, 25, data.length - 25);
                } catch (PgValueFormatException e) {
                    // A value we cannot convert would fail identically after every reconnect; the
                    // handler turns it into reset-required instead of a reconnect loop.
                    handler.onUnparseable(dataStart, e);
                    break;
                }
                handler.onMessage(dataStart, msg, data.length);
                break;
            }
            case 'k': {
                if (data.length < 18) {
                    throw new PgOutputFormatException("truncated keepalive message");
                }
                long walEnd = readLong(data, 1);
                boolean reply = data[17] != 0;
                if (reply) {
                    // Any status update satisfies the walsender's wal_sender_timeout; the position
                    // only moves once the consumer has echoed the keepalive's status message.
                    sendStatus(lastSentAck, System.nanoTime());
                }
                handler.onKeepalive(walEnd, reply);
                break;
            }
            default:
                LOG.warn("unknown replication message type 0x{} on slot {}; ignored",
                        Integer.toHexString(data[0] & 0xFF), settings.slot());
        }
    }

    private void sendStatusIfDue(long now, boolean busy) throws SQLException {
        long want = requestedAck.get();
        if (want != 0 && Long.compareUnsigned(want, lastSentAck) > 0
                && (!busy || now - lastAckSentNanos >= ACK_INTERVAL_NANOS)) {
            sendStatus(want, now);
            lastAckSentNanos = now;
        } else if (keepaliveNanos > 0 && now - lastSentNanos > keepaliveNanos) {
            sendStatus(lastSentAck, now);
            LOG.debug("sent manual keepalive on slot {}", settings.slot());
        }
    }

    private void sendStatus(long lsn, long now) throws SQLException {
        long wallClock = System.currentTimeMillis();
        byte[] msg = standbyStatusUpdate(lsn, wallClock);
        copy.writeToCopy(msg, 0, msg.length);
        copy.flushCopy();
        if (lsn != 0 && Long.compareUnsigned(lsn, lastSentAck) > 0) {
            lastAckedLsn = lsn;
            lastAckSentAtMillis = wallClock;
        }
        lastSentAck = lsn;
        lastSentNanos = now;
    }

    /**
     * A Standby Status Update: {@code 'r'}, write/flush/apply position (all {@code lsn}), client
     * clock, no reply requested. Postgres ignores a zero position, so a keepalive sent before
     * anything was acked never moves the slot.
     */
    static byte[] standbyStatusUpdate(long lsn, long nowMillis) {
        byte[] b = new byte[34];
        b[0] = 'r';
        writeLong(b, 1, lsn);
        writeLong(b, 9, lsn);
        writeLong(b, 17, lsn);
        writeLong(b, 25, (nowMillis - PG_EPOCH_MILLIS) * 1000);
        b[33] = 0;
        return b;
    }

    static long readLong(byte[] b, int off) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[off + i] & 0xFF);
        }
        return v;
    }

    private static void writeLong(byte[] b, int off, long v) {
        for (int i = 7; i >= 0; i--) {
            b[off + i] = (byte) v;
            v >>>= 8;
        }
    }
}

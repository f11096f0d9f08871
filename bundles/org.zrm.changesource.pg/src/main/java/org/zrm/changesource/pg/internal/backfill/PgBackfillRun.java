package org.zrm.changesource.pg.internal.backfill;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.postgresql.PGConnection;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.DownloadStatus;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.RowKey;

/**
 * A backfill read from an open snapshot transaction (upstream {@code streamBackfill} after the
 * snapshot). The first {@link #next()} computes the totals and starts the COPY; each call then
 * reads at most one message's worth of COPY data ({@link BackfillCopyReader}). The snapshot slot
 * is already gone: the run holds only its connection, which is closed after the final message,
 * on any failure, and by {@link #close()}.
 */
public final class PgBackfillRun implements BackfillRun {

    private static final Logger LOG = LoggerFactory.getLogger(PgBackfillRun.class);

    private static final String UNDEFINED_TABLE = "42P01";
    private static final String UNDEFINED_COLUMN = "42703";

    private enum State { NEW, COPYING, COPIED, DONE, FAILED }

    private final BackfillRequest request;
    private final String label;
    private final Relation relation;
    private final BackfillSchemaValidator.Validated backfill;
    private final String watermark;
    private final BackfillCopyReader reader;
    private final int flushThresholdBytes;
    private final AtomicBoolean closed = new AtomicBoolean();

    private volatile Connection conn;
    private volatile State state = State.NEW;
    private long rows;
    private long totalRows;
    private long totalBytes;
    private long copyBytes;
    private long maxMessageCopyBytes;
    private int messages;
    /** The last message {@link #next()} returned and its size as the reader estimated it. */
    private DataOrSchemaChange lastMessage;
    private long lastMessageSize;
    private long startNanos;

    PgBackfillRun(BackfillRequest request, Connection conn, String watermark, BackfillSchemaValidator.Validated backfill,
            BackfillCopyReader reader, int flushThresholdBytes) {
        this.request = request;
        this.label = request.table().schema() + "." + request.table().name() + "["
                + String.join(",", request.columns().keySet()) + "]";
        this.conn = conn;
        this.watermark = watermark;
        this.backfill = backfill;
        this.reader = reader;
        this.flushThresholdBytes = flushThresholdBytes;
        this.relation = new Relation(request.table().schema(), request.table().name(), new RowKey(backfill.rowKey()));
    }

    @Override
    public String watermark() {
        return watermark;
    }

    @Override
    public DataOrSchemaChange next() throws ChangeSourceException, InterruptedException {
        if (closed.get()) {
            throw new ChangeSourceException("Backfill of " + label + " was closed");
        }
        switch (state) {
            case DONE:
                return null;
            case FAILED:
                throw new ChangeSourceException("Backfill of " + label + " failed earlier");
            default:
                break;
        }
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before reading backfill " + label);
        }
        try {
            if (state == State.NEW) {
                startCopy();
            }
            if (state == State.COPYING) {
                BackfillCopyReader.Batch batch = reader.read(flushThresholdBytes);
                if (batch.last()) {
                    finishCopy();
                }
                if (!batch.rows().isEmpty()) {
                    return message(batch);
                }
            }
            state = State.DONE;
            LOG.info("backfill {}: finished streaming {} rows, {} msgs, {} bytes ({} ms)", label, rows, messages,
                    copyBytes, (System.nanoTime() - startNanos) / 1_000_000);
            return new BackfillCompleted(relation, backfill.columns(), watermark, status(), Passthrough.NONE);
        } catch (SQLException e) {
            fail();
            if (closed.get()) {
                throw new ChangeSourceException("Backfill of " + label + " was closed", e);
            }
            throw translate(request, label, e);
        } catch (RuntimeException e) {
            fail();
            throw new ChangeSourceException("Backfill of " + label + " failed: " + e.getMessage(), e);
        }
    }

    private void startCopy() throws SQLException {
        startNanos = System.nanoTime();
        long[] totals = reader.totals(conn);
        totalRows = totals[0];
        totalBytes = totals[1];
        LOG.info("backfill {}: computed total rows and bytes for: {} ({} ms): rows={} bytes={}", label,
                reader.copyStatement(), (System.nanoTime() - startNanos) / 1_000_000, totalRows, totalBytes);
        reader.start(conn);
        state = State.COPYING;
    }

    private void finishCopy() throws SQLException {
        state = State.COPIED;
        Connection c = conn;
        conn = null;
        // A read-only transaction: ending it releases the snapshot; nothing to commit.
        try (c) {
            c.rollback();
        }
    }

    private Backfill message(BackfillCopyReader.Batch batch) {
        rows += batch.rows().size();
        copyBytes += batch.copyBytes();
        maxMessageCopyBytes = Math.max(maxMessageCopyBytes, batch.copyBytes());
        messages++;
        LOG.debug("backfill {}: flushed {} rows, {} bytes (total: rows={}, msgs={}, bytes={})", label,
                batch.rows().size(), batch.copyBytes(), rows, messages, copyBytes);
        Backfill msg = new Backfill(relation, backfill.columns(), watermark, batch.rows(), status(), Passthrough.NONE);
        lastMessage = msg;
        lastMessageSize = batch.estimatedSize();
        return msg;
    }

    @Override
    public int estimatedSize(DataOrSchemaChange msg) {
        return msg == lastMessage
                ? (int) Math.min(Integer.MAX_VALUE, BackfillManager.CONTROL_COST + lastMessageSize)
                : BackfillRun.super.estimatedSize(msg);
    }

    private DownloadStatus status() {
        return new DownloadStatus(rows, totalRows, totalBytes, Passthrough.NONE);
    }

    /** COPY bytes read so far. */
    public long copyBytes() {
        return copyBytes;
    }

    /** The most COPY bytes any one message was made of: what a run buffers at most. */
    public long maxMessageCopyBytes() {
        return maxMessageCopyBytes;
    }

    /**
     * Ends the run from any thread. A statement in progress (the totals or the COPY) is cancelled on
     * the server, which stops the scan and releases the snapshot at once, and the socket is closed,
     * which fails a {@link #next()} blocked on it; neither waits for the reading thread.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Connection c = conn;
        conn = null;
        if (c == null) {
            return;
        }
        try {
            if (state == State.NEW || state == State.COPYING) {
                c.unwrap(PGConnection.class).cancelQuery();
            }
        } catch (SQLException e) {
            // The abort below still ends the session; the server then stops at its next write.
            LOG.warn("backfill {}: could not cancel the running statement: {}", label, e.toString());
        }
        abort(c);
    }

    private void fail() {
        state = State.FAILED;
        Connection c = conn;
        conn = null;
        if (c != null) {
            abort(c);
        }
    }

    private void abort(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException e) {
            LOG.warn("backfill {}: error closing the snapshot connection: {}", label, e.toString());
        }
    }

    /**
     * Some ALTER TABLE forms are not MVCC-safe: a table or column dropped or renamed after the
     * snapshot was validated fails the statement with 42P01/42703. That is the request being out of
     * date, not an upstream failure.
     */
    static ChangeSourceException translate(BackfillRequest request, String label, SQLException e) {
        String state = e.getSQLState();
        if (UNDEFINED_TABLE.equals(state) || UNDEFINED_COLUMN.equals(state)) {
            ServerErrorMessage m = e instanceof PSQLException p ? p.getServerErrorMessage() : null;
            return new SchemaIncompatibilityException(request, m != null && m.getMessage() != null ? m.getMessage()
                    : e.getMessage(), e);
        }
        return new ChangeSourceException("Backfill of " + label + " failed: " + e.getMessage(), e);
    }
}

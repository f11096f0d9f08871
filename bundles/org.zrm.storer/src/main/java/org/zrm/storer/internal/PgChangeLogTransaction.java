package org.zrm.storer.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.OwnershipLostException;

/**
 * Stores one or more consecutive upstream transactions in one change-db transaction (see the
 * {@link ChangeLogTransaction} contract for the row order and group commit).
 *
 * <p><b>Flush pipeline.</b> pgjdbc runs one statement at a time per connection, so "two flushes in
 * flight" (upstream pipelines two INSERTs) is realised with a writer thread: a full batch is
 * serialised on the caller's thread while the previous batch's write executes on the
 * writer thread; before handing over the new one, the caller waits for the previous one to finish.
 * So at most one statement executes and one more batch is prepared; memory holds at most about two
 * batches. A schema change first hands over the pending batch, then its own row together with
 * its metadata statements. At commit the rest is written, then {@code lastWatermark} is updated,
 * then the transaction commits.
 *
 * <p><b>Batch statement.</b> {@link StorerSettings.InsertMode} chooses how a batch is written:
 * one binary {@code COPY … FROM STDIN} (default; see the decision recorded there) or upstream's
 * {@code json_to_recordset} INSERT. Both store the same rows byte for byte. In COPY mode a batch of
 * a single row (always so with {@code change.logBatchSize = 1}) uses the single-row INSERT
 * instead, which needs one round trip where a COPY needs two.
 *
 * <p><b>Ownership.</b> {@code begin} read the owner with {@code FOR UPDATE}, so the value cannot
 * change while this transaction is open. If it is not this task, rows are not even sent (the
 * loser of a takeover writes nothing) and {@link #commit()} rolls back and throws
 * {@link OwnershipLostException}.
 *
 * <p>Not thread-safe; used by the storer thread.
 */
public final class PgChangeLogTransaction implements ChangeLogTransaction {

    private static final Logger LOG = LoggerFactory.getLogger(PgChangeLogTransaction.class);

    /** Rows of the first batch of a database transaction (see {@link #nextBatchRows}). */
    static final int FIRST_BATCH_ROWS = 128;

    /**
     * Largest CopyData message: a batch is normally sent as one message (see {@link #copyRows});
     * only a batch above this is split, far below the protocol's 1 GB message limit.
     */
    private static final int COPY_MESSAGE_LIMIT = 64 << 20;

    private enum State { OPEN, FAILED, DONE }

    private final CdcSchema schema;
    private final ConnectionPool.Lease lease;
    private final Connection c;
    private final Executor writer;
    private final SchemaChangeTracker tracker;
    private final int batchSize;
    private final int timeoutSeconds;
    private final String taskID;
    private final String owner;
    private final String insertBatchSql;
    private final String insertRowSql;
    private final String copySql;
    private final StorerSettings.InsertMode insertMode;
    private final CopyBuffers copyBuffers;
    private boolean copyTimeoutSet; // touched only by the writer thread, one task at a time

    private List<ChangeLogEntry> batch;
    /**
     * Rows that trigger the next hand-over: it starts at {@link #FIRST_BATCH_ROWS} and doubles up
     * to {@code batchSize}, so the database starts writing a bulk transaction after its first few
     * rows instead of idling until a full batch (2000 rows, ~5 MB) has been handed over and
     * encoded; after a few batches the size is the configured one.
     */
    private int nextBatchRows;
    private long batches;
    private Future<?> inFlight;
    private State state = State.OPEN;

    // Row-order validation across (possibly several) upstream transactions.
    private String openWatermark;
    private long nextPos;
    private String lastCommitWatermark;
    private long rows;

    PgChangeLogTransaction(CdcSchema schema, ConnectionPool.Lease lease, Executor writer,
            SchemaChangeTracker tracker, int batchSize, int statementTimeoutMs, String taskID, String owner,
            StorerSettings.InsertMode insertMode, CopyBuffers copyBuffers) {
        this.schema = schema;
        this.copyBuffers = copyBuffers;
        this.lease = lease;
        this.c = lease.connection();
        this.writer = writer;
        this.tracker = tracker;
        this.batchSize = batchSize;
        this.timeoutSeconds = Math.max(1, (statementTimeoutMs + 999) / 1000);
        this.taskID = taskID;
        this.owner = owner;
        this.insertMode = insertMode;
        this.batch = new ArrayList<>(Math.min(batchSize, 4096));
        this.nextBatchRows = Math.min(batchSize, FIRST_BATCH_ROWS);
        this.insertBatchSql = "INSERT INTO " + schema.table("changeLog") + " (\"watermark\", \"pos\", \"change\", \"precommit\")"
                + " SELECT \"watermark\", \"pos\", \"change\"::json, \"precommit\""
                + " FROM json_to_recordset(?::json) AS x(\"watermark\" TEXT, \"pos\" INT8, \"change\" TEXT, \"precommit\" TEXT)";
        this.insertRowSql = "INSERT INTO " + schema.table("changeLog") + " (\"watermark\", \"pos\", \"change\", \"precommit\")"
                + " VALUES (?, ?, ?::json, ?)";
        this.copySql = "COPY " + schema.table("changeLog") + " (\"watermark\", \"pos\", \"change\", \"precommit\")"
                + " FROM STDIN (FORMAT binary)";
    }

    /** @return the batches handed over so far (for tests) */
    long batches() {
        return batches;
    }

    /** @return whether the owner read at begin is this task */
    boolean ownsLog() {
        return taskID.equals(owner);
    }

    @Override
    public void append(ChangeLogEntry entry) throws ChangeLogException {
        checkOpen();
        validate(entry);
        rows++;
        if (!ownsLog()) {
            return; // commit() fails anyway; don't write behind the new owner's back
        }
        if (SchemaChangeTracker.isSchemaChange(entry.tag())) {
            List<SchemaChangeTracker.Sql> meta;
            try {
                meta = tracker.statements(entry.tag(), entry.change());
            } catch (ChangeLogException e) {
                state = State.FAILED;
                throw e;
            }
            handOverBatch();
            submit(() -> {
                insertRow(entry);
                for (SchemaChangeTracker.Sql sql : meta) {
                    run(sql);
                }
            });
        } else {
            batch.add(entry);
            if (batch.size() >= nextBatchRows) {
                handOverBatch();
            }
        }
    }

    private void validate(ChangeLogEntry e) throws ChangeLogException {
        String problem = null;
        if (openWatermark == null) {
            if (!"begin".equals(e.tag()) || e.pos() != 0) {
                problem = "expected a begin row at pos 0, got " + e.tag() + " at pos " + e.pos();
            } else if (lastCommitWatermark != null && e.watermark().compareTo(lastCommitWatermark) <= 0) {
                problem = "watermark " + e.watermark() + " is not after the previous commit " + lastCommitWatermark;
            }
        } else if (!openWatermark.equals(e.watermark())) {
            problem = "watermark " + e.watermark() + " differs from the open transaction's " + openWatermark;
        } else if (e.pos() != nextPos) {
            problem = "expected pos " + nextPos + ", got " + e.pos();
        } else if ("begin".equals(e.tag()) || "rollback".equals(e.tag())) {
            problem = e.tag() + " row inside transaction " + openWatermark;
        }
        if (problem == null && e.precommit() != null && !"commit".equals(e.tag())) {
            problem = "precommit on a " + e.tag() + " row";
        }
        if (problem != null) {
            state = State.FAILED;
            throw new ChangeLogException("rejected change-log row (" + e.watermark() + ", " + e.pos() + "): " + problem);
        }
        if ("commit".equals(e.tag())) {
            openWatermark = null;
            lastCommitWatermark = e.watermark();
        } else {
            openWatermark = e.watermark();
            nextPos = e.pos() + 1;
        }
    }

    @Override
    public void commit() throws ChangeLogException {
        checkOpen();
        if (openWatermark != null) {
            state = State.FAILED;
            throw new ChangeLogException("cannot commit change-log transaction in the middle of upstream transaction "
                    + openWatermark + " (next pos " + nextPos + ")");
        }
        if (!ownsLog()) {
            state = State.FAILED;
            close();
            LOG.error("changelog: ownership of {} has been assumed by {}; rolled back {} rows (task {})",
                    schema, owner, rows, taskID);
            throw new OwnershipLostException("changeLog ownership has been assumed by " + owner, owner);
        }
        try {
            handOverBatch();
            awaitInFlight();
            if (lastCommitWatermark != null) {
                try (PreparedStatement ps = c.prepareStatement(
                        "UPDATE " + schema.table("replicationState") + " SET \"lastWatermark\" = ?")) {
                    ps.setQueryTimeout(timeoutSeconds);
                    ps.setString(1, lastCommitWatermark);
                    ps.executeUpdate();
                }
            }
            c.commit();
            state = State.DONE;
        } catch (SQLException e) {
            state = State.FAILED;
            close();
            throw new ChangeLogException("committing change-log transaction up to " + lastCommitWatermark
                    + " failed: " + e.getMessage(), e);
        } catch (ChangeLogException e) {
            state = State.FAILED;
            close();
            throw e;
        }
        try {
            c.setAutoCommit(true);
        } catch (SQLException e) {
            lease.discard();
        }
        lease.close();
    }

    @Override
    public void close() {
        if (state == State.DONE) {
            return;
        }
        state = State.DONE;
        if (inFlight != null) {
            try {
                inFlight.get();
            } catch (ExecutionException e) {
                // Already reported to the caller by append/commit; the transaction is rolled back below.
                LOG.debug("changelog: in-flight write failed before rollback: {}", e.getCause().getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                lease.discard(); // the writer thread may still use the connection
            }
            inFlight = null;
        }
        try {
            c.rollback();
            c.setAutoCommit(true);
        } catch (SQLException e) {
            LOG.warn("changelog: rollback failed, discarding the connection: {}", e.getMessage());
            lease.discard();
        }
        lease.close();
    }

    // ------------------------------------------------------------------ pipeline

    private void handOverBatch() throws ChangeLogException {
        if (batch.isEmpty()) {
            return;
        }
        List<ChangeLogEntry> rowsToWrite = batch;
        batch = new ArrayList<>(Math.min(batchSize, 4096));
        batches++;
        nextBatchRows = (int) Math.min(batchSize, 2L * nextBatchRows);
        // Serialised here, on the caller's thread, while the previous flush may still execute.
        if (insertMode == StorerSettings.InsertMode.COPY) {
            if (rowsToWrite.size() == 1) {
                ChangeLogEntry row = rowsToWrite.get(0);
                submit(() -> insertRow(row));
            } else {
                BatchCopy copy = BatchCopy.encode(rowsToWrite, copyBuffers);
                submit(() -> {
                    try {
                        copyRows(copy);
                    } finally {
                        copyBuffers.release(copy.buffer()); // sent or failed: nothing reads it any more
                    }
                });
            }
        } else {
            String json = BatchJson.encode(rowsToWrite);
            submit(() -> {
                try (PreparedStatement ps = c.prepareStatement(insertBatchSql)) {
                    ps.setQueryTimeout(timeoutSeconds);
                    ps.setString(1, json);
                    ps.executeUpdate();
                }
            });
        }
    }

    private void copyRows(BatchCopy copy) throws SQLException {
        if (!copyTimeoutSet) {
            // pgjdbc's COPY API has no client-side query timeout, so the server enforces the same
            // bound for this transaction (begin set it to 0, as upstream's runTx does; every other
            // statement here carries the same bound client-side, so they are unaffected).
            try (PreparedStatement ps = c.prepareStatement("SELECT set_config('statement_timeout', ?, true)")) {
                ps.setQueryTimeout(timeoutSeconds);
                ps.setString(1, timeoutSeconds * 1000 + "ms");
                ps.execute();
            }
            copyTimeoutSet = true;
        }
        CopyIn in = c.unwrap(PGConnection.class).getCopyAPI().copyIn(copySql);
        try {
            // One CopyData message per batch. Splitting a batch into 256 KiB messages (so that the
            // server could parse while the rest was on the wire) cost the backend a minor page
            // fault per 4 KB received, every batch, even on a long-lived connection: storer-W3
            // measured ~17,000 faults and ~35 % more backend CPU per 50k-row transaction than one
            // message per batch, which has none (docs/BENCHMARKS.md, session 4).
            for (int off = 0; off < copy.length(); off += COPY_MESSAGE_LIMIT) {
                in.writeToCopy(copy.buffer(), off, Math.min(COPY_MESSAGE_LIMIT, copy.length() - off));
            }
            in.endCopy();
        } catch (SQLException | RuntimeException e) {
            if (in.isActive()) {
                // The transaction fails anyway; end the COPY so the connection can still roll back.
                try {
                    in.cancelCopy();
                } catch (SQLException cancel) {
                    e.addSuppressed(cancel);
                }
            }
            throw e;
        }
    }

    @FunctionalInterface
    private interface Work {
        void run() throws SQLException;
    }

    /** Waits for the executing statement (bounding the pipeline to one executing, one prepared), then hands over. */
    private void submit(Work work) throws ChangeLogException {
        awaitInFlight();
        FutureTask<Void> task = new FutureTask<>(() -> {
            work.run();
            return null;
        });
        try {
            writer.execute(task);
        } catch (RejectedExecutionException e) {
            state = State.FAILED;
            throw new ChangeLogException("change-log writer is shut down", e);
        }
        inFlight = task;
    }

    private void awaitInFlight() throws ChangeLogException {
        Future<?> f = inFlight;
        if (f == null) {
            return;
        }
        try {
            f.get();
            inFlight = null;
        } catch (ExecutionException e) {
            inFlight = null;
            state = State.FAILED;
            Throwable cause = e.getCause();
            throw new ChangeLogException("writing change-log rows failed: " + cause.getMessage(), cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            state = State.FAILED;
            throw new ChangeLogException("interrupted while writing change-log rows", e);
        }
    }

    private void insertRow(ChangeLogEntry e) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertRowSql)) {
            ps.setQueryTimeout(timeoutSeconds);
            ps.setString(1, e.watermark());
            ps.setLong(2, e.pos());
            ps.setString(3, e.change());
            ps.setString(4, BatchJson.precommit(e));
            ps.executeUpdate();
        }
    }

    private void run(SchemaChangeTracker.Sql sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.text())) {
            ps.setQueryTimeout(timeoutSeconds);
            Object[] params = sql.params();
            for (int i = 0; i < params.length; i++) {
                if (params[i] instanceof String[] array) {
                    ps.setArray(i + 1, c.createArrayOf("text", array));
                } else {
                    ps.setString(i + 1, (String) params[i]);
                }
            }
            ps.executeUpdate();
        }
    }

    private void checkOpen() throws ChangeLogException {
        if (state != State.OPEN) {
            throw new ChangeLogException("change-log transaction is no longer open ("
                    + (state == State.FAILED ? "it failed; close it" : "it was committed or closed") + ")");
        }
    }
}

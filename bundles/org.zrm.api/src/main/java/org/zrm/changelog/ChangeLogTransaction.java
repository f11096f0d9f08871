package org.zrm.changelog;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The database transaction that stores one upstream transaction, opened by
 * {@link ChangeLog#beginTransaction(String)}. Used by the storer thread only.
 *
 * <p><b>Back-pressure.</b> {@link #append(ChangeLogEntry)} batches rows and writes a batch when it
 * is full; it blocks while more than one earlier batch is still being written, so at most about
 * two batches are in flight and memory stays bounded. A schema-change row is written on its own,
 * together with the backfill/table-metadata bookkeeping it implies, after the rows before it.
 *
 * <p><b>Completion.</b> {@link #commit()} returns only after the database has committed. The
 * storer acknowledges the transaction upstream only after {@code commit()} returned normally; an
 * exception means nothing was stored, and the stream must restart from the last stored watermark.
 */
@ProviderType
public interface ChangeLogTransaction extends AutoCloseable {

    /**
     * Adds a row. Rows must come in {@code pos} order starting at 0 and share one watermark;
     * implementations reject anything else with {@link ChangeLogException}.
     *
     * @param entry the row
     * @throws ChangeLogException if a write failed (the transaction is then dead; close it)
     */
    void append(ChangeLogEntry entry) throws ChangeLogException;

    /**
     * Writes the remaining rows, verifies that the writer still owns the log, records the
     * transaction's watermark as {@code lastWatermark} and commits. Blocks until the commit is
     * durable.
     *
     * @throws OwnershipLostException if another task took over; the transaction was rolled back
     * @throws ChangeLogException if any write or the commit failed; nothing was stored
     */
    void commit() throws ChangeLogException;

    /**
     * Rolls the transaction back if it was neither committed nor already rolled back (upstream
     * {@code rollback} and stream interruption). Idempotent and never throws: a failed rollback
     * means the connection is broken, and the server discards the transaction anyway;
     * implementations log such failures.
     */
    @Override
    void close();
}

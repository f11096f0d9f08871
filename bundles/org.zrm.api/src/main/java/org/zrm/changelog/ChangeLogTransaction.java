package org.zrm.changelog;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The database transaction that stores one or more consecutive upstream transactions, opened by
 * {@link ChangeLog#beginTransaction(String)}. Used by the storer thread only.
 *
 * <p><b>Row order.</b> An upstream transaction is a {@code begin} row at {@code pos} 0, then its
 * data and schema-change rows at 1, 2, … without gaps, then its {@code commit} row; every row
 * carries the transaction's commit watermark, and only the commit row carries a
 * {@code precommit} (if it is {@code null} there, the watermark is stored). {@code rollback} rows
 * are never stored: the caller closes the transaction instead.
 *
 * <p><b>Group commit.</b> After a {@code commit} row, another upstream transaction may follow in
 * the same database transaction: a {@code begin} row at {@code pos} 0 with a watermark strictly
 * greater than the previous commit's. {@link #commit()} then makes all of them durable at once
 * and records the <em>last</em> commit row's watermark as {@code lastWatermark}; none of them is
 * stored (and none may be acknowledged upstream) before {@code commit()} returns. Committing
 * between a {@code begin} and its {@code commit}, or appending a row that breaks the order above,
 * is a {@link ChangeLogException} and kills the transaction.
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
     * Adds a row. Rows must follow the order described in the class comment; implementations
     * reject anything else with {@link ChangeLogException}.
     *
     * @param entry the row
     * @throws ChangeLogException if a write failed (the transaction is then dead; close it)
     */
    void append(ChangeLogEntry entry) throws ChangeLogException;

    /**
     * Writes the remaining rows, verifies that the writer still owns the log, records the last
     * commit row's watermark as {@code lastWatermark} (unchanged if no row was appended) and
     * commits. Blocks until the commit is durable.
     *
     * @throws OwnershipLostException if another task took over; the transaction was rolled back
     * @throws ChangeLogException if an upstream transaction is still open (its {@code commit} row
     *     has not been appended), or if any write or the commit failed; nothing was stored
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

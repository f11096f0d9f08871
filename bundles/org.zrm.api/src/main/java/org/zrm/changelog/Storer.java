package org.zrm.changelog;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.osgi.annotation.versioning.ProviderType;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * The storer of one upstream stream (spec §1.4): the change streamer's stream loop enqueues every
 * message in stream order, and the storer's own writer thread stores the transactions in the
 * change log, reports each upstream transaction to the {@link StorerListener} only after the
 * database transaction that holds it has committed, echoes statuses in order, and pins catch-up
 * snapshots between database transactions. Obtained from {@link StorerFactory#start}.
 *
 * <p><b>Back-pressure.</b> {@link #enqueue} blocks while the queued messages exceed the storer's
 * byte or message bound, until the writer has drained them below a low-water mark (hysteresis);
 * the stream loop, blocked there, stops reading from the change source.
 *
 * <p><b>Group commit.</b> While a database commit runs, further complete upstream transactions
 * that are already queued may join the next database transaction, within configured bounds. An
 * upstream transaction is reported stored (and so ackable) only after its group has committed; a
 * failed group reports nothing.
 *
 * <p><b>Life cycle.</b> Single-use: after {@link #stop()} or a failure, start a new storer for the
 * next stream, which resumes from the change log's last stored watermark. Entries still queued
 * then are dropped; catch-up requests among them are failed.
 *
 * <p><b>Threading.</b> {@link #enqueue} and {@link #abort()} are called by one stream-loop thread;
 * every other method may be called from any thread.
 */
@ProviderType
public interface Storer extends AutoCloseable {

    /**
     * Queues one message of the change stream, in stream order.
     *
     * <ul>
     *   <li>{@code begin}, {@code data}, {@code commit}, {@code rollback}: stored; {@code json} must
     *       be the message's complete serialised text (as forwarded to subscribers), from which the
     *       inner change is stored byte-identical.</li>
     *   <li>{@code status}: echoed upstream through {@link StorerListener#statusAcked}, in order,
     *       if its {@code ack} is true or absent; {@code json} is ignored and may be
     *       {@code null}.</li>
     *   <li>{@code control}: rejected; the change streamer handles it.</li>
     * </ul>
     * Blocks while the storer is over its bounds (back-pressure).
     *
     * @param message the message
     * @param json its serialised text
     * @throws IllegalArgumentException for a control message, or text that is not the message's
     * @throws IllegalStateException if the message breaks the stream's order: a {@code begin}
     *     inside a transaction, a change outside one, a commit whose watermark is not the
     *     begin's, or a commit watermark not above the previous one; nothing is queued then
     * @throws ChangeLogException if the writer has stopped or failed (the cause says why)
     * @throws InterruptedException if interrupted while blocked by back-pressure; the message
     *     was queued
     */
    void enqueue(ChangeStreamMessage message, String json) throws ChangeLogException, InterruptedException;

    /**
     * Discards the transaction being enqueued, if any, because the stream was interrupted in its
     * middle (upstream {@code storer.abort()}). Nothing of it is stored; subscribers waiting for it
     * to end are caught up afterwards. No-op between transactions. Never blocks.
     *
     * @throws ChangeLogException if the writer has stopped or failed
     */
    void abort() throws ChangeLogException;

    /**
     * Queues a subscriber's catch-up at the current stream position: it is handed to the
     * {@link CatchupHandler} with a snapshot pinned after the transaction in progress (if any) has
     * been stored or discarded, so that the snapshot plus the live messages after this call hold
     * every transaction exactly once. Never blocks. On a stopped storer the request is failed at
     * once.
     *
     * @param request the subscriber's request
     */
    void enqueueCatchup(CatchupRequest request);

    /**
     * @return a future completed once every entry queued before this call is processed: complete
     *     transactions among them are durable and reported (a transaction still open is written but
     *     not committed). Completed exceptionally if the writer stops or fails first.
     */
    CompletableFuture<Void> barrier();

    /**
     * Asks the writer to stop after everything queued so far. A transaction that is still open then
     * is rolled back (its rest never arrived). Non-blocking and idempotent.
     */
    void stop();

    /**
     * Waits for the writer to end after {@link #stop()} or a failure.
     *
     * @param timeout how long to wait
     * @return {@code true} if the writer ended within {@code timeout}
     * @throws InterruptedException if interrupted while waiting
     */
    boolean awaitTermination(Duration timeout) throws InterruptedException;

    /**
     * Stops after the queued work and waits for the writer; a writer that does not end in time is
     * interrupted, which rolls back its open transaction. Never throws.
     */
    @Override
    void close();

    /** @return bytes currently counted against the back-pressure bound */
    long queuedBytes();

    /** @return the byte bound in force */
    long limitBytes();

    /** @return whether back-pressure is applied now, i.e. a producer is (or will be) held in {@link #enqueue} */
    boolean isApplyingBackPressure();

    /** @return how many times the producer was held back so far */
    long backPressureEvents();

    /** @return counters of the writer */
    StorerStats stats();
}

package org.zrm.changesource;

import java.time.Duration;
import org.osgi.annotation.versioning.ConsumerType;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * One open stream from a {@link ChangeSource}: downstream messages are pulled with
 * {@link #take()}/{@link #poll(Duration)}, acknowledgements go back with
 * {@link #ack(ChangeSourceUpstream)}. It replaces upstream's {@code {changes: Source, acks: Sink}}
 * pair.
 *
 * <h2>Threading and back-pressure</h2>
 * <ul>
 *   <li>Exactly one consumer thread (the streamer's stream loop) calls {@code take}/{@code poll}.
 *       The consumer only asks for the next message when it is ready for it, after storing and
 *       forwarding the previous one and after its own memory back-pressure is released. The source
 *       must therefore <em>buffer only a bounded amount</em> (for example a small queue filled by a
 *       reader that blocks when it is full, or reading the socket on demand) so that a slow
 *       consumer throttles the upstream connection through TCP instead of filling the heap.</li>
 *   <li>{@link #ack(ChangeSourceUpstream)} is called from another thread (the storer), possibly
 *       concurrently with a blocked {@code take()}. It must be thread-safe, must not block on I/O,
 *       and must not throw; implementations typically record the latest acked position and send it
 *       upstream from their own thread, coalescing.</li>
 *   <li>{@link #close()} may be called from any thread at any time, and is idempotent.</li>
 * </ul>
 *
 * <h2>Ordering guarantees the source must provide</h2>
 * <ul>
 *   <li>Transactions arrive as contiguous {@code begin, data*, (commit | rollback)} sequences, in
 *       commit order; a {@code data}, {@code commit} or {@code rollback} never arrives outside a
 *       transaction, and {@code commit}'s {@code watermark} equals its {@code begin}'s
 *       {@code commitWatermark}.</li>
 *   <li>Commit watermarks are strictly increasing by {@link String#compareTo} (see
 *       {@link org.zrm.watermark.Watermarks}) and greater than the {@code afterWatermark} the
 *       stream was started with. The change log's keys, catch-up and purge all rely on this; the
 *       streamer treats a violation as an unrecoverable error.</li>
 *   <li>{@code status} and {@code control} messages may appear anywhere, including inside a
 *       transaction. Status watermarks are non-decreasing, and a status with {@code ack} true must
 *       not name a position past the commit point of a transaction that is still in flight.</li>
 *   <li>Replaying from a watermark yields the same transactions with the same watermarks, so that
 *       a restart after a failure stores exactly the same rows.</li>
 * </ul>
 *
 * <h2>Which watermarks are acked</h2>
 * The streamer acks only positions it has made durable, in non-decreasing order:
 * <ul>
 *   <li>{@code ["status", <commit body>, {watermark: W}]} after the change-log transaction holding
 *       commit {@code W} has committed, except for transactions whose {@code begin} carried
 *       {@code skipAck: true};</li>
 *   <li>an echo of every {@code status} message with {@code ack} true (or absent), once every
 *       message taken before it has been stored.</li>
 * </ul>
 * An ack of {@code W} means every transaction with a commit watermark {@code <= W} is durable, so
 * the source may release upstream resources (for Postgres: confirm the flush LSN). A source must
 * never treat a message as acknowledged merely because it was taken; changes that are not acked
 * are re-sent after a restart, which is what makes the pipeline lossless.
 *
 * <h2>Errors and end of stream</h2>
 * Upstream failures surface from {@code take()}/{@code poll()} as a {@link ChangeSourceException}
 * (retryable), {@link ChangeSourceAbortedException} (stop the pipeline) or
 * {@link AutoResetException} (re-sync required). The end of the stream, whether the upstream
 * closed it cleanly or {@link #close()} was called, is reported as
 * {@link ChangeStreamClosedException}. After any exception the stream is finished: later pulls
 * fail the same way and the consumer must still call {@link #close()}. A {@code reset-required}
 * {@code control} message is delivered in-band as a normal message; it is not an exception.
 */
@ConsumerType
public interface ChangeStream extends AutoCloseable {

    /**
     * Waits for and returns the next message.
     *
     * @return the next message, never {@code null}
     * @throws ChangeStreamClosedException if the stream has ended or was closed
     * @throws ChangeSourceException if the upstream failed (see the class description for subtypes)
     * @throws InterruptedException if the consumer thread was interrupted while waiting; the stream
     *     stays open
     */
    ChangeStreamMessage take() throws ChangeSourceException, InterruptedException;

    /**
     * Waits up to {@code timeout} for the next message.
     *
     * @param timeout the maximum time to wait; zero or negative means do not wait
     * @return the next message, or {@code null} if none arrived in time
     * @throws ChangeStreamClosedException if the stream has ended or was closed
     * @throws ChangeSourceException if the upstream failed
     * @throws InterruptedException if the consumer thread was interrupted while waiting
     */
    ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException, InterruptedException;

    /**
     * Acknowledges a durably stored position (see "Which watermarks are acked" above). Must not
     * block on I/O and must not throw. Acks that arrive after {@link #close()} are ignored, which
     * is safe because a restarted stream resumes from the change log's last stored watermark.
     *
     * @param ack the acknowledgement, {@code ["status", body, {watermark}]}
     */
    void ack(ChangeSourceUpstream ack);

    /**
     * Cancels the stream and tears down its upstream connection and any producers behind it. A
     * consumer blocked in {@link #take()} or {@link #poll(Duration)} is woken with
     * {@link ChangeStreamClosedException}. Idempotent, thread-safe, never throws.
     */
    @Override
    void close();
}

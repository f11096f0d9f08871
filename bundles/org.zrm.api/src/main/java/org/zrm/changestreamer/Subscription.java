package org.zrm.changestreamer;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One subscriber's outgoing message stream, returned by
 * {@link ChangeStreamer#subscribe(SubscriberContext)}.
 *
 * <p>Messages are pre-serialised {@code Downstream} JSON texts ({@link SubscriptionMessage#json()}),
 * computed once and shared by all subscribers and the change log, so that catch-up and live frames
 * are byte-identical; transports send them verbatim, wrapped as {@code {"id":n,"msg":<json>}}.
 *
 * <p><b>Threading and flow control.</b> One transport thread pulls with {@link #take()}, or a
 * transport that shares a few sender threads among its connections pulls with {@link #poll()}
 * when {@link #onReady(Runnable)} tells it to look, and learns of the end from
 * {@link #isFinished()}; either way one thread pulls at a time. Pulling
 * does not acknowledge anything: the transport may send many messages without waiting (pipelining)
 * and calls {@link SubscriptionMessage#consumed()} for each one when the client acknowledges its
 * frame ({@code {"ack":n}}), or when an in-process consumer has applied it (or reports a run of
 * them in one call, {@link #consumed(SubscriptionMessage[], int, int)}). Those acknowledgements
 * drive the streamer's flow control, catch-up pacing and purge gating, so a transport must not
 * acknowledge early. The streamer appends to the subscription without blocking, so the backlog of
 * taken-but-unconsumed messages is bounded by the streamer's flow control, not by this interface.
 *
 * <p><b>End.</b> {@link #take()} returns {@code null} once the streamer has ended the subscription
 * and every message before the end has been taken; the transport then closes the connection
 * normally. {@link #close()} is how the transport reports that the connection went away.
 */
@ProviderType
public interface Subscription extends AutoCloseable {

    /**
     * Waits for the next message.
     *
     * @return the next message, or {@code null} if the subscription has ended
     * @throws InterruptedException if the calling thread was interrupted; the subscription stays
     *     open
     */
    SubscriptionMessage take() throws InterruptedException;

    /**
     * Returns the next message if one is ready, without waiting; lets a transport send everything
     * that is ready in one write. {@link #take()} remains the way to wait and to learn that the
     * subscription has ended.
     *
     * @return the next message, or {@code null} if none is ready now (also once the subscription
     *     has ended); the default implementation always returns {@code null}
     * @since 1.1
     */
    default SubscriptionMessage poll() {
        return null;
    }

    /**
     * {@link #poll()} of up to {@code into.length} messages at once, in order: a transport that
     * sends many small messages pulls them in batches instead of one call (and, in the streamer,
     * one lock shared with the thread appending) per message.
     *
     * @param into where to put the messages, from index 0; the rest of the array is not touched
     * @return how many messages were put, 0 if none is ready now (also once the subscription has
     *     ended)
     * @since 2.3
     */
    default int poll(SubscriptionMessage[] into) {
        int n = 0;
        SubscriptionMessage m;
        while (n < into.length && (m = poll()) != null) {
            into[n++] = m;
        }
        return n;
    }

    /**
     * Reports {@code messages[from..from+n)} consumed, in that order, as {@code n} calls of
     * {@link SubscriptionMessage#consumed()} would: a transport whose client acknowledges a run of
     * frames at once reports the run in one call. In the streamer that is one lock of the
     * subscription per run rather than one per message, a lock its appending and sending threads
     * also take. The same rules hold: in the order taken, idempotent, non-blocking, ignored once
     * the subscription is closed, and a message that skips an unconsumed one fails the
     * subscription.
     *
     * @param messages messages taken from this subscription
     * @param from index of the first
     * @param n how many
     * @since 2.4
     */
    default void consumed(SubscriptionMessage[] messages, int from, int n) {
        for (int i = from; i < from + n; i++) {
            messages[i].consumed();
        }
    }

    /**
     * {@link #poll(SubscriptionMessage[])} for a transport that acknowledges by count: the messages
     * may be the streamer's own objects, shared by every subscriber that is sent the same change,
     * so that a fan-out keeps no object per message and subscriber. The transport reads them
     * ({@link SubscriptionMessage#json()}, {@link SubscriptionMessage#sharedUtf8()}) and reports
     * them consumed with {@link #consumedNext(int)} only: their own
     * {@link SubscriptionMessage#consumed()} cannot tell which subscriber consumed them, and
     * throws {@link UnsupportedOperationException} for a shared message.
     *
     * @param into where to put the messages, from index 0; the rest of the array is not touched
     * @return how many messages were put, 0 if none is ready now (also once the subscription has
     *     ended)
     * @since 2.5
     */
    int pollShared(SubscriptionMessage[] into);

    /**
     * Reports the oldest {@code n} messages taken and not yet consumed as consumed, in the order
     * they were taken: what a transport whose client acknowledges frames in order knows without
     * keeping the messages. The same rules as {@link SubscriptionMessage#consumed()} hold
     * otherwise: non-blocking, ignored once the subscription is closed. Acknowledging more
     * messages than were taken and not yet consumed is a protocol violation: the subscription
     * fails (the client reconnects), after the messages that were taken are settled.
     *
     * @param n how many, at least 0
     * @throws IllegalArgumentException if {@code n} is negative
     * @since 2.5
     */
    void consumedNext(int n);

    /**
     * Whether {@link #poll()} would return a message now, or the subscription is
     * {@linkplain #isFinished() finished}. A non-blocking transport asks after it stopped pulling,
     * so that a message appended meanwhile (whose {@link #onReady} call it may have missed while
     * still pulling) is not left behind.
     *
     * @since 2.2
     */
    boolean isReady();

    /**
     * Whether the subscription has ended and every message before the end has been taken, so
     * that {@link #take()} would return {@code null} at once: the non-blocking form of that
     * {@code null}. Like that {@code null}, it may end the subscription with the failure it was
     * ended with after its last message ({@link #failure()} then tells it).
     *
     * @since 2.2
     */
    boolean isFinished();

    /**
     * Sets the callback that tells a non-blocking transport to pull again. It runs after a
     * message was appended to an empty queue, when the subscription ends or is closed, and once
     * at once if a message is already waiting when it is set. It runs on the thread that appended
     * or ended (the streamer's), so it must only hand off (schedule a pull) and never block. One
     * callback per subscription; a later call replaces it.
     *
     * @param listener the callback
     * @since 2.2
     */
    void onReady(Runnable listener);

    /**
     * Tells why the streamer ended the subscription, for logging: present if it ended because of a
     * failure (change-log error, shutdown), empty while open, after a normal end, or after the
     * subscriber closed it. Subscriptions ended by a failure carry no error frame; clients
     * reconnect and resume from their watermark.
     *
     * @return the failure, if any
     */
    Optional<Throwable> failure();

    /**
     * Unsubscribes: removes the subscriber from the streamer, resolves every unconsumed message as
     * not consumed (so flow control does not wait for it), and wakes a thread blocked in
     * {@link #take()}, which returns {@code null}. Idempotent, thread-safe, never throws.
     */
    @Override
    void close();
}

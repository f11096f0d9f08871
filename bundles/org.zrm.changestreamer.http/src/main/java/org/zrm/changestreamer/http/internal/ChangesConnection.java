package org.zrm.changestreamer.http.internal;

import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/**
 * A {@code /replication/v{N}/changes} connection (upstream {@code #subscribe} plus
 * {@code streamOutStringified}, pipelined): subscribes, ends the task's snapshot reservation if
 * this is its initial subscription, and sends the subscription's messages as frames; the client's
 * acks report them consumed, those of one read in one call, by count
 * ({@link Subscription#consumedNext(int)}): the messages are the streamer's shared ones
 * ({@link Subscription#pollShared}), and nothing per message and subscriber is kept.
 *
 * <p><b>Sending.</b> No thread of its own: the endpoint's few sender threads serve every
 * connection ({@link ConnectionResources#senders()}). The subscription's ready signal, or room
 * freed in a send window, schedules a <em>drain</em> of this connection, at most one at a time
 * (the {@code scheduled} flag); a drain sends what is ready, flushing after the last frame of the
 * burst, and returns when nothing is ready or a window is full. A full window is how one slow
 * client is kept from slowing the others: its drain parks the message it could not send and frees
 * the thread, and the client's next ack (or the wire's next completed write) schedules it again. So
 * the per-connection bounds ({@code send.maxUnackedChars}, {@code send.maxQueuedChars}), the
 * subscriber's byte bound and the streamer's consensus flow control apply exactly as with a
 * thread per connection, and a stalled client holds no sender thread.
 *
 * <p>End of the stream: when the streamer ends the subscription the connection is closed normally
 * (1000) after the frames already sent, or with 1011 and the failure when it ended with one
 * (clients reconnect on any close). When the client goes away first the subscription is closed,
 * which resolves its unacknowledged messages as not consumed.
 */
final class ChangesConnection extends WsConnection {

    private static final Logger LOG = LoggerFactory.getLogger(ChangesConnection.class);
    /**
     * Characters one drain sends before it yields its thread and queues itself again behind the
     * other connections, so that a connection with a deep backlog (a subscriber catching up, or
     * one that fell behind) takes turns instead of holding a sender thread until it is empty.
     * Without it, in the fan-out benchmark (50 clients, 2 threads) some subscribers fell 64 MB
     * behind and were disconnected by the slow-subscriber bound. 256 Ki characters: a few hundred
     * frames of a bulk load, so a turn still batches many frames per write, and with 50
     * connections on 2 threads a connection waits for about 6 MB of others' writes at most.
     */
    static final long DRAIN_BUDGET_CHARS = 256 << 10;
    /** Messages pulled from the subscription at once, and sent at once; a few kilobytes of small frames. */
    static final int BATCH = SEND_BATCH;

    private final SubscriberContext context;
    private final String description;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** {@link #schedule}, made once rather than per frame offered. */
    private final Runnable reschedule = this::schedule;
    private volatile Subscription subscription;
    /**
     * Messages pulled from the subscription and not yet sent: {@code [batchNext, batchEnd)}. Pulled
     * a batch at a time, so that the sender takes the subscription's lock (which the streamer's
     * thread appending to it and the ack reader also take) once per batch rather than twice per
     * message. Drains only; they run one at a time, and the {@code scheduled} flag orders them.
     */
    private final SubscriptionMessage[] batch = new SubscriptionMessage[BATCH];
    private int batchNext;
    private int batchEnd;
    /**
     * The next message of the batch when a drain returned with some left (a full window, or its
     * turn spent), else {@code null}: what {@link #hasWork} asks the windows about.
     */
    private volatile SubscriptionMessage held;

    ChangesConnection(ConnectionResources resources, ChangeStreamer streamer, SubscriberContext context) {
        super(resources, streamer);
        this.context = context;
        this.description = "changes[id=" + context.id() + ", task=" + context.taskID() + ", mode="
                + context.mode().wireName() + ", v" + context.protocolVersion() + ", watermark="
                + context.watermark() + "]";
    }

    @Override
    protected void opened() {
        Subscription sub = streamer().subscribe(context);
        subscription = sub;
        if (context.initial() && context.taskID() != null) {
            // The streamer now knows the subscriber's watermark, so cleanup can safely resume.
            streamer().endReservation(context.taskID());
        }
        if (hasEnded()) {
            // Closed while subscribing (client gone, or the streamer left): nobody will send.
            sub.close();
            return;
        }
        LOG.info("{}: subscribed (replicaVersion={}, initial={})", description, context.replicaVersion(),
                context.initial());
        sub.onReady(reschedule);
    }

    /** The client acknowledged the frames of the oldest {@code n} messages sent: reported as one run. */
    @Override
    void settled(int n) {
        subscription.consumedNext(n);
    }

    /**
     * Runs a drain on a sender thread unless one is scheduled or running. Called by the
     * subscription's ready signal, a window's release and a drain's last check; never blocks.
     */
    private void schedule() {
        if (hasEnded() || !scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            resources.senders().execute(this::drain);
        } catch (RejectedExecutionException stopped) {
            scheduled.set(false);
            close(WebSocketFrames.SHUTDOWN, "Error: change streamer endpoint stopped");
        }
    }

    private void drain() {
        try {
            send();
        } catch (RuntimeException e) {
            LOG.error("{}: sender failed, closing connection: {}", description, e.toString(), e);
            close(INTERNAL_ERROR, "Error: " + e.getMessage());
        } finally {
            reportSent(); // before the flag: the next drain may run on another thread at once
            scheduled.set(false);
        }
        // A ready signal or a release that came while this drain ran found it scheduled and did
        // nothing: look once more, now that a new signal would schedule a drain itself.
        if (!hasEnded() && hasWork()) {
            schedule();
        }
    }

    private boolean hasWork() {
        SubscriptionMessage parked = held;
        return parked != null ? windowsOpenFor(parked, reschedule) : subscription.isReady();
    }

    /**
     * Sends what is ready; returns when nothing is, a window is full, the stream ended, or this
     * turn's {@link #DRAIN_BUDGET_CHARS} are spent (then {@link #drain} queues it again).
     */
    private void send() {
        Subscription sub = subscription;
        long budget = DRAIN_BUDGET_CHARS;
        while (true) {
            if (batchNext == batchEnd) {
                batchNext = 0;
                batchEnd = sub.pollShared(batch);
                if (batchEnd == 0) {
                    break;
                }
            }
            // This turn's share of the batch: up to the frame that spends the budget.
            int end = batchNext;
            long spent = 0;
            while (end < batchEnd && spent < budget) {
                spent += batch[end++].jsonLength();
            }
            // Everything already queued goes out as one burst (up to the budget): flush only
            // after its last frame.
            boolean last = spent >= budget || (end == batchEnd && !sub.isReady());
            int sent = trySendFrames(batch, batchNext, end, last, reschedule);
            for (int i = batchNext; i < batchNext + sent; i++) {
                batch[i] = null;
            }
            batchNext += sent;
            if (batchNext < end) {
                if (hasEnded()) {
                    return; // ended() closed the subscription
                }
                held = batch[batchNext]; // a window is full; its release schedules the next drain
                return;
            }
            budget -= spent; // all of [.., end) went out
            if (budget <= 0) {
                // This turn is over; the frames are flushed (last), drain() queues the next.
                held = batchNext < batchEnd ? batch[batchNext] : null;
                return;
            }
        }
        held = null;
        flushHeldFrames();
        if (hasEnded() || !sub.isFinished()) {
            return;
        }
        Optional<Throwable> failure = sub.failure();
        if (failure.isPresent()) {
            LOG.warn("{}: subscription failed, closing connection: {}", description, failure.get().toString());
            close(INTERNAL_ERROR, "Error: " + failure.get().getMessage());
        } else {
            LOG.info("{}: subscription ended, closing connection", description);
            close(WebSocketFrames.NORMAL, "");
        }
    }

    @Override
    protected void ended() {
        Subscription sub = subscription;
        if (sub != null) {
            sub.close();
        }
    }

    @Override
    protected String describe() {
        return description;
    }
}

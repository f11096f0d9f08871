package org.zrm.changestreamer.http.internal;

import java.util.Optional;
import org.eclipse.jetty.websocket.api.StatusCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/**
 * A {@code /replication/v{N}/changes} connection (upstream {@code #subscribe} plus
 * {@code streamOutStringified}, pipelined): subscribes, ends the task's snapshot reservation if
 * this is its initial subscription, and runs one sender thread that takes messages from the
 * subscription and sends them as frames; each client ack calls {@link SubscriptionMessage#consumed()}.
 *
 * <p>End of the stream: when the streamer ends the subscription the connection is closed normally
 * (1000) after the frames already sent, or with 1011 and the failure when it ended with one
 * (clients reconnect on any close). When the client goes away first the subscription is closed,
 * which resolves its unacknowledged messages as not consumed.
 */
public final class ChangesConnection extends WsConnection {

    private static final Logger LOG = LoggerFactory.getLogger(ChangesConnection.class);

    private final SubscriberContext context;
    private final String description;
    private volatile Subscription subscription;

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
        Thread sender = new Thread(this::sendLoop, "zrm-changestreamer-http-send-" + context.id());
        sender.setDaemon(true);
        sender.start();
    }

    private void sendLoop() {
        Subscription sub = subscription;
        try {
            SubscriptionMessage message = sub.take();
            while (message != null) {
                // Everything already queued goes out as one burst: flush only after its last frame.
                SubscriptionMessage next = sub.poll();
                if (!sendFrame(message.json(), message.utf8(), message::consumed, next == null)) {
                    return; // connection ended; ended() closed the subscription
                }
                message = next != null ? next : sub.take();
            }
            if (hasEnded()) {
                return;
            }
            Optional<Throwable> failure = sub.failure();
            if (failure.isPresent()) {
                LOG.warn("{}: subscription failed, closing connection: {}", description, failure.get().toString());
                close(INTERNAL_ERROR, "Error: " + failure.get().getMessage());
            } else {
                LOG.info("{}: subscription ended, closing connection", description);
                close(StatusCode.NORMAL, "");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.warn("{}: sender interrupted, closing connection", description);
            close(StatusCode.SHUTDOWN, "Error: sender interrupted");
        } catch (RuntimeException e) {
            LOG.error("{}: sender failed, closing connection: {}", description, e.toString(), e);
            close(INTERNAL_ERROR, "Error: " + e.getMessage());
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

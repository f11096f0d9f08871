package org.zrm.changesource.endpoint.internal;

import java.util.ArrayDeque;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;

/**
 * Turns one change-streamer {@link Subscription} into custom change-source frames, and the
 * client's {@code status} frames into the subscription's consumption acknowledgements.
 *
 * <p><b>Frames.</b> {@code begin}, {@code data}, {@code commit} and {@code rollback} have the same
 * JSON in both protocols, so their text (already BigIntJSON, encoded once by the streamer) is sent
 * verbatim. The streamer's own {@code status} messages (lag reports) have no counterpart a custom
 * client needs and are not sent. An {@code error} (wrong replica version, purged watermark) becomes
 * {@code ["control",{"tag":"reset-required",...}]} followed by a normal close.
 *
 * <p><b>Acks.</b> A custom client acknowledges only commits, with {@code ["status",body,{"watermark":W}]}
 * once the transaction is durably stored on its side. The streamer requires every message to be
 * consumed in order, and a consumed commit advances the subscriber's acknowledged watermark (which
 * gates purging). So a message is consumed once it has been written to the socket and, if it is a
 * commit, once the client acknowledged a watermark at or after it. Data of the next transaction
 * therefore waits behind an unacknowledged commit; acks are handled on the socket's reader thread
 * and never block.
 */
final class StreamForwarder {

    private static final Logger LOG = LoggerFactory.getLogger(StreamForwarder.class);

    private static final class Pending {
        final SubscriptionMessage message;
        final String commitWatermark; // null unless a commit
        boolean written;              // guarded by the forwarder

        Pending(SubscriptionMessage message, String commitWatermark) {
            this.message = message;
            this.commitWatermark = commitWatermark;
        }
    }

    private final String description;
    private final ProtocolCodec codec;
    private final Outbound out;
    private final ByteWindow window;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by this
    private volatile String sent;  // newest commit watermark sent
    private volatile String acked; // newest watermark the client acknowledged
    private volatile boolean ended;

    /**
     * @param description for log lines
     * @param from the watermark the client resumes from (counts as sent and acknowledged)
     */
    StreamForwarder(String description, ProtocolCodec codec, Outbound out, long maxQueuedChars, String from) {
        this.description = description;
        this.codec = codec;
        this.out = out;
        this.window = new ByteWindow(maxQueuedChars);
        this.sent = from;
        this.acked = from;
    }

    String sentWatermark() {
        return sent;
    }

    String ackedWatermark() {
        return acked;
    }

    long queuedChars() {
        return window.used();
    }

    /**
     * Sends the subscription's messages until it ends or the connection does. Runs on the
     * connection's sender thread.
     *
     * @return how the stream ended, or {@code null} if the connection ended first (already closed)
     */
    Rejection pump(Subscription sub) throws InterruptedException {
        for (SubscriptionMessage m = sub.take(); m != null; m = sub.take()) {
            if (ended) {
                return null;
            }
            String json = m.json();
            if (json.startsWith("[\"status\"")) {
                enqueue(m, null).written = true;
                advance();
            } else if (json.startsWith("[\"error\"")) {
                return errorToRejection(json);
            } else {
                String commit = json.startsWith("[\"commit\"") ? commitWatermark(json) : null;
                if (!window.acquire(json.length())) {
                    return null;
                }
                Pending p = enqueue(m, commit);
                if (commit != null) {
                    sent = commit; // before the frame leaves: its ack may arrive at once
                }
                out.send(json, () -> {
                    window.release(json.length());
                    synchronized (this) {
                        p.written = true;
                    }
                    advance();
                });
            }
        }
        if (ended) {
            return null;
        }
        Optional<Throwable> failure = sub.failure();
        return new Rejection(Reason.UNAVAILABLE, failure.map(f -> "change stream ended: " + f.getMessage())
                .orElse("change stream ended; reconnect to resume"));
    }

    /**
     * Sends a frame that is not from the subscription (the initial snapshot), within the same
     * byte window.
     *
     * @param commitWatermark the watermark if the frame is a commit, else {@code null}
     * @return {@code false} if the connection ended
     */
    boolean sendDirect(String json, String commitWatermark) throws InterruptedException {
        if (ended || !window.acquire(json.length())) {
            return false;
        }
        if (commitWatermark != null) {
            sent = commitWatermark;
        }
        out.send(json, () -> window.release(json.length()));
        return true;
    }

    private synchronized Pending enqueue(SubscriptionMessage m, String commit) {
        Pending p = new Pending(m, commit);
        pending.addLast(p);
        return p;
    }

    /**
     * Handles one upstream text frame: must be {@code ["status", body, {"watermark": W}]}.
     *
     * @throws Rejection with {@link Reason#PROTOCOL} for anything else, or an ack of a watermark
     *     that was never sent
     */
    void onUpstream(String text) throws Rejection {
        ChangeSourceUpstream ack;
        try {
            ack = codec.decodeChangeSourceUpstream(text);
        } catch (ProtocolException e) {
            throw new Rejection(Reason.PROTOCOL, "invalid upstream message: " + e.getMessage());
        }
        String w = ack.watermark();
        String s = sent;
        if (w.compareTo(s) > 0) {
            throw new Rejection(Reason.PROTOCOL, "ack of watermark " + w + " beyond the last sent commit " + s);
        }
        synchronized (this) {
            if (w.compareTo(acked) > 0) {
                acked = w;
            }
        }
        advance();
    }

    /** Consumes, in order, every message that is written and, for a commit, acknowledged. */
    private void advance() {
        synchronized (this) {
            String a = acked;
            for (Pending head = pending.peekFirst(); head != null && head.written
                    && (head.commitWatermark == null || head.commitWatermark.compareTo(a) <= 0);
                    head = pending.peekFirst()) {
                pending.pollFirst();
                head.message.consumed(); // non-blocking by contract
            }
        }
    }

    /** The connection ended: stop sending; the owner closes the subscription. */
    void end() {
        ended = true;
        window.close();
    }

    private String commitWatermark(String json) {
        try {
            Downstream d = codec.decodeDownstream(json);
            if (d instanceof Downstream.ChangeMessage c && c.data() instanceof CommitMessage commit) {
                return commit.watermark();
            }
        } catch (ProtocolException e) {
            // The streamer produced it with the same codec; failing here is a bug worth surfacing.
            throw new IllegalStateException("undecodable commit from the change streamer: " + e.getMessage(), e);
        }
        throw new IllegalStateException("not a commit: " + json.substring(0, Math.min(40, json.length())));
    }

    private Rejection errorToRejection(String json) {
        try {
            Downstream d = codec.decodeDownstream(json);
            if (d instanceof Downstream.ErrorMessage e) {
                ErrorType type = e.error().type();
                if (type == ErrorType.WRONG_REPLICA_VERSION || type == ErrorType.WATERMARK_TOO_OLD) {
                    return new Rejection(Reason.RESET_REQUIRED, e.error().message());
                }
                return new Rejection(Reason.UNAVAILABLE, e.error().message());
            }
        } catch (ProtocolException e) {
            LOG.warn("{}: undecodable error from the change streamer: {}", description, e.getMessage());
        }
        return new Rejection(Reason.UNAVAILABLE, "change streamer error");
    }
}

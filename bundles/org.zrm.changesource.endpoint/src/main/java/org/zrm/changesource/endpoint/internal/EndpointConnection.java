package org.zrm.changesource.endpoint.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.StatusCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.ResetRequired;

/**
 * One {@code /changes/v0/stream} WebSocket. The request is validated when the socket opens; a
 * valid one gets a sender thread that (for a fresh client) streams the initial snapshot, then
 * subscribes to the change streamer and forwards its messages ({@link StreamForwarder}).
 *
 * <p>Every way the endpoint ends a connection goes through {@link #finish}: one log line, one
 * count by reason, a close code and a reason of at most 123 bytes. A reset-required answer is
 * sent as a {@code control} frame before a normal close, which is what zero-cache's client reacts
 * to; the close alone would only make it reconnect.
 *
 * <p>Public only because Jetty binds the listener methods through public method handles.
 */
public final class EndpointConnection implements Session.Listener.AutoDemanding, EndpointStats.ConnectionView {

    private static final Logger LOG = LoggerFactory.getLogger(EndpointConnection.class);
    private static final int MAX_REASON_BYTES = 123;

    private final Endpoint endpoint;
    private final long id;
    private final Map<String, List<String>> query;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile String description;
    private volatile Session session;
    private volatile StreamForwarder forwarder;
    private volatile Subscription subscription;
    private volatile Thread sender;
    private volatile ScheduledFuture<?> pings;
    private volatile boolean heard = true;

    EndpointConnection(Endpoint endpoint, long id, Map<String, List<String>> query) {
        this.endpoint = endpoint;
        this.id = id;
        this.query = query;
        this.description = "custom-endpoint[" + id + "]";
    }

    @Override
    public void onWebSocketOpen(Session s) {
        this.session = s;
        if (!endpoint.register(this)) {
            closeSocket(StatusCode.SHUTDOWN, "endpoint stopped");
            return;
        }
        EndpointRequest request;
        try {
            request = EndpointRequest.parse(query, endpoint.served());
        } catch (Rejection r) {
            finish(r);
            return;
        }
        description = "custom-endpoint[" + id + ", " + request.appID() + "_" + request.shardNum()
                + (request.resuming() ? ", from " + request.lastWatermark() + ", replicaVersion " + request.replicaVersion()
                : ", initial sync") + "]";
        forwarder = new StreamForwarder(description, endpoint.codec(), new JettyOutbound(),
                endpoint.settings().maxQueuedChars(), request.resuming() ? request.lastWatermark() : "");
        endpoint.stats().opened(id, this);
        long interval = endpoint.settings().pingInterval().toMillis();
        try {
            pings = endpoint.scheduler().scheduleAtFixedRate(this::ping, interval, interval, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            finish(new Rejection(Reason.UNAVAILABLE, "endpoint stopped"));
            return;
        }
        // The change log is read and the snapshot streamed off Jetty's thread.
        Thread t = new Thread(() -> serve(request), "zrm-custom-endpoint-" + id);
        t.setDaemon(true);
        sender = t;
        t.start();
        LOG.info("{}: accepted", description);
    }

    private void serve(EndpointRequest request) {
        try {
            finish(stream(request));
        } catch (InterruptedException e) {
            finish(new Rejection(Reason.UNAVAILABLE, "endpoint stopped"));
        } catch (RuntimeException e) {
            LOG.error("{}: failed: {}", description, e.toString(), e);
            finish(new Rejection(Reason.UNAVAILABLE, "internal error: " + e.getMessage()));
        }
    }

    /** @return how the stream ended, or {@code null} if the connection already ended */
    private Rejection stream(EndpointRequest request) throws InterruptedException {
        ChangeStreamer streamer = endpoint.streamer();
        if (streamer == null) {
            return new Rejection(Reason.UNAVAILABLE, "no change streamer is running");
        }
        String replicaVersion = request.replicaVersion();
        String from = request.lastWatermark();
        if (!request.resuming()) {
            InitialSnapshot snapshot = endpoint.snapshot();
            if (snapshot == null) {
                return new Rejection(Reason.UNAVAILABLE, "this endpoint has no replica to serve an initial sync from");
            }
            String w;
            try {
                w = snapshot.stream(forwarder::sendDirect);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                return new Rejection(Reason.UNAVAILABLE, "initial snapshot failed: " + e.getMessage());
            }
            if (w == null) {
                return null;
            }
            replicaVersion = w;
            from = w;
        }
        ChangeLogState state;
        try {
            state = streamer.getChangeLogState();
        } catch (ChangeLogException e) {
            return new Rejection(Reason.UNAVAILABLE, "change log unavailable: " + e.getMessage());
        }
        String reset = Lineage.check(new EndpointRequest(request.appID(), request.shardNum(), request.publications(),
                from, replicaVersion), state);
        if (reset != null) {
            return new Rejection(Reason.RESET_REQUIRED, reset);
        }
        Subscription sub = streamer.subscribe(new SubscriberContext(ChangeStreamer.PROTOCOL_VERSION,
                "custom-endpoint-" + id, null, ReplicatorMode.SERVING, state.replicaVersion(), from, false));
        subscription = sub;
        if (ended.get()) {
            sub.close();
            return null;
        }
        try {
            return forwarder.pump(sub);
        } finally {
            sub.close();
        }
    }

    @Override
    public void onWebSocketText(String text) {
        heard = true;
        StreamForwarder f = forwarder;
        if (f == null || ended.get()) {
            return;
        }
        endpoint.stats().ackReceived();
        try {
            f.onUpstream(text);
        } catch (Rejection r) {
            finish(r);
        }
    }

    @Override
    public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
        callback.succeed();
        finish(new Rejection(Reason.PROTOCOL, "binary frames are not part of the protocol"));
    }

    @Override
    public void onWebSocketPong(ByteBuffer payload) {
        heard = true;
    }

    @Override
    public void onWebSocketClose(int statusCode, String reason) {
        if (!ended.get()) {
            LOG.info("{}: closed by client ({} {})", description, statusCode, reason == null ? "" : reason);
        }
        end();
    }

    @Override
    public void onWebSocketError(Throwable cause) {
        if (ended.get()) {
            return;
        }
        if (cause instanceof org.eclipse.jetty.websocket.api.exceptions.MessageTooLargeException) {
            // Jetty has already closed with 1009 and the size in the reason.
            endpoint.stats().rejected(Reason.PROTOCOL);
            LOG.warn("{}: closed: upstream frame too large: {}", description, cause.getMessage());
        } else {
            LOG.info("{}: connection lost: {}", description, cause.toString());
        }
        end();
    }

    /** Ends the connection for {@code r}; no-op if it already ended or {@code r} is {@code null}. */
    private void finish(Rejection r) {
        if (r == null || ended.get()) {
            end();
            return;
        }
        endpoint.stats().rejected(r.reason());
        if (r.reason() == Reason.RESET_REQUIRED) {
            LOG.warn("{}: reset required: {}", description, r.getMessage());
            Session s = session;
            if (s != null && s.isOpen()) {
                s.sendText(endpoint.codec().encode(new ControlMessage(new ResetRequired(r.getMessage(), null,
                        Passthrough.NONE))), Callback.NOOP);
            }
        } else if (r.reason() == Reason.UNAVAILABLE) {
            LOG.warn("{}: closing: {}", description, r.getMessage());
        } else {
            LOG.warn("{}: refused ({}): {}", description, r.reason().label, r.getMessage());
        }
        closeSocket(r.reason().closeCode, r.getMessage());
    }

    /** The endpoint stops: close with 1001 so that the client reconnects later. */
    void shutdown() {
        closeSocket(StatusCode.SHUTDOWN, "endpoint stopped");
    }

    private void closeSocket(int code, String reason) {
        boolean first = end();
        Session s = session;
        if (first && s != null && s.isOpen()) {
            s.close(code, elide(reason), Callback.NOOP);
        }
    }

    /** @return whether this call ended the connection */
    private boolean end() {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        ScheduledFuture<?> p = pings;
        if (p != null) {
            p.cancel(false);
        }
        StreamForwarder f = forwarder;
        if (f != null) {
            f.end();
        }
        Subscription sub = subscription;
        if (sub != null) {
            sub.close(); // wakes the sender blocked in take()
        }
        endpoint.stats().closed(id);
        endpoint.unregister(this);
        return true;
    }

    private void ping() {
        if (ended.get()) {
            return;
        }
        if (!heard) {
            LOG.warn("{}: no pong or frame for {} ms, disconnecting", description,
                    endpoint.settings().pingInterval().toMillis());
            end();
            Session s = session;
            if (s != null) {
                s.disconnect();
            }
            return;
        }
        heard = false;
        Session s = session;
        if (s != null) {
            s.sendPing(ByteBuffer.allocate(0), Callback.NOOP);
        }
    }

    /** At most 123 bytes of UTF-8, the WebSocket limit for a close reason. */
    static String elide(String reason) {
        String r = reason == null ? "" : reason;
        if (r.getBytes(StandardCharsets.UTF_8).length <= MAX_REASON_BYTES) {
            return r;
        }
        while ((r + "...").getBytes(StandardCharsets.UTF_8).length > MAX_REASON_BYTES) {
            r = r.substring(0, r.length() - 1);
        }
        return r + "...";
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public String sentWatermark() {
        StreamForwarder f = forwarder;
        return f == null ? null : f.sentWatermark();
    }

    @Override
    public String ackedWatermark() {
        StreamForwarder f = forwarder;
        return f == null ? null : f.ackedWatermark();
    }

    @Override
    public long queuedChars() {
        StreamForwarder f = forwarder;
        return f == null ? 0 : f.queuedChars();
    }

    private final class JettyOutbound implements Outbound {
        @Override
        public void send(String text, Runnable written) {
            Session s = session;
            if (s == null) {
                written.run();
                return;
            }
            endpoint.stats().frameSent();
            s.sendText(text, Callback.from(written, failure -> {
                written.run();
                if (!ended.get()) {
                    LOG.info("{}: send failed: {}", description, failure.toString());
                }
                end();
                s.disconnect();
            }));
        }

        @Override
        public void close(int code, String reason) {
            closeSocket(code, reason);
        }
    }
}

package org.zrm.changestreamer.http.internal;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Routes upgraded requests to connections and tracks them (upstream
 * {@code ChangeStreamerHttpServer} minus the HTTP server itself).
 *
 * <p><b>Requests.</b> A path must end in {@code /replication/v<N>/changes} or
 * {@code /replication/v<N>/snapshot} with {@code 1 <= N <= 6}. Invalid requests are upgraded and
 * then closed with code 1002 and upstream's reason text ({@code "Error: invalid querystring -
 * missing id"}, {@code "Error: Cannot service client at protocol v7. Supported protocols: [v1 ...
 * v6]"}, {@code "Error: invalid path: <path>"}, {@code "Error: Missing taskID in snapshot
 * request"}, or the {@link org.zrm.changestreamer.SnapshotUnavailableException} message).
 *
 * <p><b>Streamer swaps.</b> New connections use the most recently bound {@link ChangeStreamer}.
 * When a streamer is unbound, its connections are closed with 1001 (going away); clients
 * reconnect, to the new streamer if one is bound. Without any streamer, requests are closed with
 * 1013 (try again later).
 */
final class ReplicationEndpoint implements ConnectionResources, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationEndpoint.class);
    private static final String SNAPSHOT_SUFFIX = "/snapshot";

    private final Settings settings;
    private final HttpMetrics metrics;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final ScheduledThreadPoolExecutor scheduler;
    /**
     * The sender threads. The queue has no capacity of its own: each connection has at most one
     * drain queued or running, so it holds at most as many tasks as there are connections.
     */
    private final ThreadPoolExecutor senders;
    private final AtomicReference<ChangeStreamer> streamer = new AtomicReference<>();
    private final Set<WsConnection> connections = ConcurrentHashMap.newKeySet();

    ReplicationEndpoint(Settings settings, HttpMetrics metrics) {
        this.settings = settings;
        this.metrics = metrics;
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "zrm-changestreamer-http-ping");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        AtomicInteger senderIds = new AtomicInteger();
        this.senders = new ThreadPoolExecutor(settings.senderThreads(), settings.senderThreads(), 0,
                TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "zrm-changestreamer-http-send-" + senderIds.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * Creates the connection for an upgraded request. Never throws for a bad request: validation
     * failures become a connection that closes itself once open.
     *
     * @param path the raw request path, without the query
     * @param query the decoded query parameters
     */
    WsConnection connect(String path, Map<String, List<String>> query) {
        try {
            SubscriberContext.protocolVersionOf(path);
            ChangeStreamer current = streamer.get();
            if (path.endsWith(SNAPSHOT_SUFFIX)) {
                List<String> ids = query.get("taskID");
                String taskID = ids == null || ids.isEmpty() ? null : ids.get(0);
                if (taskID == null || taskID.isEmpty()) {
                    throw new IllegalArgumentException("Missing taskID in snapshot request");
                }
                return current == null ? unavailable(path) : new SnapshotConnection(this, current, taskID);
            }
            SubscriberContext context = SubscriberContext.parse(path, query);
            return current == null ? unavailable(path) : new ChangesConnection(this, current, context);
        } catch (IllegalArgumentException e) {
            LOG.warn("rejecting request {}: {}", path, e.getMessage());
            return new RejectedConnection(this, WsConnection.PROTOCOL_ERROR, "Error: " + e.getMessage(), path);
        }
    }

    private RejectedConnection unavailable(String path) {
        LOG.warn("rejecting request {}: no change streamer is running", path);
        return new RejectedConnection(this, WebSocketFrames.TRY_AGAIN_LATER, "Error: no change streamer is running", path);
    }

    /** Makes {@code next} the streamer for new connections. */
    void bind(ChangeStreamer next) {
        streamer.set(next);
    }

    /**
     * Forgets {@code departing} and closes its connections with 1001; connections of other
     * streamers stay open.
     */
    void unbind(ChangeStreamer departing) {
        streamer.compareAndSet(departing, null);
        int closed = 0;
        for (WsConnection c : connections) {
            if (c.streamer() == departing) {
                c.close(WebSocketFrames.SHUTDOWN, "Error: change streamer stopped");
                closed++;
            }
        }
        LOG.info("change streamer unbound, closed {} connection(s)", closed);
    }

    int openConnections() {
        return connections.size();
    }

    /** Closes every connection with 1001 and stops the ping scheduler and the sender threads. */
    @Override
    public void close() {
        streamer.set(null);
        for (WsConnection c : connections) {
            c.close(WebSocketFrames.SHUTDOWN, "Error: change streamer endpoint stopped");
        }
        scheduler.shutdownNow();
        senders.shutdownNow();
    }

    @Override
    public Settings settings() {
        return settings;
    }

    @Override
    public HttpMetrics metrics() {
        return metrics;
    }

    @Override
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    @Override
    public ProtocolCodec codec() {
        return codec;
    }

    @Override
    public Executor senders() {
        return senders;
    }

    @Override
    public void register(WsConnection connection) {
        if (connection instanceof RejectedConnection) {
            return;
        }
        connections.add(connection);
        metrics.opened(endpointOf(connection));
        if (streamer.get() != connection.streamer()) {
            // Its streamer was unbound after the request was routed: unbind() may have missed it.
            connection.close(WebSocketFrames.SHUTDOWN, "Error: change streamer stopped");
        }
    }

    @Override
    public void unregister(WsConnection connection) {
        if (connections.remove(connection)) {
            metrics.closed(endpointOf(connection));
        }
    }

    private static HttpMetrics.Endpoint endpointOf(WsConnection connection) {
        return connection instanceof SnapshotConnection ? HttpMetrics.Endpoint.SNAPSHOT : HttpMetrics.Endpoint.CHANGES;
    }
}

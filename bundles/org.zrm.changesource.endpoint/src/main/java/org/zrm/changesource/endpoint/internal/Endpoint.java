package org.zrm.changesource.endpoint.internal;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * What all connections of the endpoint share: the served shard, the change streamer (which may
 * come and go), the snapshot source, the ping scheduler and the statistics. Plain Java, so tests
 * run it on an embedded Jetty without OSGi.
 */
final class Endpoint {

    private final EndpointRequest.Served served;
    private final Settings settings;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final EndpointStats stats = new EndpointStats();
    private final ScheduledExecutorService scheduler;
    private final InitialSnapshot snapshot; // null: fresh clients are refused
    private final AtomicLong ids = new AtomicLong();
    private final Set<EndpointConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile ChangeStreamer streamer;
    private volatile boolean closed;

    Endpoint(EndpointRequest.Served served, Settings settings, ScheduledExecutorService scheduler,
             InitialSnapshot snapshot) {
        this.served = served;
        this.settings = settings;
        this.scheduler = scheduler;
        this.snapshot = snapshot;
    }

    /** Called at the upgrade, on a Jetty thread: cheap, no I/O. */
    EndpointConnection connect(Map<String, List<String>> query) {
        return new EndpointConnection(this, ids.incrementAndGet(), Map.copyOf(query));
    }

    void bind(ChangeStreamer s) {
        streamer = s;
    }

    /** The streamer left: its subscriptions end, so do the connections (clients reconnect). */
    void unbind(ChangeStreamer s) {
        if (streamer == s) {
            streamer = null;
        }
    }

    ChangeStreamer streamer() {
        return streamer;
    }

    EndpointRequest.Served served() {
        return served;
    }

    Settings settings() {
        return settings;
    }

    ProtocolCodec codec() {
        return codec;
    }

    EndpointStats stats() {
        return stats;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    InitialSnapshot snapshot() {
        return snapshot;
    }

    boolean register(EndpointConnection c) {
        connections.add(c);
        if (closed) {
            connections.remove(c);
            return false;
        }
        return true;
    }

    void unregister(EndpointConnection c) {
        connections.remove(c);
    }

    /** Stops: every connection is closed with 1001 (going away). */
    void close() {
        closed = true;
        for (EndpointConnection c : connections) {
            c.shutdown();
        }
    }
}

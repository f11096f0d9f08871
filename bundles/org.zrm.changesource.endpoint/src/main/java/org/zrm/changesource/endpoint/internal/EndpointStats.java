package org.zrm.changesource.endpoint.internal;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;
import org.zrm.status.MetricsSink;

/**
 * Counters and the open connections, for {@code /status} and {@code /metrics}. Lock-free reads;
 * the set of open connections is bounded by the sockets Jetty accepts.
 */
final class EndpointStats {

    /** What the operator sees of one open connection. */
    interface ConnectionView {
        String description();

        String sentWatermark();

        String ackedWatermark();

        long queuedChars();
    }

    private final Map<Long, ConnectionView> open = new ConcurrentHashMap<>();
    private final Map<Reason, LongAdder> rejects = new EnumMap<>(Reason.class);
    private final LongAdder accepted = new LongAdder();
    private final LongAdder framesSent = new LongAdder();
    private final LongAdder acksReceived = new LongAdder();

    EndpointStats() {
        for (Reason r : Reason.values()) {
            rejects.put(r, new LongAdder());
        }
    }

    void opened(long id, ConnectionView view) {
        accepted.increment();
        open.put(id, view);
    }

    void closed(long id) {
        open.remove(id);
    }

    void rejected(Reason reason) {
        rejects.get(reason).increment();
    }

    long rejects(Reason reason) {
        return rejects.get(reason).sum();
    }

    void frameSent() {
        framesSent.increment();
    }

    void ackReceived() {
        acksReceived.increment();
    }

    int openConnections() {
        return open.size();
    }

    Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("connections", open.size());
        m.put("accepted", accepted.sum());
        Map<String, Object> r = new LinkedHashMap<>();
        for (Reason reason : Reason.values()) {
            r.put(reason.label, rejects.get(reason).sum());
        }
        m.put("closedByReason", r);
        List<Object> list = new ArrayList<>();
        for (ConnectionView v : open.values()) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("connection", v.description());
            c.put("sentWatermark", v.sentWatermark());
            c.put("ackedWatermark", v.ackedWatermark());
            c.put("queuedChars", v.queuedChars());
            list.add(c);
        }
        m.put("open", list);
        return m;
    }

    void collect(MetricsSink sink) {
        sink.gauge("zrm_custom_endpoint_connections", "Open custom change-source protocol connections.", Map.of(),
                open.size());
        sink.counter("zrm_custom_endpoint_accepted_total", "Custom-protocol connections that passed validation.",
                Map.of(), accepted.sum());
        for (Reason reason : Reason.values()) {
            sink.counter("zrm_custom_endpoint_closed_total",
                    "Custom-protocol connections refused or closed by the endpoint, by reason.",
                    Map.of("reason", reason.label), rejects.get(reason).sum());
        }
        sink.counter("zrm_custom_endpoint_frames_sent_total", "Frames sent to custom-protocol clients.", Map.of(),
                framesSent.sum());
        sink.counter("zrm_custom_endpoint_acks_received_total", "Status acks received from custom-protocol clients.",
                Map.of(), acksReceived.sum());
    }
}

package org.zrm.changestreamer.http.internal;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;

/** The endpoints' own figures, reported on {@code /metrics}. Thread-safe, lock-free. */
final class HttpMetrics implements MetricsContributor {

    private final AtomicLong openChanges = new AtomicLong();
    private final AtomicLong openSnapshots = new AtomicLong();
    private final LongAdder framesSent = new LongAdder();
    private final LongAdder charsSent = new LongAdder();
    private final LongAdder acksReceived = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();
    private final LongAdder rejectedRequests = new LongAdder();
    private final LongAdder livenessTimeouts = new LongAdder();

    void opened(Endpoint endpoint) {
        counter(endpoint).incrementAndGet();
    }

    void closed(Endpoint endpoint) {
        counter(endpoint).decrementAndGet();
    }

    void framesSent(long frames, long chars) {
        framesSent.add(frames);
        charsSent.add(chars);
    }

    void acksReceived(long frames) {
        acksReceived.add(frames);
    }

    void protocolError() {
        protocolErrors.increment();
    }

    void rejected() {
        rejectedRequests.increment();
    }

    void livenessTimeout() {
        livenessTimeouts.increment();
    }

    long openConnections(Endpoint endpoint) {
        return counter(endpoint).get();
    }

    long framesSent() {
        return framesSent.sum();
    }

    long acksReceived() {
        return acksReceived.sum();
    }

    long livenessTimeouts() {
        return livenessTimeouts.sum();
    }

    long protocolErrors() {
        return protocolErrors.sum();
    }

    private AtomicLong counter(Endpoint endpoint) {
        return endpoint == Endpoint.CHANGES ? openChanges : openSnapshots;
    }

    @Override
    public void collect(MetricsSink sink) {
        String open = "zrm_changestreamer_http_connections";
        String openHelp = "Open WebSocket connections of the change-streamer endpoints.";
        sink.gauge(open, openHelp, Map.of("endpoint", "changes"), openChanges.get());
        sink.gauge(open, openHelp, Map.of("endpoint", "snapshot"), openSnapshots.get());
        sink.counter("zrm_changestreamer_http_frames_sent_total", "Frames sent to subscribers.", Map.of(),
                framesSent.sum());
        sink.counter("zrm_changestreamer_http_sent_chars_total",
                "Characters of frames sent to subscribers.", Map.of(), charsSent.sum());
        sink.counter("zrm_changestreamer_http_acked_frames_total", "Frames acknowledged by subscribers.",
                Map.of(), acksReceived.sum());
        sink.counter("zrm_changestreamer_http_protocol_errors_total",
                "Connections closed because the client broke the protocol (bad or unexpected ack, binary frame).",
                Map.of(), protocolErrors.sum());
        sink.counter("zrm_changestreamer_http_rejected_requests_total",
                "Requests closed with code 1002 before subscribing (bad path, version or parameters).",
                Map.of(), rejectedRequests.sum());
        sink.counter("zrm_changestreamer_http_liveness_timeouts_total",
                "Connections terminated because the client answered no ping.", Map.of(), livenessTimeouts.sum());
    }

    /** Which WebSocket endpoint a connection belongs to. */
    enum Endpoint {
        CHANGES, SNAPSHOT
    }
}

package org.zrm.changestreamer.internal;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.zrm.status.MetricsSink;

/** Renders a {@link StreamerSnapshot} as the change streamer's Prometheus figures. */
final class StreamerMetrics {

    private StreamerMetrics() {
    }

    static void collect(StreamerSnapshot snap, MetricsSink sink) {
        for (ChangeStreamerService.State s : ChangeStreamerService.State.values()) {
            sink.gauge("zrm_changestreamer_state", "Change streamer state (1 for the current one)",
                    Map.of("state", s.name().toLowerCase(Locale.ROOT)), s == snap.state() ? 1 : 0);
        }
        sink.counter("zrm_changestreamer_transactions_total", "Transactions forwarded and stored", Map.of(),
                snap.transactions());
        sink.counter("zrm_changestreamer_changes_total", "Data changes forwarded and stored", Map.of(), snap.changes());
        sink.counter("zrm_changestreamer_restarts_total", "Stream restarts after an error", Map.of(), snap.restarts());
        sink.counter("zrm_changestreamer_flow_control_waits_total",
                "Times the stream loop waited for subscribers because the flow-control window was full", Map.of(),
                snap.flowControlWaits());
        sink.counter("zrm_changestreamer_flow_control_wait_seconds_total",
                "Time the stream loop spent waiting for subscribers (flow control)", Map.of(),
                snap.flowControlWaitNanos() / 1e9);
        sink.counter("zrm_changestreamer_resets_total", "In-process replica re-syncs (auto-reset)", Map.of(),
                snap.resets());
        sink.counter("zrm_changestreamer_subscriptions_total", "Subscriptions received", Map.of(), snap.subscriptions());
        sink.counter("zrm_changestreamer_subscribers_dropped_total",
                "Subscribers disconnected by the streamer (buffer bound, protocol error, failure)", Map.of(),
                snap.droppedSubscribers());
        sink.counter("zrm_changestreamer_purged_rows_total", "Change-log rows purged", Map.of(), snap.purgedRows());
        sink.gauge("zrm_changestreamer_pending_cleanups", "Backed-up watermarks waiting to be purged", Map.of(),
                snap.pendingCleanups().size());
        sink.gauge("zrm_changestreamer_storer_queued_bytes", "Bytes queued for the change log", Map.of(),
                snap.storer().queuedBytes());
        sink.gauge("zrm_changestreamer_storer_back_pressure", "1 while the storer holds the stream back", Map.of(),
                snap.storer().backPressure() ? 1 : 0);
        for (StreamerSnapshot.SubscriberView sub : snap.subscribers()) {
            Map<String, String> labels = new LinkedHashMap<>();
            labels.put("id", sub.id());
            labels.put("mode", sub.mode());
            sink.gauge("zrm_changestreamer_subscriber_buffered_bytes", "Bytes sent or queued but not yet consumed",
                    labels, sub.bufferedBytes());
            sink.gauge("zrm_changestreamer_subscriber_pending_messages", "Messages not yet consumed", labels,
                    sub.pendingMessages());
            sink.gauge("zrm_changestreamer_subscriber_ms_since_last_ack",
                    "Milliseconds since the subscriber last consumed a commit (-1 if never)", labels,
                    sub.msSinceLastAck() == null ? -1 : sub.msSinceLastAck());
        }
        sink.gauge("zrm_changestreamer_subscribers", "Connected subscribers", Map.of(), snap.subscribers().size());
    }
}

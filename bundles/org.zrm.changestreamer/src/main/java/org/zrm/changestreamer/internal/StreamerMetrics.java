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
        sink.counter("zrm_changestreamer_catchups_repeated_total",
                "Catch-up rounds started again because the subscriber, still reading, fell more than its byte bound"
                        + " behind the live stream while catching up", Map.of(), snap.repeatedCatchups());
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
            if (sub.lagBytes() != null) {
                sink.gauge("zrm_changestreamer_subscriber_lag_bytes",
                        "WAL bytes from the subscriber's acknowledged watermark to the newest forwarded commit", labels,
                        sub.lagBytes());
            }
            if (sub.lagMs() != null) {
                sink.gauge("zrm_changestreamer_subscriber_lag_seconds",
                        "Age of the oldest forwarded commit the subscriber has not acknowledged (0 when caught up)",
                        labels, sub.lagMs() / 1000.0);
            }
        }
        sink.gauge("zrm_changestreamer_subscribers", "Connected subscribers", Map.of(), snap.subscribers().size());
        LagTracker.View lag = snap.lag();
        sink.counter("zrm_upstream_lag_reports_total", "Lag reports received through the replication stream", Map.of(),
                lag.reports());
        if (lag.replicationMs() != null) {
            sink.gauge("zrm_upstream_replication_lag_seconds",
                    "Last lag report: written upstream -> received by the change source", Map.of(),
                    lag.replicationMs() / 1000.0);
        }
        if (lag.storageMs() != null) {
            sink.gauge("zrm_upstream_storage_lag_seconds",
                    "Last stored lag report: received -> every transaction before it durable in the change log",
                    Map.of(), lag.storageMs() / 1000.0);
        }
        if (lag.lastEndToEndMs() != null) {
            sink.gauge("zrm_upstream_last_end_to_end_lag_seconds",
                    "Last measured lag report: written upstream -> stored; does not grow when reports stop", Map.of(),
                    lag.lastEndToEndMs() / 1000.0);
        }
        if (lag.endToEndMs() != null) {
            sink.gauge("zrm_upstream_end_to_end_lag_seconds",
                    "Written upstream -> stored; grows while the next lag report is overdue (stalled stream)",
                    Map.of(), lag.endToEndMs() / 1000.0);
        }
        if (lag.msSinceLastReport() != null) {
            sink.gauge("zrm_upstream_last_lag_report_age_seconds", "Seconds since the last lag report arrived",
                    Map.of(), lag.msSinceLastReport() / 1000.0);
        }
    }
}

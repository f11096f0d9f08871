package org.zrm.changestreamer.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import org.zrm.changelog.Storer;
import org.zrm.status.MetricsSink;

/** The change streamer's Prometheus figures (same as its status section). */
final class StreamerMetrics {

    private final ChangeStreamerService service;

    StreamerMetrics(ChangeStreamerService service) {
        this.service = service;
    }

    void collect(MetricsSink sink) {
        ChangeStreamerService.State current = service.state();
        for (ChangeStreamerService.State s : ChangeStreamerService.State.values()) {
            sink.gauge("zrm_changestreamer_state", "Change streamer state (1 for the current one)",
                    Map.of("state", s.name().toLowerCase(java.util.Locale.ROOT)), s == current ? 1 : 0);
        }
        sink.counter("zrm_changestreamer_transactions_total", "Transactions forwarded and stored", Map.of(),
                service.transactions());
        sink.counter("zrm_changestreamer_changes_total", "Data changes forwarded and stored", Map.of(), service.changes());
        sink.counter("zrm_changestreamer_restarts_total", "Stream restarts after an error", Map.of(), service.restarts());
        sink.counter("zrm_changestreamer_flow_control_waits_total",
                "Times the stream loop waited for subscribers because the flow-control window was full", Map.of(),
                service.flowControlWaits());
        sink.counter("zrm_changestreamer_flow_control_wait_seconds_total",
                "Time the stream loop spent waiting for subscribers (flow control)", Map.of(),
                service.flowControlWaitNanos() / 1e9);
        sink.counter("zrm_changestreamer_resets_total", "In-process replica re-syncs (auto-reset)", Map.of(),
                service.resets());
        sink.counter("zrm_changestreamer_subscriptions_total", "Subscriptions received", Map.of(), service.subscriptions());
        sink.counter("zrm_changestreamer_subscribers_dropped_total",
                "Subscribers disconnected by the streamer (buffer bound, protocol error, failure)", Map.of(),
                service.droppedSubscribers());
        sink.counter("zrm_changestreamer_purged_rows_total", "Change-log rows purged", Map.of(),
                service.purger().purgedRows());
        sink.gauge("zrm_changestreamer_pending_cleanups", "Backed-up watermarks waiting to be purged", Map.of(),
                service.purger().pending().size());
        Storer storer = service.currentStorer();
        sink.gauge("zrm_changestreamer_storer_queued_bytes", "Bytes queued for the change log", Map.of(),
                storer == null ? 0 : storer.queuedBytes());
        sink.gauge("zrm_changestreamer_storer_back_pressure", "1 while the storer holds the stream back", Map.of(),
                storer != null && storer.isApplyingBackPressure() ? 1 : 0);
        long now = System.currentTimeMillis();
        int n = 0;
        for (Subscriber sub : service.subscribers()) {
            n++;
            Map<String, String> labels = new LinkedHashMap<>();
            labels.put("id", sub.id);
            labels.put("mode", sub.mode.wireName());
            sink.gauge("zrm_changestreamer_subscriber_buffered_bytes", "Bytes sent or queued but not yet consumed",
                    labels, sub.bufferedBytes());
            sink.gauge("zrm_changestreamer_subscriber_pending_messages", "Messages not yet consumed", labels,
                    sub.outbox().pendingMessages());
            long last = sub.lastConsumedAtMillis();
            sink.gauge("zrm_changestreamer_subscriber_ms_since_last_ack",
                    "Milliseconds since the subscriber last consumed a commit (-1 if never)", labels,
                    last == 0 ? -1 : now - last);
        }
        sink.gauge("zrm_changestreamer_subscribers", "Connected subscribers", Map.of(), n);
    }
}

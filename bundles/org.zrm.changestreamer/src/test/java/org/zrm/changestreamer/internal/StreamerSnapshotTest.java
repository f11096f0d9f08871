package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.internal.ChangeStreamerService.State;
import org.zrm.changestreamer.internal.StreamerSnapshot.StorerView;
import org.zrm.changestreamer.internal.StreamerSnapshot.SubscriberView;
import org.zrm.status.MetricsSink;

/** One snapshot, two renderings: {@code /status} and {@code /metrics} show the same figures. */
class StreamerSnapshotTest {

    private static StreamerSnapshot snapshot(List<String> pendingCleanups) {
        return new StreamerSnapshot(State.STREAMING, null, "task", "host:4849", "01", "02", "07", "06", 5, 12, 1, 0,
                3, 1, 7, 16, 2, 4, 2_500_000_000L, new StorerView(100, 1000, true, 3),
                List.of(new SubscriberView("a", "serving", 6, "07", "06", false, 40L, 2, 300, 16L, 1_500L, false),
                        new SubscriberView("b", "backup", 5, "01", "01", true, null, 0, 0, null, null, false)),
                1, pendingCleanups, 9, "07", new LagTracker.View(3, 20L, 5L, 30L, 4_000L, 1_000L));
    }

    @Test
    void statusSection() {
        Map<String, Object> m = snapshot(List.of("05")).toStatus();
        assertEquals(List.of("state", "lastError", "taskID", "ownerAddress", "replicaVersion", "streamStartWatermark",
                "lastStoredWatermark", "lastAckedWatermark", "transactions", "changes", "restarts", "resets",
                "repeatedCatchups", "flowControl", "storer", "subscribers", "pendingSubscribers", "pendingCleanups", "purgedRows",
                "lastForwardedCommit", "upstreamLag"),
                List.copyOf(m.keySet()));
        assertEquals("streaming", m.get("state"));
        assertEquals(7L, m.get("repeatedCatchups"));
        assertEquals(Map.of("window", 16, "inFlight", 2, "waits", 4L, "waitedMs", 2500L), m.get("flowControl"));
        assertEquals(Map.of("queuedBytes", 100L, "limitBytes", 1000L, "backPressure", true, "backPressureEvents", 3L),
                m.get("storer"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> subs = (List<Map<String, Object>>) m.get("subscribers");
        assertEquals(40L, subs.get(0).get("msSinceLastAck"));
        assertNull(subs.get(1).get("msSinceLastAck"), "never acked");
        assertEquals(List.of("05"), m.get("pendingCleanups"));
        assertEquals(16L, subs.get(0).get("lagBytes"));
        assertEquals(1_500L, subs.get(0).get("lagMs"));
        @SuppressWarnings("unchecked")
        Map<String, Object> lag = (Map<String, Object>) m.get("upstreamLag");
        assertEquals(4_000L, lag.get("endToEndMs"));
        assertEquals(30L, lag.get("lastEndToEndMs"));
    }

    @Test
    void metricsRenderTheSameFigures() {
        Map<String, Double> got = new LinkedHashMap<>();
        MetricsSink sink = new MetricsSink() {
            @Override
            public void gauge(String name, String help, Map<String, String> labels, double value) {
                got.put(name + labels, value);
            }

            @Override
            public void counter(String name, String help, Map<String, String> labels, double value) {
                got.put(name + labels, value);
            }
        };
        StreamerMetrics.collect(snapshot(List.of("05", "06")), sink);
        assertEquals(1.0, got.get("zrm_changestreamer_state{state=streaming}"));
        assertEquals(0.0, got.get("zrm_changestreamer_state{state=stopped}"));
        assertEquals(5.0, got.get("zrm_changestreamer_transactions_total{}"));
        assertEquals(12.0, got.get("zrm_changestreamer_changes_total{}"));
        assertEquals(2.5, got.get("zrm_changestreamer_flow_control_wait_seconds_total{}"));
        assertEquals(2.0, got.get("zrm_changestreamer_pending_cleanups{}"));
        assertEquals(1.0, got.get("zrm_changestreamer_storer_back_pressure{}"));
        assertEquals(40.0, got.get("zrm_changestreamer_subscriber_ms_since_last_ack{id=a, mode=serving}"));
        assertEquals(-1.0, got.get("zrm_changestreamer_subscriber_ms_since_last_ack{id=b, mode=backup}"));
        assertEquals(2.0, got.get("zrm_changestreamer_subscribers{}"));
        assertEquals(9.0, got.get("zrm_changestreamer_purged_rows_total{}"));
        assertEquals(7.0, got.get("zrm_changestreamer_catchups_repeated_total{}"));
        assertEquals(16.0, got.get("zrm_changestreamer_subscriber_lag_bytes{id=a, mode=serving}"));
        assertEquals(1.5, got.get("zrm_changestreamer_subscriber_lag_seconds{id=a, mode=serving}"));
        assertFalse(got.containsKey("zrm_changestreamer_subscriber_lag_bytes{id=b, mode=backup}"), "unknown is left out");
        assertEquals(3.0, got.get("zrm_upstream_lag_reports_total{}"));
        assertEquals(0.02, got.get("zrm_upstream_replication_lag_seconds{}"));
        assertEquals(0.005, got.get("zrm_upstream_storage_lag_seconds{}"));
        assertEquals(0.03, got.get("zrm_upstream_last_end_to_end_lag_seconds{}"));
        assertEquals(4.0, got.get("zrm_upstream_end_to_end_lag_seconds{}"));
        assertEquals(1.0, got.get("zrm_upstream_last_lag_report_age_seconds{}"));
    }

    @Test
    void subscriberByteLagIsTheLsnDistanceToTheNewestCommit() {
        String head = org.zrm.watermark.Watermarks.fromLsn("0/1000");
        assertEquals(0x800L, StreamerSnapshot.bytesBehind(head, org.zrm.watermark.Watermarks.fromLsn("0/800")));
        assertEquals(0L, StreamerSnapshot.bytesBehind(head, head));
        assertEquals(0L, StreamerSnapshot.bytesBehind(head, org.zrm.watermark.Watermarks.fromLsn("0/2000")));
        assertNull(StreamerSnapshot.bytesBehind(null, head));
        assertNull(StreamerSnapshot.bytesBehind(head, null));
    }

    @Test
    void aSnapshotDoesNotChangeWhenItsSourcesDo() {
        List<String> cleanups = new ArrayList<>(List.of("05"));
        StreamerSnapshot s = snapshot(cleanups);
        cleanups.add("06");
        assertEquals(List.of("05"), s.pendingCleanups());
        assertThrows(UnsupportedOperationException.class, () -> s.subscribers().clear());
    }
}

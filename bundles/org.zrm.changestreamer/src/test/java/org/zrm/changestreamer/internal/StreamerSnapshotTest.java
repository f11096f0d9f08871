package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
                3, 1, 16, 2, 4, 2_500_000_000L, new StorerView(100, 1000, true, 3),
                List.of(new SubscriberView("a", "serving", 6, "07", "06", false, 40L, 2, 300),
                        new SubscriberView("b", "backup", 5, "01", "01", true, null, 0, 0)),
                1, pendingCleanups, 9);
    }

    @Test
    void statusSection() {
        Map<String, Object> m = snapshot(List.of("05")).toStatus();
        assertEquals(List.of("state", "lastError", "taskID", "ownerAddress", "replicaVersion", "streamStartWatermark",
                "lastStoredWatermark", "lastAckedWatermark", "transactions", "changes", "restarts", "resets",
                "flowControl", "storer", "subscribers", "pendingSubscribers", "pendingCleanups", "purgedRows"),
                List.copyOf(m.keySet()));
        assertEquals("streaming", m.get("state"));
        assertEquals(Map.of("window", 16, "inFlight", 2, "waits", 4L, "waitedMs", 2500L), m.get("flowControl"));
        assertEquals(Map.of("queuedBytes", 100L, "limitBytes", 1000L, "backPressure", true, "backPressureEvents", 3L),
                m.get("storer"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> subs = (List<Map<String, Object>>) m.get("subscribers");
        assertEquals(40L, subs.get(0).get("msSinceLastAck"));
        assertNull(subs.get(1).get("msSinceLastAck"), "never acked");
        assertEquals(List.of("05"), m.get("pendingCleanups"));
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

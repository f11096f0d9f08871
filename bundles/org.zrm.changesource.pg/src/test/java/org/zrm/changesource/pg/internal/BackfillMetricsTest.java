package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.status.MetricsSink;

/** The backfill status rendered as metrics: valid names, one series per table. */
class BackfillMetricsTest {

    private final List<String> samples = new ArrayList<>();
    private final MetricsSink sink = new MetricsSink() {
        @Override
        public void gauge(String name, String help, Map<String, String> labels, double value) {
            record("gauge", name, labels, value);
        }

        @Override
        public void counter(String name, String help, Map<String, String> labels, double value) {
            assertTrue(name.endsWith("_total"), name);
            record("counter", name, labels, value);
        }

        private void record(String type, String name, Map<String, String> labels, double value) {
            assertTrue(name.matches("zrm_[a-z_]+"), name);
            samples.add(type + " " + name + labels + " " + value);
        }
    };

    @Test
    void runningAndWaitingBackfills() {
        Map<String, Object> running = new LinkedHashMap<>();
        running.put("table", "public.big");
        running.put("columns", List.of("id", "v"));
        running.put("state", "running");
        running.put("rows", 500L);
        running.put("totalRows", 1000L);
        running.put("mb", 2.0);
        running.put("rowsPerSecond", 250L);
        running.put("etaSeconds", 2L);
        running.put("retries", 1);
        Map<String, Object> waiting = new LinkedHashMap<>();
        waiting.put("table", "public.other");
        waiting.put("columns", List.of("x"));
        waiting.put("state", "waiting");
        waiting.put("retries", 0);
        BackfillMetrics.collect(List.of(running, waiting), sink);
        assertEquals(List.of(
                "gauge zrm_backfill_required{} 2.0",
                "gauge zrm_backfill_running{table=public.big} 1.0",
                "gauge zrm_backfill_columns{table=public.big} 2.0",
                "counter zrm_backfill_retries_total{table=public.big} 1.0",
                "gauge zrm_backfill_rows{table=public.big} 500.0",
                "gauge zrm_backfill_total_rows{table=public.big} 1000.0",
                "gauge zrm_backfill_sent_bytes{table=public.big} 2097152.0",
                "gauge zrm_backfill_rows_per_second{table=public.big} 250.0",
                "gauge zrm_backfill_eta_seconds{table=public.big} 2.0",
                "gauge zrm_backfill_running{table=public.other} 0.0",
                "gauge zrm_backfill_columns{table=public.other} 1.0",
                "counter zrm_backfill_retries_total{table=public.other} 0.0"), samples);
    }

    @Test
    void streamSharing() {
        BackfillMetrics.collectSharing(null, sink);
        assertEquals(List.of(), samples, "no stream, no samples");
        BackfillMetrics.collectSharing(Map.of("liveWaits", 3L, "maxLiveWaitMs", 4.5), sink);
        assertEquals(List.of("counter zrm_backfill_live_waits_total{} 3.0",
                "gauge zrm_backfill_live_wait_max_seconds{} 0.0045"), samples);
    }

    @Test
    void noBackfills() {
        BackfillMetrics.collect(List.of(), sink);
        assertEquals(List.of("gauge zrm_backfill_required{} 0.0"), samples);
    }
}

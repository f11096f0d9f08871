package org.zrm.changesource.pg.internal;

import java.util.List;
import java.util.Map;

import org.zrm.status.MetricsSink;

/** Renders {@link PgChangeSource#backfillStatus()} as Prometheus samples, one series per table. */
final class BackfillMetrics {

    private BackfillMetrics() {
    }

    static void collect(List<Map<String, Object>> backfills, MetricsSink sink) {
        sink.gauge("zrm_backfill_required", "Tables with columns that still need a backfill", Map.of(), backfills.size());
        for (Map<String, Object> b : backfills) {
            Map<String, String> table = Map.of("table", String.valueOf(b.get("table")));
            boolean running = "running".equals(b.get("state"));
            sink.gauge("zrm_backfill_running", "1 while the table's backfill runs, else 0", table, running ? 1 : 0);
            sink.gauge("zrm_backfill_columns", "Columns of the table that still need a backfill", table,
                    ((List<?>) b.get("columns")).size());
            sink.counter("zrm_backfill_retries_total", "Failed backfill runs of the table, each retried", table,
                    ((Number) b.get("retries")).doubleValue());
            if (running) {
                sink.gauge("zrm_backfill_rows", "Rows sent by the running backfill", table, number(b.get("rows")));
                sink.gauge("zrm_backfill_total_rows", "Estimated rows of the running backfill", table,
                        number(b.get("totalRows")));
                sink.gauge("zrm_backfill_sent_bytes", "Estimated bytes sent by the running backfill", table,
                        number(b.get("mb")) * 1048576.0);
                sink.gauge("zrm_backfill_rows_per_second", "Row rate of the running backfill", table,
                        number(b.get("rowsPerSecond")));
                Object eta = b.get("etaSeconds");
                if (eta != null) {
                    sink.gauge("zrm_backfill_eta_seconds", "Estimated time left of the running backfill", table,
                            number(eta));
                }
            }
        }
    }

    /** The live stream's waits for backfills ({@link PgChangeSource#streamSharing()}), if a stream runs. */
    static void collectSharing(Map<String, Object> sharing, MetricsSink sink) {
        if (sharing == null) {
            return;
        }
        sink.counter("zrm_backfill_live_waits_total",
                "Times the current stream's live transactions waited for a backfill to yield", Map.of(),
                number(sharing.get("liveWaits")));
        sink.gauge("zrm_backfill_live_wait_max_seconds",
                "Longest wait of a live transaction for a backfill to yield, current stream", Map.of(),
                number(sharing.get("maxLiveWaitMs")) / 1000.0);
    }

    private static double number(Object o) {
        return o instanceof Number n ? n.doubleValue() : 0;
    }
}

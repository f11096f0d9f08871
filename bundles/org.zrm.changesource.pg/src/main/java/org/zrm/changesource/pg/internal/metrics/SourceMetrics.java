package org.zrm.changesource.pg.internal.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.status.MetricsSink;

/**
 * Renders the slot sample and the stream's activity for {@code /metrics} and {@code /status}, so
 * both show the same figures. Pure functions of their arguments.
 */
public final class SourceMetrics {

    private SourceMetrics() {
    }

    /** Reports the Prometheus figures. */
    public static void collect(SlotReading reading, StreamActivity activity, long nowMillis, MetricsSink sink) {
        for (SlotSample s : reading.slots()) {
            Map<String, String> slot = Map.of("slot", s.slot());
            sink.gauge("zrm_pg_slot_active", "1 while a walsender streams the replication slot", slot, s.active() ? 1 : 0);
            if (s.retainedWalBytes() != null) {
                sink.gauge("zrm_pg_slot_retained_wal_bytes",
                        "WAL the slot keeps on the upstream's disk: pg_current_wal_lsn() - restart_lsn", slot,
                        s.retainedWalBytes());
            }
            if (s.unconfirmedBytes() != null) {
                sink.gauge("zrm_pg_slot_unconfirmed_wal_bytes",
                        "WAL written upstream but not yet confirmed by the slot's consumer:"
                                + " pg_current_wal_lsn() - confirmed_flush_lsn", slot, s.unconfirmedBytes());
            }
            if (s.safeWalSizeBytes() != null) {
                sink.gauge("zrm_pg_slot_safe_wal_size_bytes",
                        "WAL that may still be written before the slot risks invalidation (safe_wal_size;"
                                + " absent when max_slot_wal_keep_size is unlimited)", slot, s.safeWalSizeBytes());
            }
            for (String state : SlotSample.WAL_STATES) {
                Map<String, String> labels = new LinkedHashMap<>();
                labels.put("slot", s.slot());
                labels.put("wal_status", state);
                sink.gauge("zrm_pg_slot_wal_status", "The slot's wal_status (1 for the current one)", labels,
                        state.equals(s.walStatus()) ? 1 : 0);
            }
        }
        sink.gauge("zrm_pg_slots", "Replication slots of this shard", Map.of(), reading.slots().size());
        if (reading.sampledAtMillis() > 0) {
            sink.gauge("zrm_pg_slot_sample_age_seconds", "Age of the last successful replication-slot sample",
                    Map.of(), Math.max(0, nowMillis - reading.sampledAtMillis()) / 1000.0);
        }
        sink.gauge("zrm_pg_slot_sample_failing", "1 while sampling pg_replication_slots fails", Map.of(),
                reading.error() == null ? 0 : 1);
        if (activity != null) {
            Map<String, String> slot = Map.of("slot", activity.slot());
            Double received = StreamActivity.ageSeconds(activity.lastReceivedAtMillis(), nowMillis);
            if (received != null) {
                sink.gauge("zrm_pg_replication_last_message_age_seconds",
                        "Seconds since anything (data or keepalive) arrived on the replication connection", slot,
                        received);
            }
            Double acked = StreamActivity.ageSeconds(activity.lastAckAtMillis(), nowMillis);
            if (acked != null) {
                sink.gauge("zrm_pg_replication_last_ack_age_seconds",
                        "Seconds since the confirmed position last moved upstream (standby status update)", slot,
                        acked);
            }
        }
    }

    /** @return the {@code slots} and {@code stream} entries of the {@code changesource.pg} status section */
    public static Map<String, Object> status(SlotReading reading, StreamActivity activity, long nowMillis) {
        Map<String, Object> m = new LinkedHashMap<>();
        List<Object> slots = new ArrayList<>();
        for (SlotSample s : reading.slots()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("slot", s.slot());
            e.put("active", s.active());
            e.put("walStatus", s.walStatus());
            e.put("retainedWalBytes", s.retainedWalBytes());
            e.put("unconfirmedWalBytes", s.unconfirmedBytes());
            e.put("safeWalSizeBytes", s.safeWalSizeBytes());
            slots.add(e);
        }
        Map<String, Object> sample = new LinkedHashMap<>();
        sample.put("currentLsn", reading.currentLsn());
        sample.put("ageMs", reading.sampledAtMillis() == 0 ? null : Math.max(0, nowMillis - reading.sampledAtMillis()));
        sample.put("error", reading.error());
        sample.put("slots", slots);
        m.put("slots", sample);
        if (activity == null) {
            m.put("stream", null);
        } else {
            Map<String, Object> st = new LinkedHashMap<>();
            st.put("slot", activity.slot());
            st.put("lastMessageAgeMs", activity.lastReceivedAtMillis() == 0 ? null
                    : Math.max(0, nowMillis - activity.lastReceivedAtMillis()));
            st.put("lastAckAgeMs", activity.lastAckAtMillis() == 0 ? null
                    : Math.max(0, nowMillis - activity.lastAckAtMillis()));
            st.put("ackedLsn", activity.ackedLsn());
            m.put("stream", st);
        }
        return m;
    }
}

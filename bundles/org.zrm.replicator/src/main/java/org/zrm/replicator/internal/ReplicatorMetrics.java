package org.zrm.replicator.internal;

import java.util.Map;
import org.zrm.status.MetricsSink;
import org.zrm.watermark.LexiVersion;
import org.zrm.watermark.StateVersion;

/** The replicator's Prometheus metrics. */
final class ReplicatorMetrics {

    private ReplicatorMetrics() {}

    private static boolean isStateVersion(String v) {
        int dot = v.indexOf('.');
        return dot < 0 ? LexiVersion.isValid(v) : LexiVersion.isValid(v.substring(0, dot)) && LexiVersion.isValid(v.substring(dot + 1));
    }

    static void collect(ReplicatorStatus st, MetricsSink sink) {
        sink.gauge("zrm_replicator_connected", "Whether the backup replicator is subscribed to the change streamer.",
                Map.of(), st.connected() ? 1 : 0);
        sink.counter("zrm_replicator_transactions_applied_total",
                "Upstream transactions committed to the replica file.", Map.of(), st.transactionsApplied());
        sink.counter("zrm_replicator_reconnects_total", "Resubscriptions after a failure.", Map.of(), st.reconnects());
        String version = st.stateVersion();
        // A watermark from a custom source need not be a LexiVersion; it has no numeric form then.
        if (version != null && isStateVersion(version)) {
            // For the Postgres source a watermark is the commit LSN, so differences are WAL bytes.
            sink.gauge("zrm_replica_state_version", "The replica's stateVersion as a number (the commit LSN"
                    + " for Postgres sources).", Map.of(), StateVersion.majorOf(version).doubleValue());
        }
        if (st.lastCommitLagMs() >= 0) {
            sink.gauge("zrm_replicator_commit_lag_seconds", "Time from the upstream commit to its replica commit,"
                    + " for the last transaction applied.", Map.of(), st.lastCommitLagMs() / 1000.0);
        }
    }
}

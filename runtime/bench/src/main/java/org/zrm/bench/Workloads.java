package org.zrm.bench;

import java.util.List;
import java.util.Optional;

/** The known workloads. Register a new one by adding it to {@link #ALL}. */
final class Workloads {

    static final List<Workload> ALL = List.of(
            // source-W1 / source-W2 (issue: Postgres change source)
            org.zrm.bench.source.SourceWorkload.w1(), org.zrm.bench.source.SourceWorkload.w2(),
            // storer-W3 (issue: storer)
            new org.zrm.bench.storer.StorerW3(),
            // e2e-W1, e2e-W2, fanout-W4, catchup-W5, latency (issue: change streamer)
            org.zrm.bench.e2e.E2eWorkload.w1(), org.zrm.bench.e2e.E2eWorkload.w2(),
            org.zrm.bench.e2e.E2eWorkload.fanout(), org.zrm.bench.e2e.E2eWorkload.catchup(),
            org.zrm.bench.e2e.E2eWorkload.latency(),
            // backfill (issue: backfill)
            org.zrm.bench.e2e.E2eWorkload.backfill(),
            // memory (issue: fan-out performance)
            org.zrm.bench.e2e.E2eWorkload.memory(),
            // initial-sync, W6 (issue: fan-out performance)
            org.zrm.bench.e2e.E2eWorkload.initialSync()
    );

    private Workloads() {
    }

    static Optional<Workload> find(String name) {
        return ALL.stream().filter(w -> w.name().equals(name)).findFirst();
    }
}

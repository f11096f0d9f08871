package org.zrm.changesource.pg.internal;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.sync.InitialSyncOptions;
import org.zrm.changesource.pg.internal.sync.JdbcPgConnector;
import org.zrm.changesource.pg.internal.sync.SyncProgress;

/** Binds {@link ReplicaInitializer} to the setup and initial-sync code. */
final class ReplicaInitializers {

    private ReplicaInitializers() {}

    static ReplicaInitializer forSettings(PgSourceSettings settings, InitialSyncOptions options) {
        ShardConfig shard = new ShardConfig(settings.shard(), settings.publications());
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("appID", settings.shard().appId());
        context.put("hostname", hostname());
        org.zrm.changesource.pg.internal.sync.ReplicaBootstrap init =
                new org.zrm.changesource.pg.internal.sync.ReplicaBootstrap(shard,
                        JdbcPgConnector.fromUri(settings.upstreamUri()), Path.of(settings.replicaFile()),
                        options, context);
        return new ReplicaInitializer() {
            @Override
            public org.zrm.changesource.SubscriptionState initialize(boolean reset)
                    throws org.zrm.changesource.ChangeSourceException, InterruptedException {
                return init.initialize(reset).subscriptionState();
            }

            @Override
            public Optional<Map<String, Object>> progress() {
                return init.syncProgress().map(ReplicaInitializers::describe);
            }
        };
    }

    static Map<String, Object> describe(SyncProgress.Snapshot p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("phase", p.phase().toString());
        m.put("replicaVersion", p.replicaVersion());
        m.put("tablesDone", p.tablesDone());
        m.put("tablesTotal", p.tablesTotal());
        m.put("rows", p.rows());
        m.put("rowsEstimate", p.totalRowsEstimate());
        m.put("mb", Math.round(p.bytes() / 1e4) / 100.0);
        m.put("rowsPerSecond", Math.round(p.rowsPerSecond()));
        m.put("mbPerSecond", Math.round(p.mbPerSecond() * 100) / 100.0);
        m.put("elapsedSeconds", p.elapsed().toSeconds());
        m.put("etaSeconds", p.eta() == null ? null : p.eta().toSeconds());
        return m;
    }

    /** The host name recorded in the shard's replica rows, as zero-cache records its own. */
    static String hostname() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}

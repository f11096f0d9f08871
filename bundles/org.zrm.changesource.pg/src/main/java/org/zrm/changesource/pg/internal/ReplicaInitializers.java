package org.zrm.changesource.pg.internal;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.sync.InitialSyncOptions;
import org.zrm.changesource.pg.internal.sync.JdbcPgConnector;

/** Binds {@link ReplicaInitializer} to the setup and initial-sync code. */
final class ReplicaInitializers {

    private ReplicaInitializers() {}

    static ReplicaInitializer forSettings(PgSourceSettings settings) {
        ShardConfig shard = new ShardConfig(settings.shard(), settings.publications());
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("appID", settings.shard().appId());
        context.put("hostname", hostname());
        org.zrm.changesource.pg.internal.sync.ReplicaInitializer init =
                new org.zrm.changesource.pg.internal.sync.ReplicaInitializer(shard,
                        JdbcPgConnector.fromUri(settings.upstreamUri()), Path.of(settings.replicaFile()),
                        InitialSyncOptions.defaults(), context);
        return reset -> init.initialize(reset).subscriptionState();
    }

    private static String hostname() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}

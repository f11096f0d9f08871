package org.zrm.changesource.pg.internal.sync;

import java.util.List;
import java.util.Map;

/**
 * The upstream {@code "{app}_{n}".replicas} row of the local replica, joined with the shard config
 * (upstream {@code Replica}).
 *
 * @param initialSchema the published schema at initial sync ({@code {tables, indexes}}, JSON values)
 * @param subscriberContext who streams from the slot, or {@code null}
 * @param publications all shard publications (from {@code shardConfig})
 * @param ddlDetection whether event triggers are installed ({@code false} = degraded mode)
 */
public record UpstreamReplica(String id, long rank, String slot, String version, Map<String, Object> initialSchema,
        Map<String, Object> initialSyncContext, Map<String, Object> subscriberContext, List<String> publications,
        boolean ddlDetection) {}

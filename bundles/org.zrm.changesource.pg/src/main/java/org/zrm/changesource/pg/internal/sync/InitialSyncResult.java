package org.zrm.changesource.pg.internal.sync;

import java.util.List;

/**
 * Outcome of a successful initial sync.
 *
 * @param replicaVersion {@code lexi(consistent_point)}, also the replica's first watermark
 * @param publications all publications of the shard, sorted (as in {@code _zero.replicationConfig})
 * @param replicaId the {@code "{app}_{n}".replicas} row id
 * @param slot the replication slot the replica streams from
 */
public record InitialSyncResult(String replicaVersion, List<String> publications, String replicaId, String slot,
        long rows, int tables) {}

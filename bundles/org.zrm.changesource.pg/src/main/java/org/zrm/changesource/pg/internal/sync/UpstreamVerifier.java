package org.zrm.changesource.pg.internal.sync;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.setup.ShardSchema;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Startup check of an existing replica against upstream (upstream {@code checkAndUpdateUpstream}):
 * migrates the shard, finds the replica row, and verifies publications and slot health. Every
 * mismatch that a re-sync fixes becomes an {@link AutoResetException} with upstream's message.
 */
public final class UpstreamVerifier {

    private static final Logger LOG = LoggerFactory.getLogger(UpstreamVerifier.class);
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private UpstreamVerifier() {}

    /**
     * @param conn a plain connection (auto-commit)
     * @param state the local replica's subscription state
     * @param initialSyncContext the replica's {@code initialSyncContext} (for the log line only)
     */
    public static UpstreamReplica checkAndUpdateUpstream(Connection conn, ShardConfig shard, SubscriptionState state,
            Map<String, Object> initialSyncContext) throws SQLException, AutoResetException {
        ShardSchema.updateShardSchema(conn, shard, state.replicaVersion());
        UpstreamReplica replica = getReplicaAtVersion(conn, shard, state.replicaVersion());
        if (replica == null) {
            LOG.info("Replica {} (context: {}) not found upstream", state.replicaVersion(),
                    CODEC.encodeValue(initialSyncContext));
            throw new AutoResetException("No replication slot for replica at version " + state.replicaVersion());
        }
        List<String> requested = shard.publications().stream().sorted().toList();
        List<String> replicated = replica.publications().stream()
                .filter(p -> !p.startsWith(shard.id().internalPublicationPrefix())).sorted().toList();
        if (!requested.equals(replicated)) {
            LOG.warn("Dropping shard to change publications to: [{}]", String.join(",", requested));
            ShardSchema.dropShard(conn, shard.id());
            throw new AutoResetException("Requested publications [" + String.join(",", requested)
                    + "] do not match configured publications: [" + String.join(",", replicated) + "]");
        }
        List<String> subscribed = state.publications();
        if (!replica.publications().equals(subscribed)) {
            throw new AutoResetException("Upstream publications [" + String.join(",", replica.publications())
                    + "] do not match subscribed publications [" + String.join(",", subscribed) + "]");
        }
        List<String> exists = new ArrayList<>();
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT pubname FROM pg_publication WHERE pubname IN (" + ShardSql.literalList(subscribed) + ")")) {
            while (rs.next()) {
                exists.add(rs.getString(1));
            }
        }
        if (exists.size() != subscribed.size()) {
            throw new AutoResetException("Upstream publications [" + String.join(",", exists)
                    + "] do not contain all subscribed publications [" + String.join(",", subscribed) + "]");
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT restart_lsn, wal_status FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, replica.slot());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new AutoResetException("replication slot " + replica.slot() + " is missing");
                }
                if (rs.getString(1) == null || "lost".equals(rs.getString(2))) {
                    throw new AutoResetException("replication slot " + replica.slot()
                            + " has been invalidated for exceeding the max_slot_wal_keep_size");
                }
            }
        }
        return replica;
    }

    /** The latest initialized replica row at {@code replicaVersion}, or {@code null}. */
    @SuppressWarnings("unchecked")
    public static UpstreamReplica getReplicaAtVersion(Connection conn, ShardConfig shard, String replicaVersion)
            throws SQLException {
        String s = ShardSql.quoteId(shard.id().schema());
        try (PreparedStatement ps = conn.prepareStatement("SELECT replicas.\"id\", replicas.\"rank\", replicas.\"slot\", "
                + "replicas.\"version\", replicas.\"initialSchema\"::text, replicas.\"initialSyncContext\"::text, "
                + "replicas.\"subscriberContext\"::text, \"shardConfig\".\"publications\", \"shardConfig\".\"ddlDetection\" "
                + "FROM " + s + ".replicas JOIN " + s + ".\"shardConfig\" ON true "
                + "WHERE version = ? AND \"initialSyncContext\" IS NOT NULL ORDER BY rank DESC LIMIT 1")) {
            ps.setString(1, replicaVersion);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                Array pubs = rs.getArray(8);
                return new UpstreamReplica(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4),
                        json(rs.getString(5)), json(rs.getString(6)), json(rs.getString(7)),
                        List.copyOf(Arrays.asList((String[]) pubs.getArray())), rs.getBoolean(9));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String text) {
        if (text == null) {
            return null;
        }
        Object v = CODEC.decodeValue(text);
        return v instanceof Map ? (Map<String, Object>) v : null;
    }
}

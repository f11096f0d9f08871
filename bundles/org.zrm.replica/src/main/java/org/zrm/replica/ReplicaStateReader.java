package org.zrm.replica;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;

/**
 * Reads the replica's metadata tables {@code _zero.versionHistory},
 * {@code _zero.replicationConfig} and {@code _zero.replicationState} (upstream
 * {@code getSubscriptionState} plus the migration runner's version check).
 *
 * <p>A file holds a <em>completed</em> replica when all three tables exist and each has its single
 * row. The initial sync writes the config and state rows and, last of all, the version-history
 * row, in one transaction in a temporary file that it then renames into place; a file without them
 * is new, empty, or an interrupted sync, and must be synced (again) rather than read.
 */
public final class ReplicaStateReader {

    /** Immutable and thread-safe (see {@link ProtocolCodec}). */
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private ReplicaStateReader() {}

    /**
     * Reads the state of a completed replica.
     *
     * <p>The caller owns the connection and its settings (read-only mode, busy timeout); the reads
     * run in its current transaction, or each in its own in auto-commit mode.
     *
     * @param replica an open connection to the replica file
     * @return the state, or empty if the file does not hold a completed replica
     * @throws SQLException if the file cannot be read, is not a database, or holds metadata that
     *     does not parse (publications not a JSON array of strings, initial-sync context not JSON)
     */
    public static Optional<ReplicaState> read(Connection replica) throws SQLException {
        try (Statement st = replica.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM sqlite_master WHERE name IN "
                    + "('_zero.versionHistory', '_zero.replicationConfig', '_zero.replicationState')")) {
                if (!rs.next() || rs.getInt(1) != 3) {
                    return Optional.empty();
                }
            }
            int schemaVersion;
            try (ResultSet rs = st.executeQuery("SELECT dataVersion FROM \"_zero.versionHistory\"")) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                schemaVersion = rs.getInt(1);
            }
            try (ResultSet rs = st.executeQuery("SELECT c.replicaVersion, c.publications, s.stateVersion, "
                    + "c.initialSyncContext FROM \"_zero.replicationConfig\" c JOIN \"_zero.replicationState\" s "
                    + "ON c.lock = s.lock")) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new ReplicaState(schemaVersion, rs.getString(1), publications(rs.getString(2)),
                        rs.getString(3), context(rs.getString(4))));
            }
        }
    }

    /**
     * Reads the row of {@code _zero.replicationState} (upstream {@code getReplicationState}),
     * without judging it.
     *
     * <p>The caller owns the connection and its settings, as for {@link #read}.
     *
     * @param replica an open connection to the replica file
     * @return the row, or empty if the table has none
     * @throws SQLException if the file cannot be read or has no such table
     */
    public static Optional<ReplicationStateRow> replicationState(Connection replica) throws SQLException {
        try (Statement st = replica.createStatement();
                ResultSet rs = st.executeQuery("SELECT stateVersion, typeof(stateVersion), writeTimeMs "
                        + "FROM \"_zero.replicationState\"")) {
            if (!rs.next()) {
                return Optional.empty();
            }
            String version = rs.getString(1);
            String storageClass = rs.getString(2);
            long writeTime = rs.getLong(3);
            return Optional.of(new ReplicationStateRow(version, storageClass,
                    rs.wasNull() ? OptionalLong.empty() : OptionalLong.of(writeTime)));
        }
    }

    private static List<String> publications(String json) throws SQLException {
        Object decoded = decode("publications", json);
        if (!(decoded instanceof List<?> list)) {
            throw new SQLException("_zero.replicationConfig.publications is not a JSON array: " + json);
        }
        List<String> out = new ArrayList<>(list.size());
        for (Object o : list) {
            if (!(o instanceof String s)) {
                throw new SQLException("_zero.replicationConfig.publications is not an array of strings: " + json);
            }
            out.add(s);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> context(String json) throws SQLException {
        if (json == null) {
            return Map.of();
        }
        Object decoded = decode("initialSyncContext", json);
        return decoded instanceof Map ? (Map<String, Object>) decoded : Map.of();
    }

    private static Object decode(String column, String json) throws SQLException {
        if (json == null) {
            throw new SQLException("_zero.replicationConfig." + column + " is NULL");
        }
        try {
            return CODEC.decodeValue(json);
        } catch (ProtocolException e) {
            throw new SQLException("_zero.replicationConfig." + column + " is not valid JSON: " + e.getMessage(), e);
        }
    }
}

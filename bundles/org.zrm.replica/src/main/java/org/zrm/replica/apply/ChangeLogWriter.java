package org.zrm.replica.apply;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Writes {@code _zero.changeLog2} (upstream {@code ChangeLog}). A backup replica only logs row
 * operations that touch columns being backfilled, so that a later {@code backfill} batch does not
 * overwrite newer values; truncates and resets are not logged in backup mode.
 */
final class ChangeLogWriter {

    static final String SET_OP = "s";
    static final String DEL_OP = "d";

    private final Connection db;
    private final ProtocolCodec codec;

    ChangeLogWriter(Connection db, ProtocolCodec codec) {
        this.db = db;
        this.codec = codec;
    }

    /** The row key as stored: JSON with keys in sorted order (upstream {@code normalizedKeyOrder}). */
    String rowKeyJson(Map<String, Object> key) {
        return codec.encodeValue(new TreeMap<>(key));
    }

    void logSetOp(String version, long pos, String table, Map<String, Object> key, Collection<String> backfilled)
            throws SQLException {
        Map<String, Object> versions = new LinkedHashMap<>();
        for (String col : backfilled) {
            versions.put(col, version);
        }
        try (PreparedStatement ps = db.prepareStatement("""
                INSERT INTO "_zero.changeLog2" (stateVersion, pos, "table", rowKey, op, backfillingColumnVersions)
                  VALUES (?, ?, ?, JSON(?), ?, JSON(?))
                  ON CONFLICT ("table", rowKey) DO UPDATE SET stateVersion = excluded.stateVersion,
                    pos = excluded.pos, op = excluded.op,
                    backfillingColumnVersions = json_patch(backfillingColumnVersions, excluded.backfillingColumnVersions)
                """)) {
            ps.setString(1, version);
            ps.setLong(2, pos);
            ps.setString(3, table);
            ps.setString(4, rowKeyJson(key));
            ps.setString(5, SET_OP);
            ps.setString(6, codec.encodeValue(versions));
            ps.executeUpdate();
        }
    }

    void logDeleteOp(String version, long pos, String table, Map<String, Object> key) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("INSERT OR REPLACE INTO \"_zero.changeLog2\" "
                + "(stateVersion, pos, \"table\", rowKey, op) VALUES (?, ?, ?, JSON(?), ?)")) {
            ps.setString(1, version);
            ps.setLong(2, pos);
            ps.setString(3, table);
            ps.setString(4, rowKeyJson(key));
            ps.setString(5, DEL_OP);
            ps.executeUpdate();
        }
    }

    /**
     * The latest logged operation on a row, or {@code null}.
     *
     * @return the op, its state version and the per-column versions of backfilled columns
     */
    RowOp latestRowOp(String table, Map<String, Object> key) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("SELECT op, stateVersion, backfillingColumnVersions "
                + "FROM \"_zero.changeLog2\" WHERE \"table\" = ? AND rowKey = JSON(?)")) {
            ps.setString(1, table);
            ps.setString(2, rowKeyJson(key));
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                String raw = rs.getString(3);
                Object versions = raw == null ? Map.of() : codec.decodeValue(raw);
                if (!(versions instanceof Map<?, ?> m)) {
                    throw new SQLException("backfillingColumnVersions of " + table + " is not an object: " + raw);
                }
                Map<String, String> out = new LinkedHashMap<>();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    out.put(String.valueOf(e.getKey()), String.valueOf(e.getValue()));
                }
                return new RowOp(rs.getString(1), rs.getString(2), out);
            }
        }
    }

    record RowOp(String op, String stateVersion, Map<String, String> backfillingColumnVersions) {}
}

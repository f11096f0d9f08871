package org.zrm.backup.replica.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import org.sqlite.JDBC;
import org.zrm.replica.ReplicaLayout;

/** A replica file as the backup-mode replicator leaves it: the §5.1 metadata tables (written by the layout), WAL journal. */
final class TestReplica {

    private TestReplica() {}

    /** Opens read-write, creating the file: the replicator's side, never the monitor's. */
    static Connection openWriter(Path file) throws SQLException {
        Connection c = JDBC.createConnection("jdbc:sqlite:" + file, new Properties());
        try (Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 5000");
        }
        return c;
    }

    /** Creates a completed replica at {@code stateVersion} in WAL mode. */
    static void create(Path file, String stateVersion) throws SQLException {
        try (Connection c = openWriter(file); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("PRAGMA journal_mode = WAL")) {
                rs.next();
                if (!"wal".equalsIgnoreCase(rs.getString(1))) {
                    throw new IllegalStateException("not WAL: " + rs.getString(1));
                }
            }
            // The layout's own writer (org.zrm.replica), as the initial sync and the replicator use it.
            ReplicaLayout.createVersionHistoryTable(c);
            ReplicaLayout.initReplicationState(c, List.of("_zero_public_0"), stateVersion, "{}");
            ReplicaLayout.writeVersionHistory(c);
        }
    }

    /** Advances the watermark as the replicator does (in the caller's transaction, if any). */
    static void setStateVersion(Connection c, String stateVersion) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE \"_zero.replicationState\""
                + " SET stateVersion = ?, writeTimeMs = unixepoch('subsec') * 1000")) {
            ps.setString(1, stateVersion);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("no replicationState row");
            }
        }
    }

    static void setStateVersion(Path file, String stateVersion) throws SQLException {
        try (Connection c = openWriter(file)) {
            setStateVersion(c, stateVersion);
        }
    }

    /** Runs arbitrary SQL against the file (to break it in controlled ways). */
    static void exec(Path file, String sql) throws SQLException {
        try (Connection c = openWriter(file); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}

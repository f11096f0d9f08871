package org.zrm.backup.litestream3.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/** A SQLite replica file in WAL mode with Zero's {@code _zero.replicationState} (spec §5.1). */
final class TestReplica {

    private TestReplica() {
    }

    static Connection open(Path file) throws SQLException {
        return org.sqlite.JDBC.createConnection("jdbc:sqlite:" + file.toAbsolutePath(), new Properties());
    }

    /** Creates the replica with the given state; {@code writeTimeMs} may be null. */
    static void create(Path file, String stateVersion, Long writeTimeMs) throws SQLException {
        try (Connection c = open(file); Statement st = c.createStatement()) {
            st.execute("PRAGMA journal_mode = WAL");
            st.execute("CREATE TABLE \"_zero.replicationConfig\" (replicaVersion TEXT NOT NULL,"
                    + " publications TEXT NOT NULL, initialSyncContext TEXT DEFAULT '{}',"
                    + " lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1))");
            st.execute("CREATE TABLE \"_zero.replicationState\" (stateVersion TEXT NOT NULL, writeTimeMs INTEGER,"
                    + " lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1))");
            st.execute("INSERT INTO \"_zero.replicationConfig\" (replicaVersion, publications) VALUES ('123', '[]')");
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO \"_zero.replicationState\" (stateVersion, writeTimeMs) VALUES (?, ?)")) {
                ps.setString(1, stateVersion);
                if (writeTimeMs == null) {
                    ps.setNull(2, java.sql.Types.INTEGER);
                } else {
                    ps.setLong(2, writeTimeMs);
                }
                ps.executeUpdate();
            }
        }
    }

    static void update(Path file, String stateVersion, long writeTimeMs) throws SQLException {
        try (Connection c = open(file);
                PreparedStatement ps = c.prepareStatement(
                        "UPDATE \"_zero.replicationState\" SET stateVersion = ?, writeTimeMs = ?")) {
            ps.setString(1, stateVersion);
            ps.setLong(2, writeTimeMs);
            ps.executeUpdate();
        }
    }
}

package org.zrm.backup.replica.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.sqlite.JDBC;

/** A replica file as the backup-mode replicator leaves it: the §5.1 metadata tables, WAL journal. */
final class TestReplica {

    /** The replication-state tables of spec §5.1 ({@code createReplicationStateTables} + migration runner). */
    static final String DDL = """
            CREATE TABLE "_zero.replicationConfig" (
              replicaVersion TEXT NOT NULL,
              publications TEXT NOT NULL,
              initialSyncContext TEXT DEFAULT '{}',
              lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1)
            );
            CREATE TABLE "_zero.replicationState" (
              stateVersion TEXT NOT NULL,
              writeTimeMs INTEGER,
              lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1)
            );
            CREATE TABLE "_zero.changeLog2" (
              "stateVersion"              TEXT NOT NULL,
              "pos"                       INT  NOT NULL,
              "table"                     TEXT NOT NULL,
              "rowKey"                    TEXT NOT NULL,
              "op"                        TEXT NOT NULL,
              "backfillingColumnVersions" TEXT DEFAULT '{}',
              PRIMARY KEY("stateVersion", "pos"),
              UNIQUE("table", "rowKey")
            );
            CREATE TABLE "_zero.runtimeEvents" (
              event TEXT PRIMARY KEY ON CONFLICT REPLACE,
              timestamp TEXT NOT NULL DEFAULT (current_timestamp)
            );
            CREATE TABLE IF NOT EXISTS "_zero.versionHistory" (
              dataVersion INTEGER NOT NULL,
              schemaVersion INTEGER NOT NULL,
              minSafeVersion INTEGER NOT NULL,
              lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1)
            );
            """;

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
            for (String ddl : DDL.split(";")) {
                if (!ddl.isBlank()) {
                    st.execute(ddl);
                }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO \"_zero.replicationConfig\""
                    + " (replicaVersion, publications) VALUES (?, '[\"_zero_public_0\"]')")) {
                ps.setString(1, stateVersion);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO \"_zero.replicationState\""
                    + " (stateVersion, writeTimeMs) VALUES (?, unixepoch('subsec') * 1000)")) {
                ps.setString(1, stateVersion);
                ps.executeUpdate();
            }
            st.execute("INSERT INTO \"_zero.versionHistory\" (dataVersion, schemaVersion, minSafeVersion)"
                    + " VALUES (13, 13, 1)");
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

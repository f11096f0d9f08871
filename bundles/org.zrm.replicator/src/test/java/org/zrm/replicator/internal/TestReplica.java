package org.zrm.replicator.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Creates replica files laid out as the change source's initial sync writes them (same DDL as
 * {@code LiteReplicaSchema}), with one table {@code issue(id text key, title, n int8, done bool,
 * meta jsonb, tags text[])}.
 */
final class TestReplica {

    static final String REPLICATION_TABLES = """
            CREATE TABLE "_zero.versionHistory" (dataVersion INTEGER NOT NULL, schemaVersion INTEGER NOT NULL,
              minSafeVersion INTEGER NOT NULL, lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1));
            CREATE TABLE "_zero.replicationConfig" (replicaVersion TEXT NOT NULL, publications TEXT NOT NULL,
              initialSyncContext TEXT DEFAULT '{}', lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1));
            CREATE TABLE "_zero.replicationState" (stateVersion TEXT NOT NULL, writeTimeMs INTEGER,
              lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1));
            CREATE TABLE "_zero.changeLog2" ("stateVersion" TEXT NOT NULL, "pos" INT NOT NULL, "table" TEXT NOT NULL,
              "rowKey" TEXT NOT NULL, "op" TEXT NOT NULL, "backfillingColumnVersions" TEXT DEFAULT '{}',
              PRIMARY KEY("stateVersion", "pos"), UNIQUE("table", "rowKey"));
            CREATE TABLE "_zero.runtimeEvents" (event TEXT PRIMARY KEY ON CONFLICT REPLACE,
              timestamp TEXT NOT NULL DEFAULT (current_timestamp));
            CREATE TABLE "_zero.column_metadata" (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
              upstream_type TEXT NOT NULL, is_not_null INTEGER NOT NULL, is_enum INTEGER NOT NULL,
              is_array INTEGER NOT NULL, character_max_length INTEGER, backfill TEXT, PRIMARY KEY (table_name, column_name));
            CREATE TABLE "_zero.tableMetadata" ("schema" TEXT NOT NULL, "table" TEXT NOT NULL,
              "minRowVersion" TEXT NOT NULL DEFAULT "00", "upstreamMetadata" TEXT, "metadata" TEXT,
              PRIMARY KEY ("schema", "table"))
            """;

    private TestReplica() {}

    /** Writes a complete replica at {@code replicaVersion} (via a temp file renamed into place, as the sync does). */
    static void create(Path file, String replicaVersion) throws Exception {
        Path temp = file.resolveSibling(file.getFileName() + ".initial-sync");
        Files.deleteIfExists(temp);
        try (Connection c = open(temp); Statement st = c.createStatement()) {
            st.execute("BEGIN");
            for (String sql : REPLICATION_TABLES.split(";\n")) {
                st.execute(sql);
            }
            st.execute("INSERT INTO \"_zero.replicationConfig\" (replicaVersion, publications) VALUES ('"
                    + replicaVersion + "', '[\"_zero_public_0\"]')");
            st.execute("INSERT INTO \"_zero.replicationState\" (stateVersion, writeTimeMs) VALUES ('" + replicaVersion
                    + "', unixepoch('subsec') * 1000)");
            st.execute("CREATE TABLE \"issue\" (\n\"id\" \"text|NOT_NULL\",\n\"title\" \"varchar\",\n\"n\" \"int8\",\n"
                    + "\"done\" \"bool\",\n\"meta\" \"jsonb\",\n\"tags\" \"text[]|TEXT_ARRAY\",\n\"_0_version\" \"text\" DEFAULT '"
                    + replicaVersion + "'\n);");
            st.execute("INSERT INTO \"_zero.column_metadata\" VALUES ('issue','id','text',1,0,0,NULL,NULL),"
                    + "('issue','title','varchar',0,0,0,NULL,NULL),('issue','n','int8',0,0,0,NULL,NULL),"
                    + "('issue','done','bool',0,0,0,NULL,NULL),('issue','meta','jsonb',0,0,0,NULL,NULL),"
                    + "('issue','tags','text[]',0,0,1,NULL,NULL)");
            st.execute("CREATE UNIQUE INDEX \"issue_pkey\" ON \"issue\" (\"id\" ASC);");
            st.execute("INSERT INTO \"_zero.versionHistory\" (dataVersion, schemaVersion, minSafeVersion) VALUES (13, 13, 1)");
            st.execute("COMMIT");
        }
        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static Connection open(Path file) throws SQLException {
        return new org.sqlite.JDBC().connect("jdbc:sqlite:" + file.toAbsolutePath(), new Properties());
    }

    static String stateVersion(Connection c) throws SQLException {
        return scalar(c, "SELECT stateVersion FROM \"_zero.replicationState\"");
    }

    static String scalar(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** All rows of a query as ordered maps of column label to value. */
    static List<Map<String, Object>> rows(Connection c, String sql) throws SQLException {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 1; i <= n; i++) {
                    row.put(rs.getMetaData().getColumnLabel(i), rs.getObject(i));
                }
                out.add(row);
            }
        }
        return out;
    }
}

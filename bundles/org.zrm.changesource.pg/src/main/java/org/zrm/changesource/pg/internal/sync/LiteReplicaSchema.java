package org.zrm.changesource.pg.internal.sync;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedIndex;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteNames;
import org.zrm.replica.LiteTypes;

/**
 * The SQLite replica layout (spec §6.3, backup-monitors §5.1–5.2): the {@code _zero.*} replication
 * tables at replica schema version {@value #REPLICA_SCHEMA_VERSION}, and data tables, column
 * metadata and indexes created from the published schema. Statement texts match zero-cache's, so
 * {@code sqlite_master} and column affinities are identical. The conventions the replicator shares
 * (types, names, reading the replication state) live in {@code org.zrm.replica}.
 */
public final class LiteReplicaSchema {

    /** {@code CURRENT_SCHEMA_VERSION} of zero-cache's replica migrations. */
    public static final int REPLICA_SCHEMA_VERSION = 13;

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    // The statement texts below are zero-cache's byte for byte (indentation, blank line and the
    // "-- deprecated" comment included): SQLite keeps them verbatim in sqlite_master, and a replica
    // ZRM writes should be indistinguishable from one zero-cache writes (checked against zero-cache
    // 1.8.0 by integration-tests/compat/zero-cache-upstream.sh).
    static final String CREATE_REPLICATION_TABLES = """
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
            CREATE TABLE "_zero.column_metadata" (
                table_name TEXT NOT NULL,
                column_name TEXT NOT NULL,
                upstream_type TEXT NOT NULL,
                is_not_null INTEGER NOT NULL,
                is_enum INTEGER NOT NULL,
                is_array INTEGER NOT NULL,
                character_max_length INTEGER,
                backfill TEXT,
                PRIMARY KEY (table_name, column_name)
              );
            CREATE TABLE "_zero.tableMetadata" (
                "schema"           TEXT NOT NULL,
                "table"            TEXT NOT NULL,
                "minRowVersion"    TEXT NOT NULL DEFAULT "00",
                "upstreamMetadata" TEXT,
                "metadata"         TEXT,  -- deprecated
                PRIMARY KEY ("schema", "table")
              );
            """;

    static final String CREATE_VERSION_HISTORY = """
            CREATE TABLE IF NOT EXISTS "_zero.versionHistory" (
                  dataVersion INTEGER NOT NULL,
                  schemaVersion INTEGER NOT NULL,
                  minSafeVersion INTEGER NOT NULL,

                  lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1)
                );
            """;

    private LiteReplicaSchema() {}

    /** Creates the replication tables and writes config, state and the {@code sync} event. */
    static void initReplicationState(Connection lite, List<String> sortedPublications, String replicaVersion,
            String initialSyncContextJson) throws SQLException {
        try (Statement st = lite.createStatement()) {
            for (String sql : CREATE_REPLICATION_TABLES.split(";\n")) {
                if (!sql.isBlank()) {
                    st.execute(sql);
                }
            }
        }
        try (PreparedStatement ps = lite.prepareStatement("INSERT INTO \"_zero.replicationConfig\" "
                + "(replicaVersion, publications, initialSyncContext) VALUES (?, ?, ?)")) {
            ps.setString(1, replicaVersion);
            ps.setString(2, CODEC.encodeValue(sortedPublications));
            ps.setString(3, initialSyncContextJson);
            ps.execute();
        }
        try (PreparedStatement ps = lite.prepareStatement("INSERT INTO \"_zero.replicationState\" "
                + "(stateVersion, writeTimeMs) VALUES (?, unixepoch('subsec') * 1000)")) {
            ps.setString(1, replicaVersion);
            ps.execute();
        }
        try (Statement st = lite.createStatement()) {
            st.execute("INSERT INTO \"_zero.runtimeEvents\" (event) VALUES ('sync')");
        }
    }

    /**
     * Creates the empty {@code _zero.versionHistory} table first, as zero-cache's migration runner
     * does before its setup step, so that {@code sqlite_master} lists the objects in zero-cache's
     * order. Without a row the file still reads as incomplete
     * ({@link org.zrm.replica.ReplicaStateReader#read} returns empty).
     */
    static void createVersionHistoryTable(Connection lite) throws SQLException {
        try (Statement st = lite.createStatement()) {
            st.execute(CREATE_VERSION_HISTORY);
        }
    }

    /** Writes {@code _zero.versionHistory} = {@value #REPLICA_SCHEMA_VERSION} (as the lite migration runner). */
    static void writeVersionHistory(Connection lite) throws SQLException {
        try (Statement st = lite.createStatement()) {
            st.execute(CREATE_VERSION_HISTORY);
            st.execute("INSERT INTO \"_zero.versionHistory\" (dataVersion, schemaVersion, minSafeVersion) VALUES ("
                    + REPLICA_SCHEMA_VERSION + ", " + REPLICA_SCHEMA_VERSION + ", 1) ON CONFLICT (lock) DO UPDATE SET "
                    + "dataVersion = excluded.dataVersion, schemaVersion = excluded.schemaVersion");
        }
    }

    /** The lite type string of a published column. */
    public static String liteType(PublishedColumn c) {
        return LiteTypes.forColumn(c.dataType(), c.notNull(), c.pgTypeClass(), c.elemPgTypeClass());
    }

    /** {@code CREATE TABLE} for a published table at initial sync. */
    public static String createTableStatement(PublishedTable t, String initialVersion) {
        List<String> defs = new ArrayList<>();
        for (PublishedColumn c : t.columnsByPos()) {
            defs.add(LiteNames.quote(c.name()) + " " + LiteNames.quote(liteType(c)));
        }
        defs.add(LiteNames.quote(LiteNames.ZERO_VERSION_COLUMN) + " " + LiteNames.quote("text") + " DEFAULT '"
                + initialVersion + "'");
        return "CREATE TABLE " + LiteNames.quote(t.liteTableName()) + " (\n" + String.join(",\n", defs) + "\n);";
    }

    /** {@code CREATE [UNIQUE] INDEX} for a published index. */
    public static String createIndexStatement(PublishedIndex idx) {
        return LiteNames.createIndexStatement(LiteNames.tableName(idx.schema(), idx.name()),
                LiteNames.tableName(idx.schema(), idx.tableName()), idx.unique(), idx.columns());
    }

    /** Creates each table and its {@code _zero.column_metadata} rows. */
    static void createTables(Connection lite, PublishedSchema schema, String initialVersion) throws SQLException {
        try (Statement st = lite.createStatement();
                PreparedStatement meta = lite.prepareStatement("INSERT INTO \"_zero.column_metadata\" (table_name, "
                        + "column_name, upstream_type, is_not_null, is_enum, is_array, character_max_length) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            for (PublishedTable t : schema.tables()) {
                st.execute(createTableStatement(t, initialVersion));
                for (PublishedColumn c : t.columnsByPos()) {
                    meta.setString(1, t.liteTableName());
                    meta.setString(2, c.name());
                    meta.setString(3, c.dataType());
                    meta.setInt(4, c.notNull() ? 1 : 0);
                    meta.setInt(5, LiteTypes.isEnumColumn(c.pgTypeClass(), c.elemPgTypeClass()) ? 1 : 0);
                    meta.setInt(6, c.elemPgTypeClass() != null ? 1 : 0);
                    if (c.characterMaximumLength() == null) {
                        meta.setNull(7, java.sql.Types.INTEGER);
                    } else {
                        meta.setLong(7, c.characterMaximumLength());
                    }
                    meta.addBatch();
                }
            }
            meta.executeBatch();
        }
    }

    static void createIndexes(Connection lite, PublishedSchema schema) throws SQLException {
        try (Statement st = lite.createStatement()) {
            for (PublishedIndex idx : schema.indexes()) {
                st.execute(createIndexStatement(idx));
            }
        }
    }
}

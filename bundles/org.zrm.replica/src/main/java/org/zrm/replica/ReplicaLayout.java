package org.zrm.replica;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.TableSpec;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The statements that create Zero's SQLite replica: the {@code _zero.*} metadata tables at replica
 * schema version {@value #SCHEMA_VERSION} with their initial rows, and the data tables, indexes and
 * added columns of the replicated schema.
 *
 * <p>SQLite keeps every {@code CREATE} statement verbatim in {@code sqlite_master}, and zero-cache
 * reads a replica ZRM writes (and the reverse), so the texts here are zero-cache 1.8.0's byte for
 * byte: indentation, the blank line and the {@code -- deprecated} comment included. This class is
 * the only place that spells them; the initial sync and the replicator both create tables, indexes
 * and columns through it. The row writes that accompany the DDL ({@code _zero.column_metadata},
 * {@code _zero.tableMetadata}, the watermark) are {@link ReplicaMetadataStore}'s; the reads are
 * {@link ReplicaStateReader}'s.
 *
 * <p>Stateless and thread-safe; the executing methods run on the caller's connection, inside the
 * caller's transaction.
 */
public final class ReplicaLayout {

    /** {@code CURRENT_SCHEMA_VERSION} of zero-cache's replica migrations, written to {@code _zero.versionHistory}. */
    public static final int SCHEMA_VERSION = 13;

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    // zero-cache's texts, byte for byte (checked against zero-cache 1.8.0 by
    // integration-tests/compat/zero-cache-upstream.sh and pinned by ReplicaLayoutPinPgTest).
    private static final String CREATE_REPLICATION_TABLES = """
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

    private static final String CREATE_VERSION_HISTORY = """
            CREATE TABLE IF NOT EXISTS "_zero.versionHistory" (
                  dataVersion INTEGER NOT NULL,
                  schemaVersion INTEGER NOT NULL,
                  minSafeVersion INTEGER NOT NULL,

                  lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1)
                );
            """;

    private ReplicaLayout() {}

    // ---- the _zero.* tables ----

    /**
     * Creates the empty {@code _zero.versionHistory} table. zero-cache's migration runner creates
     * it before its setup step, so a sync that calls this first lists the objects in
     * {@code sqlite_master} in zero-cache's order. Without its row the file still reads as
     * incomplete ({@link ReplicaStateReader#read} returns empty).
     *
     * @param replica the new replica
     * @throws SQLException if SQLite fails
     */
    public static void createVersionHistoryTable(Connection replica) throws SQLException {
        try (Statement st = replica.createStatement()) {
            st.execute(CREATE_VERSION_HISTORY);
        }
    }

    /**
     * Creates the replication tables ({@code replicationConfig}, {@code replicationState},
     * {@code changeLog2}, {@code runtimeEvents}, {@code column_metadata}, {@code tableMetadata})
     * and writes the config row, the state row at {@code replicaVersion} and the {@code sync}
     * runtime event (upstream {@code initReplicationState}).
     *
     * @param replica the new replica, without these tables
     * @param sortedPublications the publications, sorted; stored as a JSON array
     * @param replicaVersion the initial sync's watermark
     * @param initialSyncContextJson the server context, a JSON object text
     * @throws SQLException if SQLite fails (for example because the tables exist)
     */
    public static void initReplicationState(Connection replica, List<String> sortedPublications, String replicaVersion,
            String initialSyncContextJson) throws SQLException {
        try (Statement st = replica.createStatement()) {
            for (String sql : CREATE_REPLICATION_TABLES.split(";\n")) {
                if (!sql.isBlank()) {
                    st.execute(sql);
                }
            }
        }
        try (PreparedStatement ps = replica.prepareStatement("INSERT INTO \"_zero.replicationConfig\" "
                + "(replicaVersion, publications, initialSyncContext) VALUES (?, ?, ?)")) {
            ps.setString(1, replicaVersion);
            ps.setString(2, CODEC.encodeValue(sortedPublications));
            ps.setString(3, initialSyncContextJson);
            ps.execute();
        }
        try (PreparedStatement ps = replica.prepareStatement("INSERT INTO \"_zero.replicationState\" "
                + "(stateVersion, writeTimeMs) VALUES (?, unixepoch('subsec') * 1000)")) {
            ps.setString(1, replicaVersion);
            ps.execute();
        }
        try (Statement st = replica.createStatement()) {
            st.execute("INSERT INTO \"_zero.runtimeEvents\" (event) VALUES ('sync')");
        }
    }

    /**
     * Writes {@code _zero.versionHistory} = {@value #SCHEMA_VERSION}, creating the table if needed,
     * as zero-cache's migration runner does last. A sync calls this at the very end: the row is what
     * makes the file read as a completed replica.
     *
     * @param replica the replica
     * @throws SQLException if SQLite fails
     */
    public static void writeVersionHistory(Connection replica) throws SQLException {
        try (Statement st = replica.createStatement()) {
            st.execute(CREATE_VERSION_HISTORY);
            st.execute("INSERT INTO \"_zero.versionHistory\" (dataVersion, schemaVersion, minSafeVersion) VALUES ("
                    + SCHEMA_VERSION + ", " + SCHEMA_VERSION + ", 1) ON CONFLICT (lock) DO UPDATE SET "
                    + "dataVersion = excluded.dataVersion, schemaVersion = excluded.schemaVersion");
        }
    }

    // ---- data tables ----

    /**
     * {@code CREATE TABLE} for a replicated table (upstream {@code mapPostgresToLite} +
     * {@code createLiteTableStatement}): the columns in {@code pos} order, each with its quoted
     * lite type string ({@link LiteTypes#forColumn(ColumnSpec)}) and nothing else, then
     * {@code "_0_version" "text"}. No NOT NULL, no PRIMARY KEY (the replica relies on the unique
     * indexes, the upstream primary key's included) and no column defaults (a new table has no rows
     * to fill).
     *
     * <p>{@code _0_version} gets a default only when {@code zeroVersionDefault} is given, and the
     * two callers differ on purpose, as upstream's do: the initial sync passes its replica version,
     * so that rows it copies without naming the column are stamped with the snapshot's version;
     * the replicator's {@code create-table} passes {@code null}, since every row it writes sets
     * {@code _0_version} explicitly. The difference is visible in {@code sqlite_master} (and in
     * {@code pragma_table_info.dflt_value}), which is why it is kept.
     *
     * @param spec the upstream table
     * @param zeroVersionDefault the default of {@code _0_version}, or {@code null} for none
     * @return the statement, ending in {@code );}
     * @throws IllegalArgumentException if a data type contains {@code |}
     */
    public static String createTableStatement(TableSpec spec, String zeroVersionDefault) {
        List<String> defs = new ArrayList<>();
        for (Map.Entry<String, ColumnSpec> e : columnsByPos(spec)) {
            defs.add(LiteNames.quote(e.getKey()) + " " + LiteNames.quote(LiteTypes.forColumn(e.getValue())));
        }
        defs.add(LiteNames.quote(LiteNames.ZERO_VERSION_COLUMN) + " " + LiteNames.quote("text")
                + (zeroVersionDefault == null || zeroVersionDefault.isEmpty() ? "" : " DEFAULT '" + zeroVersionDefault + "'"));
        return "CREATE TABLE " + LiteNames.quote(liteTableName(spec)) + " (\n" + String.join(",\n", defs) + "\n);";
    }

    /**
     * The columns of a table in {@code pos} order (ties keep map order).
     *
     * @param spec the table
     * @return the entries, a new list
     */
    public static List<Map.Entry<String, ColumnSpec>> columnsByPos(TableSpec spec) {
        List<Map.Entry<String, ColumnSpec>> cols = new ArrayList<>(spec.columns().entrySet());
        cols.sort(Comparator.comparingLong(e -> e.getValue().pos()));
        return cols;
    }

    /**
     * The replica name of a table ({@link LiteNames#tableName}).
     *
     * @param spec the table
     * @return the lite table name
     */
    public static String liteTableName(TableSpec spec) {
        return LiteNames.tableName(spec.schema(), spec.name());
    }

    /**
     * {@code CREATE [UNIQUE] INDEX} for a replicated index (upstream {@code mapPostgresToLiteIndex}
     * + {@code createLiteIndexStatement}): index and table names mapped as tables are.
     *
     * @param spec the upstream index
     * @return the statement, ending in {@code ;}
     */
    public static String createIndexStatement(IndexSpec spec) {
        Map<String, String> cols = new LinkedHashMap<>();
        spec.columns().forEach((c, dir) -> cols.put(c, dir.wire()));
        return LiteNames.createIndexStatement(LiteNames.tableName(spec.schema(), spec.name()),
                LiteNames.tableName(spec.schema(), spec.tableName()), spec.unique(), cols);
    }

    /**
     * {@code ALTER TABLE … ADD} for a column added upstream (upstream {@code processAddColumn}):
     * the quoted lite type string and, unlike {@code CREATE TABLE}, the column's default mapped to
     * SQLite ({@link LiteDefaults}), because the table may already hold rows that must get it.
     *
     * @param liteTable the replica table
     * @param column the column name
     * @param spec the column
     * @return the statement
     * @throws UnsupportedColumnDefaultException if SQLite cannot reproduce the default; the change
     *     source sends such columns without a default and backfills them instead
     */
    public static String addColumnStatement(String liteTable, String column, ColumnSpec spec) {
        String dflt = LiteDefaults.mapPostgresToLiteDefault(liteTable, column, spec.dflt().value());
        return "ALTER TABLE " + LiteNames.quote(liteTable) + " ADD " + LiteNames.quote(column) + " "
                + LiteNames.quote(LiteTypes.forColumn(spec)) + (dflt == null ? "" : " DEFAULT " + dflt);
    }

    /**
     * Creates a table and its {@code _zero.column_metadata} rows.
     *
     * @param replica the replica, inside the caller's transaction
     * @param metadata the metadata store of that connection
     * @param spec the upstream table
     * @param zeroVersionDefault see {@link #createTableStatement}
     * @param backfill column name to backfill id for columns created hidden until
     *     backfilled; empty for none
     * @throws SQLException if SQLite fails (for example because the table exists)
     */
    public static void createTable(Connection replica, ReplicaMetadataStore metadata, TableSpec spec,
            String zeroVersionDefault, Map<String, BackfillId> backfill) throws SQLException {
        try (Statement st = replica.createStatement()) {
            st.execute(createTableStatement(spec, zeroVersionDefault));
        }
        String table = liteTableName(spec);
        for (Map.Entry<String, ColumnSpec> e : columnsByPos(spec)) {
            metadata.insertColumn(table, e.getKey(), e.getValue(), backfill.get(e.getKey()));
        }
    }

    /**
     * Creates an index.
     *
     * @param replica the replica
     * @param spec the upstream index
     * @throws SQLException if SQLite fails
     */
    public static void createIndex(Connection replica, IndexSpec spec) throws SQLException {
        try (Statement st = replica.createStatement()) {
            st.execute(createIndexStatement(spec));
        }
    }
}

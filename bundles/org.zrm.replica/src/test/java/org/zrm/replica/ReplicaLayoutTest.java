package org.zrm.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.IndexDirection;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.TableMetadata;
import org.zrm.protocol.TableSpec;

/**
 * {@link ReplicaLayout}, {@link ReplicaMetadataStore} and {@link ReplicaStateReader} on a real SQLite
 * file. The full initial-sync output is pinned by the change source's {@code ReplicaLayoutPinPgTest};
 * the replicator's {@code SchemaChangePropertyTest} checks that schema changes keep to this layout.
 */
class ReplicaLayoutTest {

    @TempDir
    Path dir;

    Connection db;

    @BeforeEach
    void open() throws SQLException {
        db = new org.sqlite.JDBC().connect("jdbc:sqlite:" + dir.resolve("replica.db"), new Properties());
    }

    @AfterEach
    void close() throws SQLException {
        db.close();
    }

    static ColumnSpec column(long pos, String type, boolean notNull, PgTypeClass cls, PgTypeClass elem, Long maxLen,
            String dflt) {
        return new ColumnSpec(pos, type, cls, Maybe.ofNullable(elem), Maybe.ofNullable(maxLen), Maybe.of(notNull),
                Maybe.ofNullable(dflt), Passthrough.NONE);
    }

    static TableSpec table(String schema, String name, Object... cols) {
        Map<String, ColumnSpec> m = new LinkedHashMap<>();
        for (int i = 0; i < cols.length; i += 2) {
            m.put((String) cols[i], (ColumnSpec) cols[i + 1]);
        }
        return new TableSpec(schema, name, m, List.of(), Passthrough.NONE);
    }

    private static final TableSpec ITEMS = table("other", "it\"ems",
            // deliberately not in pos order: the statement orders by pos
            "tags", column(3, "mood[]", false, PgTypeClass.BASE, PgTypeClass.ENUM, null, null),
            "id", column(1, "int8", true, PgTypeClass.BASE, null, null, "nextval('s')"),
            "name", column(2, "varchar", false, PgTypeClass.BASE, null, 40L, "'x'::text"));

    @Test
    void createTableStatement_initialSyncGivesZeroVersionADefault_replicatorDoesNot() {
        assertEquals("CREATE TABLE \"other.it\"\"ems\" (\n\"id\" \"int8|NOT_NULL\",\n\"name\" \"varchar\",\n"
                + "\"tags\" \"mood[]|TEXT_ENUM|TEXT_ARRAY\",\n\"_0_version\" \"text\" DEFAULT '0a'\n);",
                ReplicaLayout.createTableStatement(ITEMS, "0a"));
        assertEquals("CREATE TABLE \"other.it\"\"ems\" (\n\"id\" \"int8|NOT_NULL\",\n\"name\" \"varchar\",\n"
                + "\"tags\" \"mood[]|TEXT_ENUM|TEXT_ARRAY\",\n\"_0_version\" \"text\"\n);",
                ReplicaLayout.createTableStatement(ITEMS, null));
        assertEquals(ReplicaLayout.createTableStatement(ITEMS, null), ReplicaLayout.createTableStatement(ITEMS, ""));
    }

    @Test
    void createIndexStatement_mapsNamesLikeTables() {
        Map<String, IndexDirection> cols = new LinkedHashMap<>();
        cols.put("name", IndexDirection.DESC);
        cols.put("id", IndexDirection.ASC);
        assertEquals("CREATE UNIQUE INDEX \"other.items_key\" ON \"other.items\" (\"name\" DESC,\"id\" ASC);",
                ReplicaLayout.createIndexStatement(new IndexSpec("other", "items", "items_key", true, cols,
                        Passthrough.NONE)));
        assertEquals("CREATE  INDEX \"items_name\" ON \"items\" (\"name\" DESC,\"id\" ASC);",
                ReplicaLayout.createIndexStatement(new IndexSpec("public", "items", "items_name", false, cols,
                        Passthrough.NONE)));
    }

    @Test
    void addColumnStatement_mapsTheDefault_orRefusesOneSqliteCannotReproduce() {
        assertEquals("ALTER TABLE \"t\" ADD \"b\" \"bool|NOT_NULL\" DEFAULT 1", ReplicaLayout.addColumnStatement("t", "b",
                column(2, "bool", true, PgTypeClass.BASE, null, null, "true")));
        assertEquals("ALTER TABLE \"t\" ADD \"s\" \"text\" DEFAULT 'a''b'", ReplicaLayout.addColumnStatement("t", "s",
                column(2, "text", false, PgTypeClass.BASE, null, null, "'a''b'::text")));
        assertEquals("ALTER TABLE \"t\" ADD \"n\" \"int4\"", ReplicaLayout.addColumnStatement("t", "n",
                column(2, "int4", false, PgTypeClass.BASE, null, null, null)));
        UnsupportedColumnDefaultException e = assertThrows(UnsupportedColumnDefaultException.class,
                () -> ReplicaLayout.addColumnStatement("t", "ts",
                        column(2, "timestamptz", false, PgTypeClass.BASE, null, null, "now()")));
        assertEquals("Unsupported default value for t.ts: now()", e.getMessage());
    }

    @Test
    void aReplicaIsCompleteOnlyOnceTheVersionHistoryRowIsWritten() throws SQLException {
        ReplicaLayout.createVersionHistoryTable(db);
        ReplicaLayout.initReplicationState(db, List.of("a", "b"), "0a", "{\"taskID\":\"t\"}");
        assertTrue(ReplicaStateReader.read(db).isEmpty(), "no version-history row yet");
        ReplicaLayout.writeVersionHistory(db);
        ReplicaState s = ReplicaStateReader.read(db).orElseThrow();
        assertEquals(new ReplicaState(ReplicaLayout.SCHEMA_VERSION, "0a", List.of("a", "b"), "0a", Map.of("taskID", "t")), s);
        assertEquals(List.of("sync"), column("SELECT event FROM \"_zero.runtimeEvents\""));
        ReplicationStateRow row = ReplicaStateReader.replicationState(db).orElseThrow();
        assertEquals("0a", row.stateVersion());
        assertEquals("text", row.stateVersionStorageClass());
        assertTrue(row.writeTimeMs().isPresent());
    }

    @Test
    void createTableWritesColumnMetadataWithBackfillMarkers() throws SQLException {
        ReplicaLayout.initReplicationState(db, List.of(), "01", "{}");
        ReplicaMetadataStore store = new ReplicaMetadataStore(db);
        ReplicaLayout.createTable(db, store, ITEMS, null,
                Map.of("name", new BackfillId(Map.of("attNum", 2L))));
        assertEquals(List.of("other.it\"ems|id|int8|1|0|0|NULL|NULL", "other.it\"ems|name|varchar|0|0|0|40|'{\"attNum\":2}'",
                "other.it\"ems|tags|mood[]|0|1|1|NULL|NULL"), metadataRows());
        assertEquals(List.of("id", "name", "tags", "_0_version"),
                column("SELECT name FROM pragma_table_info('other.it\"ems') ORDER BY cid"));
        assertEquals(java.util.Arrays.asList((Object) null),
                column("SELECT dflt_value FROM pragma_table_info('other.it\"ems') WHERE name = '_0_version'"));
    }

    @Test
    void columnMetadataFollowsRenamesUpdatesAndDrops() throws SQLException {
        ReplicaLayout.initReplicationState(db, List.of(), "01", "{}");
        ReplicaMetadataStore store = new ReplicaMetadataStore(db);
        ReplicaLayout.createTable(db, store, ITEMS, "01", Map.of("name", new BackfillId(Map.of("attNum", 2L))));
        store.updateColumn("other.it\"ems", "name", "title", column(2, "text", true, PgTypeClass.BASE, null, null, null));
        store.renameTableColumns("other.it\"ems", "other.things");
        assertEquals(List.of("other.things|id|int8|1|0|0|NULL|NULL", "other.things|tags|mood[]|0|1|1|NULL|NULL",
                "other.things|title|text|1|0|0|NULL|'{\"attNum\":2}'"), metadataRows(), "backfill kept by update");
        store.clearBackfilling("other.things", "title");
        store.deleteColumn("other.things", "tags");
        assertEquals(List.of("other.things|id|int8|1|0|0|NULL|NULL", "other.things|title|text|1|0|0|NULL|NULL"),
                metadataRows());
        store.deleteTableColumns("other.things");
        assertEquals(List.of(), metadataRows());
    }

    @Test
    void tableMetadataUpsertsRenamesAndDrops() throws SQLException {
        ReplicaLayout.initReplicationState(db, List.of(), "01", "{}");
        ReplicaMetadataStore store = new ReplicaMetadataStore(db);
        Map<String, Object> rowKey = new LinkedHashMap<>();
        rowKey.put("z", Map.of("attNum", 2L));
        rowKey.put("a", Map.of("attNum", 1L));
        store.setMinRowVersion("public", "t", "0b");
        store.setUpstreamMetadata("public", "t", new TableMetadata(rowKey, Passthrough.NONE));
        store.setMinRowVersion("public", "t", "0c");
        assertEquals(List.of("public|t|0c|{\"rowKey\":{\"z\":{\"attNum\":2},\"a\":{\"attNum\":1}}}"), tableMetadataRows(),
                "member order kept, both upserts keep the other column");
        store.renameTable("public", "t", "s", "u");
        assertEquals(List.of("s|u|0c|{\"rowKey\":{\"z\":{\"attNum\":2},\"a\":{\"attNum\":1}}}"), tableMetadataRows());
        store.setUpstreamMetadata("s", "v", new TableMetadata(Map.of(), Passthrough.NONE));
        assertEquals(List.of("s|u|0c|{\"rowKey\":{\"z\":{\"attNum\":2},\"a\":{\"attNum\":1}}}", "s|v|00|{\"rowKey\":{}}"),
                tableMetadataRows(), "a new row gets zero-cache's minRowVersion default");
        store.dropTable("s", "u");
        assertEquals(List.of("s|v|00|{\"rowKey\":{}}"), tableMetadataRows());
    }

    @Test
    void watermarkUpdateNeedsTheStateRow() throws SQLException {
        ReplicaLayout.initReplicationState(db, List.of(), "01", "{}");
        ReplicaMetadataStore store = new ReplicaMetadataStore(db);
        store.updateWatermark("0f");
        assertEquals("0f", ReplicaStateReader.replicationState(db).orElseThrow().stateVersion());
        try (Statement st = db.createStatement()) {
            st.execute("DELETE FROM \"_zero.replicationState\"");
        }
        assertTrue(ReplicaStateReader.replicationState(db).isEmpty());
        SQLException e = assertThrows(SQLException.class, () -> store.updateWatermark("10"));
        assertEquals("_zero.replicationState has no row to update", e.getMessage());
    }

    @Test
    void replicationStateIsReportedRawForTheCallerToJudge() throws SQLException {
        ReplicaLayout.initReplicationState(db, List.of(), "01", "{}");
        try (Statement st = db.createStatement()) {
            st.execute("UPDATE \"_zero.replicationState\" SET stateVersion = X'3132', writeTimeMs = NULL");
        }
        ReplicationStateRow row = ReplicaStateReader.replicationState(db).orElseThrow();
        assertEquals("12", row.stateVersion());
        assertEquals("blob", row.stateVersionStorageClass(), "TEXT affinity converts numbers, not blobs");
        assertEquals(OptionalLong.empty(), row.writeTimeMs());
    }

    @Test
    void replicationStateOfAFileWithoutTheTableIsAnError() throws SQLException {
        assertThrows(SQLException.class, () -> ReplicaStateReader.replicationState(db));
        assertFalse(ReplicaStateReader.read(db).isPresent());
    }

    private List<Object> column(String sql) throws SQLException {
        List<Object> out = new ArrayList<>();
        try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getObject(1));
            }
        }
        return out;
    }

    private List<Object> metadataRows() throws SQLException {
        return column("SELECT table_name || '|' || column_name || '|' || upstream_type || '|' || is_not_null || '|' "
                + "|| is_enum || '|' || is_array || '|' || quote(character_max_length) || '|' || quote(backfill) "
                + "FROM \"_zero.column_metadata\" ORDER BY table_name, column_name");
    }

    private List<Object> tableMetadataRows() throws SQLException {
        return column("SELECT \"schema\" || '|' || \"table\" || '|' || \"minRowVersion\" || '|' || "
                + "coalesce(\"upstreamMetadata\", 'NULL') FROM \"_zero.tableMetadata\" ORDER BY 1");
    }
}

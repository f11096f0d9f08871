package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DropColumn;
import org.zrm.protocol.DropIndex;
import org.zrm.protocol.UpdateColumn;
import org.zrm.protocol.UpdateTableMetadata;
import org.zrm.testing.PostgresTest;

/**
 * A migration series against one upstream, in order, checking the schema changes the change source
 * emits for each step: the schema-change cases of upstream's {@code change-source.end-to-mid.pg.test.ts}
 * at the change-source level (the replica side is the replicator's). State carries over from step
 * to step as upstream's does, hence the fixed order.
 *
 * <p>Uses the lenient validator (upstream's: a table without a row key is only warned about),
 * because several upstream steps pass through such a state; the strict default is tested in
 * {@link DdlChangeSourcePgTest}.
 */
@PostgresTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DdlMigrationsPgTest {

    private DdlFixture f;

    @BeforeAll
    void setUp(PgCluster cluster) throws Exception {
        f = DdlFixture.start(cluster, """
                CREATE TYPE ENUMZ AS ENUM ('1', '2', '3');
                CREATE TABLE foo(id TEXT NOT NULL, int INT4, big BIGINT, flt FLOAT8, bool BOOLEAN, timea TIMESTAMPTZ,
                  timeb TIMESTAMPTZ, date DATE, time TIME, json JSON, jsonb JSONB, numz ENUMZ, uuid UUID, intarr INT4[],
                  jsons JSON[], jsonbs JSONB[]);
                CREATE SCHEMA IF NOT EXISTS my;
                CREATE SCHEMA IF NOT EXISTS private;
                CREATE UNIQUE INDEX foo_key ON foo (id);
                CREATE PUBLICATION zero_some_public FOR TABLE foo (id, int);
                CREATE PUBLICATION zero_all_test FOR TABLES IN SCHEMA my;
                """, List.of("zero_some_public", "zero_all_test"), new TableValidator(false));
    }

    @AfterAll
    void tearDown() throws Exception {
        if (f != null) {
            f.close();
        }
    }

    private List<DataMessage> step(String sql) throws Exception {
        f.exec(sql);
        return f.nextChanges();
    }

    private static Map<String, Object> rowKey(UpdateTableMetadata u, boolean old) {
        return (old ? u.oldMetadata() : u.newMetadata()).rowKey();
    }

    private static Map<String, Object> attNum(long n) {
        return Map.of("attNum", n);
    }

    @Test
    @Order(1)
    void createTable() throws Exception {
        List<DataMessage> t = step("CREATE TABLE my.baz (id INT8 CONSTRAINT baz_pkey PRIMARY KEY,"
                + " gen INT8 GENERATED ALWAYS AS (id + 1) STORED)");
        assertEquals(List.of("create-table", "create-index"), DdlFixture.tags(t));
        long oid = f.oid("my.baz");
        long schemaOid = Long.parseLong(SourceFixture.queryString(f.c, "SELECT 'my'::regnamespace::oid"));
        // The generated column is not published; the spec is the published JSON.
        assertEquals("{\"tag\":\"create-table\",\"spec\":{\"oid\":" + oid + ",\"schema\":\"my\",\"schemaOID\":" + schemaOid
                + ",\"name\":\"baz\",\"replicaIdentity\":\"d\",\"columns\":{\"id\":{\"pos\":1,\"dflt\":null,"
                + "\"notNull\":true,\"typeOID\":20,\"dataType\":\"int8\",\"pgTypeClass\":\"b\",\"elemPgTypeClass\":null,"
                + "\"characterMaximumLength\":null}},\"primaryKey\":[\"id\"],\"publications\":{\"zero_all_test\":"
                + "{\"rowFilter\":null}},\"replicaIdentityColumns\":[\"id\"]},\"metadata\":{\"schemaOID\":" + schemaOid
                + ",\"relationOID\":" + oid + ",\"rowKey\":{\"id\":{\"attNum\":1}}}}", DdlFixture.json(t.get(0)));
        assertEquals("{\"tag\":\"create-index\",\"spec\":{\"schema\":\"my\",\"tableName\":\"baz\",\"name\":\"baz_pkey\","
                + "\"unique\":true,\"isPrimaryKey\":true,\"isReplicaIdentity\":false,\"isImmediate\":true,"
                + "\"columns\":{\"id\":\"ASC\"}}}", DdlFixture.json(t.get(1)));
    }

    @Test
    @Order(2)
    void renameTable() throws Exception {
        List<DataMessage> t = step("ALTER TABLE my.baz RENAME TO bar");
        assertEquals(List.of("{\"tag\":\"rename-table\",\"old\":{\"schema\":\"my\",\"name\":\"baz\"},"
                + "\"new\":{\"schema\":\"my\",\"name\":\"bar\"}}"), t.stream().map(DdlFixture::json).toList());
    }

    @Test
    @Order(3)
    void addColumn() throws Exception {
        List<DataMessage> t = step("ALTER TABLE my.bar ADD name INT8");
        assertEquals(List.of("add-column"), DdlFixture.tags(t));
        long oid = f.oid("my.bar");
        String json = DdlFixture.json(t.get(0));
        assertTrue(json.startsWith("{\"tag\":\"add-column\",\"table\":{\"schema\":\"my\",\"name\":\"bar\"},\"column\":"
                + "{\"name\":\"name\",\"spec\":{\"pos\":3,\"dflt\":null,\"notNull\":false,\"typeOID\":20,\"dataType\":\"int8\","
                + "\"pgTypeClass\":\"b\",\"elemPgTypeClass\":null,\"characterMaximumLength\":null}},\"tableMetadata\":"
                + "{\"schemaOID\":"), json);
        assertTrue(json.endsWith(",\"relationOID\":" + oid + ",\"rowKey\":{\"id\":{\"attNum\":1}}}}"), json);
    }

    @Test
    @Order(4)
    void renameColumn() throws Exception {
        UpdateColumn u = (UpdateColumn) step("ALTER TABLE my.bar RENAME name TO handle").get(0).change();
        assertEquals("name", u.oldColumn().name());
        assertEquals("handle", u.newColumn().name());
    }

    @Test
    @Order(5)
    void changeColumnDataType() throws Exception {
        UpdateColumn u = (UpdateColumn) step("ALTER TABLE my.bar ALTER handle TYPE TEXT").get(0).change();
        assertEquals("int8", u.oldColumn().spec().dataType());
        assertEquals("text", u.newColumn().spec().dataType());
    }

    @Test
    @Order(6)
    void changeThePrimaryKey() throws Exception {
        List<DataMessage> t = step("ALTER TABLE my.bar DROP CONSTRAINT baz_pkey; ALTER TABLE my.bar ADD PRIMARY KEY (handle)");
        assertEquals(List.of("drop-index", "update-table-metadata", "update-table-metadata", "update-column",
                "create-index"), DdlFixture.tags(t));
        UpdateTableMetadata first = (UpdateTableMetadata) t.get(1).change();
        UpdateTableMetadata second = (UpdateTableMetadata) t.get(2).change();
        assertEquals(Map.of("id", attNum(1)), rowKey(first, true));
        assertEquals(Map.of(), rowKey(first, false));
        assertEquals(Map.of(), rowKey(second, true));
        assertEquals(Map.of("handle", attNum(3)), rowKey(second, false));
        UpdateColumn u = (UpdateColumn) t.get(3).change();
        assertEquals(org.zrm.protocol.Maybe.of(false), u.oldColumn().spec().notNull());
        assertEquals(org.zrm.protocol.Maybe.of(true), u.newColumn().spec().notNull());
    }

    @Test
    @Order(7)
    void addUniqueColumnCreatesItsIndex() throws Exception {
        List<DataMessage> t = step("ALTER TABLE my.bar ADD username TEXT UNIQUE");
        assertEquals(List.of("add-column", "create-index"), DdlFixture.tags(t));
        assertEquals(Map.of("handle", attNum(3)), ((AddColumn) t.get(0).change()).tableMetadata().rowKey());
    }

    @Test
    @Order(8)
    void renameUniqueColumnWithItsIndex() throws Exception {
        assertEquals(List.of("update-column"), DdlFixture.tags(step("ALTER TABLE my.bar RENAME username TO login")));
    }

    @Test
    @Order(9)
    void retypeUniqueColumnWithItsIndex() throws Exception {
        assertEquals(List.of("update-column"), DdlFixture.tags(step("ALTER TABLE my.bar ALTER login TYPE VARCHAR(180)")));
    }

    @Test
    @Order(10)
    void changeDefaultAndSetNotNull() throws Exception {
        // The default alone emits nothing (the schema's text changes, so a ddlUpdate comes, with no
        // change); SET NOT NULL is an update-column.
        List<DataMessage> t = step("ALTER TABLE my.bar ALTER login SET DEFAULT floor(10000 * random())::text;"
                + " ALTER TABLE my.bar ALTER login SET NOT NULL");
        assertEquals(List.of("update-column"), DdlFixture.tags(t));
    }

    @Test
    @Order(11)
    void dropColumnWithIndex() throws Exception {
        List<DataMessage> t = step("ALTER TABLE my.bar DROP login");
        assertEquals(List.of("drop-index", "drop-column"), DdlFixture.tags(t));
        assertEquals("bar_username_key", ((DropIndex) t.get(0).change()).id().name());
        assertEquals("login", ((DropColumn) t.get(1).change()).column());
    }

    @Test
    @Order(12)
    void addMultipleColumns() throws Exception {
        List<DataMessage> t = step("ALTER TABLE my.bar ADD foo TEXT, ADD bar TEXT");
        assertEquals(List.of("add-column", "add-column"), DdlFixture.tags(t));
        // In the order of the published JSON's columns object (not attnum order), as upstream.
        assertEquals(List.of("bar", "foo"), t.stream().map(d -> ((AddColumn) d.change()).column().name()).toList());
    }

    @Test
    @Order(13)
    void alterAddAndDropColumnsInOneStatement() throws Exception {
        assertEquals(List.of("drop-column", "update-column", "add-column"),
                DdlFixture.tags(step("ALTER TABLE my.bar ALTER foo SET NOT NULL, ADD boo TEXT, DROP bar")));
    }

    @Test
    @Order(14)
    void renameSchema() throws Exception {
        assertEquals(List.of("drop-index", "rename-table", "create-index"),
                DdlFixture.tags(step("ALTER SCHEMA my RENAME TO your")));
    }

    @Test
    @Order(15)
    void addUnpublishedColumnThenAlterPublicationAddsAndDropsColumns() throws Exception {
        // Not in the column list: the schema does not change, nothing is emitted.
        f.exec("ALTER TABLE foo ADD \"newInt\" INT4");
        List<DataMessage> t = step("ALTER PUBLICATION zero_some_public SET TABLE foo (id, \"newInt\")");
        assertEquals(List.of("drop-column", "add-column"), DdlFixture.tags(t));
        assertEquals("int", ((DropColumn) t.get(0).change()).column());
        AddColumn add = (AddColumn) t.get(1).change();
        // Introduced by ALTER PUBLICATION: upstream may already hold values.
        assertEquals(Map.of("attNum", 17L), add.backfill().value());
        assertEquals(org.zrm.protocol.Maybe.ofNull(), add.column().spec().dflt());
    }

    @Test
    @Order(16)
    void alterPublicationAddMultipleColumns() throws Exception {
        List<DataMessage> t = step("ALTER PUBLICATION zero_some_public SET TABLE foo (id, \"newInt\", int, flt)");
        assertEquals(List.of("add-column", "add-column"), DdlFixture.tags(t));
        for (DataMessage d : t) {
            assertTrue(((AddColumn) d.change()).backfill() != null);
        }
    }

    @Test
    @Order(17)
    void publicationIntroducesTableWithIndexes() throws Exception {
        // An unpublished table emits nothing...
        f.exec("CREATE TABLE public.boo (id INT8 PRIMARY KEY, name TEXT UNIQUE)");
        // ...until a publication adds it, with its rows to backfill.
        List<DataMessage> t = step("ALTER PUBLICATION zero_some_public SET TABLE foo (id, flt), boo");
        assertEquals(List.of("drop-column", "drop-column", "create-table", "create-index", "create-index"),
                DdlFixture.tags(t));
        CreateTable ct = (CreateTable) t.get(2).change();
        assertEquals("boo", ct.spec().name());
        assertEquals(List.of("id", "name"), List.copyOf(ct.backfill().keySet()));
        assertEquals(Map.of("id", attNum(1)), ct.metadata().rowKey());
    }

    @Test
    @Order(18)
    void createAndDropIndexes() throws Exception {
        List<DataMessage> t = step("CREATE INDEX foo_flt1 ON foo (flt DESC, id ASC); CREATE INDEX foo_flt2 ON foo (id DESC, flt DESC)");
        assertEquals(List.of("create-index", "create-index"), DdlFixture.tags(t));
        assertEquals("{\"tag\":\"create-index\",\"spec\":{\"schema\":\"public\",\"tableName\":\"foo\",\"name\":\"foo_flt1\","
                + "\"unique\":false,\"isPrimaryKey\":false,\"isReplicaIdentity\":false,\"isImmediate\":true,"
                + "\"columns\":{\"flt\":\"DESC\",\"id\":\"ASC\"}}}", DdlFixture.json(t.get(0)));
        assertEquals(List.of("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"foo_flt1\"}}"),
                step("DROP INDEX foo_flt1").stream().map(DdlFixture::json).toList());
    }

    @Test
    @Order(19)
    void createIndexConcurrently() throws Exception {
        assertEquals(List.of("create-index"), DdlFixture.tags(step("CREATE INDEX CONCURRENTLY foo_flt3 ON foo (flt DESC, id ASC)")));
    }

    @Test
    @Order(20)
    void removeTableWithIndexesFromPublication() throws Exception {
        assertEquals(List.of("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"boo_name_key\"}}",
                "{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"boo_pkey\"}}",
                "{\"tag\":\"drop-table\",\"id\":{\"schema\":\"public\",\"name\":\"boo\"}}"),
                step("ALTER PUBLICATION zero_some_public DROP TABLE boo").stream().map(DdlFixture::json).toList());
    }

    @Test
    @Order(21)
    void removeTableFromPublishedSchema() throws Exception {
        assertEquals(List.of("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"your\",\"name\":\"bar_pkey\"}}",
                "{\"tag\":\"drop-table\",\"id\":{\"schema\":\"your\",\"name\":\"bar\"}}"),
                step("ALTER TABLE your.bar SET SCHEMA private").stream().map(DdlFixture::json).toList());
    }

    @Test
    @Order(22)
    void tableWithoutPrimaryKeyHasAnEmptyRowKey() throws Exception {
        List<DataMessage> t = step("CREATE TABLE your.nopk (a TEXT NOT NULL, b TEXT);"
                + " INSERT INTO your.nopk (a, b) VALUES ('foo', 'bar')");
        assertEquals(List.of("create-table", "insert"), DdlFixture.tags(t));
        assertEquals(Map.of(), ((CreateTable) t.get(0).change()).metadata().rowKey());
        assertFalse(((CreateTable) t.get(0).change()).backfill() != null);
    }

    @Test
    @Order(23)
    void resumptiveReplication() throws Exception {
        List<DataMessage> t = step("""
                CREATE TABLE existing (a TEXT UNIQUE NOT NULL, b TEXT NOT NULL, PRIMARY KEY (a, b));
                INSERT INTO existing (a, b) VALUES ('c', 'd');
                INSERT INTO existing (a, b) VALUES ('e', 'f');
                CREATE TABLE existing_full (a TEXT PRIMARY KEY, b TEXT);
                ALTER TABLE existing_full REPLICA IDENTITY FULL;
                INSERT INTO existing_full (a, b) VALUES ('c', 'd');
                INSERT INTO existing_full (a, b) VALUES ('e', 'f');
                ALTER PUBLICATION zero_some_public ADD TABLE existing;
                ALTER TABLE existing REPLICA IDENTITY FULL;
                UPDATE existing SET a = a;
                ALTER TABLE existing REPLICA IDENTITY DEFAULT;
                ALTER PUBLICATION zero_some_public ADD TABLE existing_full;
                UPDATE existing_full SET a = a;
                """);
        assertEquals(List.of("create-table", "create-index", "create-index", "update-table-metadata", "update", "update",
                "update-table-metadata", "create-table", "create-index", "update", "update"), DdlFixture.tags(t));
        CreateTable existing = (CreateTable) t.get(0).change();
        assertEquals(Map.of("a", attNum(1), "b", attNum(2)), existing.metadata().rowKey());
        assertEquals(List.of("a", "b"), List.copyOf(existing.backfill().keySet()));
        assertEquals(Map.of("a", attNum(1)), rowKey((UpdateTableMetadata) t.get(3).change(), false));
    }

    @Test
    @Order(24)
    void changeReplicaIdentity() throws Exception {
        List<DataMessage> t = step("ALTER TABLE existing REPLICA IDENTITY FULL");
        assertEquals(List.of("update-table-metadata"), DdlFixture.tags(t));
        UpdateTableMetadata u = (UpdateTableMetadata) t.get(0).change();
        assertEquals(Map.of("a", attNum(1), "b", attNum(2)), rowKey(u, true));
        assertEquals(Map.of("a", attNum(1)), rowKey(u, false));
    }

    @Test
    @Order(25)
    void changePrimaryKeyColumnsInOneAlterTable() throws Exception {
        List<DataMessage> t = step("""
                CREATE TABLE your.pktest (old_a TEXT NOT NULL, old_b TEXT NOT NULL,
                  CONSTRAINT pktest_pkey PRIMARY KEY (old_a, old_b));
                ALTER TABLE your.pktest DROP CONSTRAINT pktest_pkey, DROP COLUMN old_b,
                  ADD COLUMN new_b TEXT NOT NULL DEFAULT 'x', ADD CONSTRAINT pktest_pkey PRIMARY KEY (old_a, new_b);
                """);
        assertEquals(List.of("create-table", "create-index", "drop-index", "update-table-metadata", "drop-column",
                "add-column", "create-index"), DdlFixture.tags(t));
        AddColumn add = (AddColumn) t.get(5).change();
        // A constant default under ALTER TABLE: kept, no backfill.
        assertEquals(org.zrm.protocol.Maybe.of("'x'::text"), add.column().spec().dflt());
        assertEquals(null, add.backfill());
    }

    @Test
    @Order(26)
    void dataTypes() throws Exception {
        List<DataMessage> t = step("""
                CREATE TABLE your.zoo(id TEXT NOT NULL, int INT4, big BIGINT, flt FLOAT8, bool BOOLEAN, timea TIMESTAMPTZ,
                  date DATE, json JSON, jsonb JSONB, numz ENUMZ, uuid UUID, intarr INT4[], vc VARCHAR(180), jsonbs JSONB[]);
                INSERT INTO your.zoo (id, int, big, numz, intarr, vc)
                  VALUES ('abc', -2, 9007199254740993, '2', ARRAY[1,2,3,4,5], 'v');
                """);
        assertEquals(List.of("create-table", "insert"), DdlFixture.tags(t));
        String spec = DdlFixture.json(t.get(0));
        long enumOid = Long.parseLong(SourceFixture.queryString(f.c, "SELECT 'enumz'::regtype::oid"));
        // jsonb_build_object orders each column's members; json_object_agg(DISTINCT …) the columns.
        assertTrue(spec.contains("\"columns\":{\"big\":{\"pos\":3,\"dflt\":null,\"notNull\":false,\"typeOID\":20,"
                + "\"dataType\":\"int8\",\"pgTypeClass\":\"b\",\"elemPgTypeClass\":null,\"characterMaximumLength\":null},"), spec);
        assertTrue(spec.contains("\"intarr\":{\"pos\":12,\"dflt\":null,\"notNull\":false,\"typeOID\":1007,"
                + "\"dataType\":\"int4[]\",\"pgTypeClass\":\"b\",\"elemPgTypeClass\":\"b\",\"characterMaximumLength\":null}"), spec);
        assertTrue(spec.contains("\"numz\":{\"pos\":10,\"dflt\":null,\"notNull\":false,\"typeOID\":" + enumOid + ","
                + "\"dataType\":\"enumz\",\"pgTypeClass\":\"e\",\"elemPgTypeClass\":null,\"characterMaximumLength\":null}"), spec);
        assertTrue(spec.contains("\"vc\":{\"pos\":13,\"dflt\":null,\"notNull\":false,\"typeOID\":1043,"
                + "\"dataType\":\"varchar\",\"pgTypeClass\":\"b\",\"elemPgTypeClass\":null,\"characterMaximumLength\":180}"), spec);
        Map<String, Object> row = ((org.zrm.protocol.Insert) t.get(1).change()).newRow();
        assertEquals("2", row.get("numz"));
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), row.get("intarr"));
    }

    /** The triggers serialise concurrent DDL with an advisory lock, so each diff sees its own change only. */
    @Test
    @Order(27)
    void concurrentSchemaChanges() throws Exception {
        List<Thread> threads = new java.util.ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            String sql = "CREATE TABLE IF NOT EXISTS your.t" + i + " (id INT8 PRIMARY KEY)";
            Thread th = new Thread(() -> {
                try (java.sql.Connection conn = f.db.connect()) {
                    SourceFixture.exec(conn, sql);
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(List.of(), errors);
        java.util.Set<String> created = new java.util.TreeSet<>();
        for (int i = 0; i < 3; i++) {
            List<DataMessage> t = f.nextChanges();
            assertEquals(List.of("create-table", "create-index"), DdlFixture.tags(t));
            created.add(((CreateTable) t.get(0).change()).spec().name());
        }
        assertEquals(java.util.Set.of("t0", "t1", "t2"), created);
    }

    @Test
    @Order(28)
    void nestedDdlEventFromAnotherEventTrigger() throws Exception {
        List<DataMessage> t = step("""
                CREATE OR REPLACE FUNCTION add_rls() RETURNS event_trigger AS $$
                DECLARE target RECORD;
                BEGIN
                  SELECT object_identity as name FROM pg_event_trigger_ddl_commands() LIMIT 1 INTO target;
                  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target.name);
                END $$ LANGUAGE plpgsql;
                CREATE EVENT TRIGGER add_rls_trigger ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
                  EXECUTE PROCEDURE add_rls();
                CREATE TABLE your.table_that_gets_rls (id INT8 PRIMARY KEY, val INT8 NOT NULL);
                CREATE UNIQUE INDEX val_idx ON your.table_that_gets_rls (val);
                DROP EVENT TRIGGER add_rls_trigger;
                """);
        assertEquals(List.of("create-table", "create-index", "create-index"), DdlFixture.tags(t));
        // The nested event's tag (ALTER TABLE) does not count: the table was created, no backfill.
        assertEquals(null, ((CreateTable) t.get(0).change()).backfill());
    }

    @Test
    @Order(29)
    void commentsAroundAWorkingAlterPublicationTrigger() throws Exception {
        List<DataMessage> t = step("""
                COMMENT ON PUBLICATION zero_some_public IS 'bonk';
                ALTER PUBLICATION zero_some_public SET TABLE existing, TABLE existing_full, TABLE foo (id, "newInt", flt);
                COMMENT ON PUBLICATION zero_some_public IS 'bonk';
                """);
        assertEquals(List.of("add-column"), DdlFixture.tags(t));
        assertTrue(((AddColumn) t.get(0).change()).backfill() != null);
    }

    @Test
    @Order(30)
    void commentCoversAMissingAlterPublicationTrigger() throws Exception {
        String tags = "'CREATE TABLE','ALTER TABLE','CREATE INDEX','DROP TABLE','DROP INDEX','ALTER SCHEMA'";
        f.exec("DROP EVENT TRIGGER zero_ddl_start_0; DROP EVENT TRIGGER zero_ddl_end_0;"
                + " CREATE EVENT TRIGGER zero_ddl_start_0 ON ddl_command_start WHEN TAG IN (" + tags + ")"
                + " EXECUTE PROCEDURE zero_0.emit_ddl_start();"
                + " CREATE EVENT TRIGGER zero_ddl_end_0 ON ddl_command_end WHEN TAG IN (" + tags + ", 'COMMENT')"
                + " EXECUTE PROCEDURE zero_0.emit_ddl_end();");
        List<DataMessage> t = step("""
                ALTER PUBLICATION zero_some_public SET TABLE existing, TABLE existing_full, TABLE foo (id, int, flt);
                COMMENT ON PUBLICATION zero_some_public IS 'bonk';
                COMMENT ON PUBLICATION zero_some_public IS 'bonk';
                COMMENT ON PUBLICATION zero_some_public IS NULL;
                """);
        assertEquals(List.of("drop-column", "add-column"), DdlFixture.tags(t));
        assertEquals("newInt", ((DropColumn) t.get(0).change()).column());
        assertTrue(((AddColumn) t.get(1).change()).backfill() != null);
    }

    @Test
    @Order(31)
    void updateSchemasCoversMissingEventTriggers() throws Exception {
        f.exec("DROP EVENT TRIGGER zero_ddl_start_0; DROP EVENT TRIGGER zero_ddl_end_0;");
        List<DataMessage> t = step("CREATE TABLE IF NOT EXISTS your.new_table (id INT8 PRIMARY KEY);"
                + " SELECT zero_0.update_schemas();");
        assertEquals(List.of("create-table", "create-index"), DdlFixture.tags(t));
        // A MANUAL snapshot cannot know the table is new: backfilled.
        assertEquals(List.of("id"), List.copyOf(((CreateTable) t.get(0).change()).backfill().keySet()));
    }
}

package org.zrm.replicator.internal;

import org.zrm.replica.apply.ChangeProcessor;
import org.zrm.replica.apply.CommitResult;
import org.zrm.replica.apply.ChangeProcessingException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.replicator.internal.Msgs.ISSUE;
import static org.zrm.replicator.internal.Msgs.begin;
import static org.zrm.replicator.internal.Msgs.commit;
import static org.zrm.replicator.internal.Msgs.data;
import static org.zrm.replicator.internal.Msgs.deleteIssue;
import static org.zrm.replicator.internal.Msgs.insertIssue;
import static org.zrm.replicator.internal.Msgs.rollback;

import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChangeProcessorTest {

    @TempDir
    Path dir;
    Path file;
    ChangeProcessor processor;
    Connection reader;

    @BeforeEach
    void setUp() throws Exception {
        file = dir.resolve("replica.db");
        TestReplica.create(file, "01");
        processor = new ChangeProcessor(new ReplicaFile(file, 1000).openWriter(), Msgs.CODEC);
        reader = TestReplica.open(file);
    }

    @AfterEach
    void tearDown() throws Exception {
        processor.close();
        reader.close();
    }

    private CommitResult apply(String... messages) throws Exception {
        CommitResult last = null;
        for (String m : messages) {
            CommitResult r = processor.process(Msgs.decode(m));
            if (r != null) {
                last = r;
            }
        }
        return last;
    }

    private List<Map<String, Object>> issues() throws Exception {
        return TestReplica.rows(reader, "SELECT id, title, n, done, meta, tags, _0_version FROM issue ORDER BY id");
    }

    @Test
    void insertUpdateDeleteAdvanceStateVersionAndRowVersions() throws Exception {
        CommitResult r = apply(begin("0a"), insertIssue("a", "one"), insertIssue("b", "two"), commit("0a"));
        assertEquals("0a", r.watermark());
        assertFalse(r.schemaUpdated());
        assertEquals("0a", TestReplica.stateVersion(reader));
        apply(begin("0b"),
                data("{\"tag\":\"update\",\"relation\":" + ISSUE + ",\"key\":null,\"new\":{\"id\":\"a\",\"title\":\"uno\"}}"),
                deleteIssue("b"), commit("0b"));
        List<Map<String, Object>> rows = issues();
        assertEquals(1, rows.size());
        assertEquals("uno", rows.get(0).get("title"));
        assertEquals("0b", rows.get(0).get("_0_version"));
        assertEquals("0b", TestReplica.stateVersion(reader));
        // Backup mode logs nothing while no column is being backfilled.
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM \"_zero.changeLog2\""));
    }

    @Test
    void convertsValuesAsZeroDoes() throws Exception {
        apply(begin("0a"), data("{\"tag\":\"insert\",\"relation\":" + ISSUE + ",\"new\":{\"id\":\"a\",\"n\":9007199254740993,"
                + "\"done\":true,\"meta\":\"{\\\"x\\\": 1}\",\"tags\":[\"p\",\"q\"]}}"), commit("0a"));
        Map<String, Object> row = issues().get(0);
        assertEquals(9007199254740993L, ((Number) row.get("n")).longValue());
        assertEquals(1, ((Number) row.get("done")).intValue());
        assertEquals("{\"x\": 1}", row.get("meta"), "json 's' strings are stored as they are");
        assertEquals("[\"p\",\"q\"]", row.get("tags"));

        // With json 'p' (the default) a JSON value is stringified.
        apply("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"0b\"}]",
                data("{\"tag\":\"insert\",\"relation\":" + ISSUE + ",\"new\":{\"id\":\"b\",\"meta\":{\"y\":[1,true]},"
                        + "\"done\":false}}"), commit("0b"));
        Map<String, Object> b = issues().get(1);
        assertEquals("{\"y\":[1,true]}", b.get("meta"));
        assertEquals(0, ((Number) b.get("done")).intValue());
    }

    @Test
    void updateWithKeyChangeAndResumptiveUpsert() throws Exception {
        apply(begin("0a"), insertIssue("a", "one"), commit("0a"));
        apply(begin("0b"),
                data("{\"tag\":\"update\",\"relation\":" + ISSUE + ",\"key\":{\"id\":\"a\"},\"new\":{\"id\":\"z\",\"title\":\"moved\"}}"),
                data("{\"tag\":\"update\",\"relation\":" + ISSUE + ",\"key\":null,\"new\":{\"id\":\"m\",\"title\":\"missing\"}}"),
                commit("0b"));
        List<Map<String, Object>> rows = issues();
        assertEquals(2, rows.size());
        assertEquals("m", rows.get(0).get("id"));
        assertEquals("missing", rows.get(0).get("title"));
        assertEquals("z", rows.get(1).get("id"));
    }

    @Test
    void truncateEmptiesTheTable() throws Exception {
        apply(begin("0a"), insertIssue("a", "one"), insertIssue("b", "two"), commit("0a"));
        apply(begin("0b"), data("{\"tag\":\"truncate\",\"cascade\":false,\"restartIdentity\":false,\"relations\":[" + ISSUE + "]}"),
                commit("0b"));
        assertTrue(issues().isEmpty());
        assertEquals("0b", TestReplica.stateVersion(reader));
    }

    @Test
    void rollbackDiscardsTheTransaction() throws Exception {
        apply(begin("0a"), insertIssue("a", "one"), commit("0a"));
        assertNull(apply(begin("0b"), insertIssue("b", "two"), deleteIssue("a"), rollback()));
        assertFalse(processor.inTransaction());
        assertEquals(List.of("a"), issues().stream().map(r -> r.get("id")).toList());
        assertEquals("0a", TestReplica.stateVersion(reader));
        // The stream continues normally afterwards, e.g. with the re-sent transaction.
        apply(begin("0b"), insertIssue("b", "two"), commit("0b"));
        assertEquals(2, issues().size());
    }

    @Test
    void readerNeverSeesHalfATransaction() throws Exception {
        apply(begin("0a"));
        for (int i = 0; i < 500; i++) {
            apply(insertIssue("k" + i, "t"));
            if (i % 100 == 0) {
                // A concurrent reader (another connection, as litestream or a view-syncer would be) reads
                // the last committed state while the writer's transaction is open.
                assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM issue"));
                assertEquals("01", TestReplica.stateVersion(reader));
            }
        }
        apply(commit("0a"));
        assertEquals("500", TestReplica.scalar(reader, "SELECT count(*) FROM issue"));
        assertEquals("0a", TestReplica.stateVersion(reader));
        assertEquals("wal", TestReplica.scalar(reader, "PRAGMA journal_mode"));
    }

    @Test
    void malformedStreamFailsAndKeepsTheLastGoodCommit() throws Exception {
        apply(begin("07"), insertIssue("a", "one"), commit("07"));
        apply(begin("08"), insertIssue("b", "two"));
        ChangeProcessingException e = assertThrows(ChangeProcessingException.class,
                () -> processor.process(Msgs.decode(commit("09"))));
        assertTrue(e.getMessage().contains("does not match 'begin' version 08"), e.getMessage());
        assertThrows(ChangeProcessingException.class, () -> processor.process(Msgs.decode(begin("0a"))),
                "a failed processor drops later messages");
        assertEquals("07", TestReplica.stateVersion(reader));
        assertEquals(1, issues().size());
    }

    @Test
    void messageOutsideTransactionIsAnError() {
        ChangeProcessingException e = assertThrows(ChangeProcessingException.class,
                () -> processor.process(Msgs.decode(insertIssue("a", "x"))));
        assertTrue(e.getMessage().contains("outside of transaction"), e.getMessage());
    }

    @Test
    void beginInsideTransactionIsAnError() throws Exception {
        apply(begin("0a"));
        assertThrows(ChangeProcessingException.class, () -> processor.process(Msgs.decode(begin("0b"))));
        assertEquals("01", TestReplica.stateVersion(reader));
    }

    @Test
    void unknownColumnFailsTheTransaction() throws Exception {
        apply(begin("0a"), insertIssue("a", "one"));
        ChangeProcessingException e = assertThrows(ChangeProcessingException.class, () -> processor.process(Msgs.decode(
                data("{\"tag\":\"insert\",\"relation\":" + ISSUE + ",\"new\":{\"id\":\"b\",\"nope\":1}}"))));
        assertTrue(e.getMessage().contains("Unknown column nope"), e.getMessage());
        assertTrue(issues().isEmpty(), "the whole transaction was rolled back");
    }

    @Test
    void replicaIdentityFullWithoutKeyIsRejected() throws Exception {
        String rel = "{\"schema\":\"public\",\"name\":\"nokey\",\"rowKey\":{\"columns\":[\"a\",\"b\"],\"type\":\"full\"}}";
        apply(begin("0a"), data(createTable("nokey", "\"a\":{\"pos\":1,\"dataType\":\"text\"},\"b\":{\"pos\":2,\"dataType\":\"text\"}")),
                commit("0a"));
        apply(begin("0b"));
        ChangeProcessingException e = assertThrows(ChangeProcessingException.class, () -> processor.process(Msgs.decode(
                data("{\"tag\":\"insert\",\"relation\":" + rel + ",\"new\":{\"a\":\"1\",\"b\":\"2\"}}"))));
        assertTrue(e.getMessage().contains("Cannot replicate table \"nokey\" without a PRIMARY KEY or UNIQUE INDEX"),
                e.getMessage());
    }

    @Test
    void replicaIdentityFullUsesTheUniqueIndex() throws Exception {
        String rel = "{\"schema\":\"public\",\"name\":\"issue\",\"rowKey\":{\"columns\":[\"id\",\"title\"],\"type\":\"full\"}}";
        apply(begin("0a"), insertIssue("a", "one"), insertIssue("b", "two"),
                data("{\"tag\":\"delete\",\"relation\":" + rel + ",\"key\":{\"id\":\"a\",\"title\":\"one\"}}"), commit("0a"));
        assertEquals(List.of("b"), issues().stream().map(r -> r.get("id")).toList());
    }

    static String createTable(String name, String columns) {
        return "{\"tag\":\"create-table\",\"spec\":{\"schema\":\"public\",\"name\":\"" + name + "\",\"columns\":{" + columns
                + "},\"primaryKey\":[]}}";
    }

    @Test
    void schemaChanges() throws Exception {
        String users = "{\"schema\":\"public\",\"name\":\"users\",\"rowKey\":{\"columns\":[\"id\"],\"type\":\"default\"}}";
        CommitResult r = apply(begin("0a"),
                data("{\"tag\":\"create-table\",\"spec\":{\"schema\":\"public\",\"name\":\"users\",\"columns\":{"
                        + "\"id\":{\"pos\":1,\"dataType\":\"int8\",\"notNull\":true},"
                        + "\"name\":{\"pos\":2,\"dataType\":\"varchar\",\"characterMaximumLength\":40},"
                        + "\"role\":{\"pos\":3,\"dataType\":\"user_role\",\"pgTypeClass\":\"e\"}},\"primaryKey\":[\"id\"]},"
                        + "\"metadata\":{\"schemaOID\":2200,\"relationOID\":16390,\"rowKey\":{\"id\":{\"attNum\":1}}}}"),
                data("{\"tag\":\"create-index\",\"spec\":{\"schema\":\"public\",\"tableName\":\"users\",\"name\":\"users_pkey\","
                        + "\"unique\":true,\"columns\":{\"id\":\"ASC\"}}}"),
                data("{\"tag\":\"insert\",\"relation\":" + users + ",\"new\":{\"id\":1,\"name\":\"ann\",\"role\":\"admin\"}}"),
                commit("0a"));
        assertTrue(r.schemaUpdated());
        assertEquals("CREATE TABLE \"users\" (\n\"id\" \"int8|NOT_NULL\",\n\"name\" \"varchar\",\n\"role\" \"user_role|TEXT_ENUM\",\n"
                + "\"_0_version\" \"text\"\n)", TestReplica.scalar(reader, "SELECT sql FROM sqlite_master WHERE name = 'users'"));
        assertEquals(List.of(Map.of("column_name", "id", "upstream_type", "int8", "is_not_null", 1, "is_enum", 0),
                        Map.of("column_name", "name", "upstream_type", "varchar", "is_not_null", 0, "is_enum", 0),
                        Map.of("column_name", "role", "upstream_type", "user_role", "is_not_null", 0, "is_enum", 1)),
                TestReplica.rows(reader, "SELECT column_name, upstream_type, is_not_null, is_enum FROM \"_zero.column_metadata\" "
                        + "WHERE table_name = 'users' ORDER BY column_name"));
        assertEquals("{\"schemaOID\":2200,\"relationOID\":16390,\"rowKey\":{\"id\":{\"attNum\":1}}}",
                TestReplica.scalar(reader, "SELECT upstreamMetadata FROM \"_zero.tableMetadata\" WHERE \"table\" = 'users'"));

        // add-column with a default: existing rows get it, minRowVersion is bumped.
        apply(begin("0b"), data("{\"tag\":\"add-column\",\"table\":{\"schema\":\"public\",\"name\":\"users\"},"
                + "\"column\":{\"name\":\"active\",\"spec\":{\"pos\":4,\"dataType\":\"bool\",\"dflt\":\"true\"}}}"), commit("0b"));
        assertEquals("1", TestReplica.scalar(reader, "SELECT active FROM users"));
        assertEquals("0b", TestReplica.scalar(reader, "SELECT minRowVersion FROM \"_zero.tableMetadata\" WHERE \"table\" = 'users'"));

        // update-column: rename plus type change keeps values and the index on the column.
        apply(begin("0c"), data("{\"tag\":\"update-column\",\"table\":{\"schema\":\"public\",\"name\":\"users\"},"
                + "\"old\":{\"name\":\"id\",\"spec\":{\"pos\":1,\"dataType\":\"int8\",\"notNull\":true}},"
                + "\"new\":{\"name\":\"uid\",\"spec\":{\"pos\":1,\"dataType\":\"text\",\"notNull\":true}}}"), commit("0c"));
        assertEquals("1", TestReplica.scalar(reader, "SELECT uid FROM users"));
        assertEquals("text|NOT_NULL", TestReplica.scalar(reader, "SELECT type FROM pragma_table_info('users') WHERE name = 'uid'"));
        assertEquals("uid", TestReplica.scalar(reader, "SELECT name FROM pragma_index_info('users_pkey')"));
        assertEquals("text", TestReplica.scalar(reader,
                "SELECT upstream_type FROM \"_zero.column_metadata\" WHERE table_name = 'users' AND column_name = 'uid'"));

        // drop-column, rename-table, drop-index, drop-table.
        apply(begin("0d"), data("{\"tag\":\"drop-column\",\"table\":{\"schema\":\"public\",\"name\":\"users\"},\"column\":\"name\"}"),
                data("{\"tag\":\"rename-table\",\"old\":{\"schema\":\"public\",\"name\":\"users\"},\"new\":{\"schema\":\"public\",\"name\":\"people\"}}"),
                commit("0d"));
        assertEquals(List.of("role", "_0_version", "active", "uid"), TestReplica.rows(reader,
                "SELECT name FROM pragma_table_info('people') ORDER BY cid").stream().map(m -> m.get("name")).toList());
        assertEquals("3", TestReplica.scalar(reader, "SELECT count(*) FROM \"_zero.column_metadata\" WHERE table_name = 'people'"));
        assertEquals("0d", TestReplica.scalar(reader, "SELECT minRowVersion FROM \"_zero.tableMetadata\" WHERE \"table\" = 'people'"));
        // The renamed table still replicates with the new name.
        String people = "{\"schema\":\"public\",\"name\":\"people\",\"rowKey\":{\"columns\":[\"uid\"],\"type\":\"default\"}}";
        apply(begin("0e"), data("{\"tag\":\"insert\",\"relation\":" + people + ",\"new\":{\"uid\":\"2\",\"role\":\"x\"}}"),
                data("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"users_pkey\"}}"), commit("0e"));
        assertEquals("2", TestReplica.scalar(reader, "SELECT count(*) FROM people"));
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM sqlite_master WHERE name = 'users_pkey'"));
        apply(begin("0f"), data("{\"tag\":\"drop-table\",\"id\":{\"schema\":\"public\",\"name\":\"people\"}}"), commit("0f"));
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM sqlite_master WHERE name = 'people'"));
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM \"_zero.column_metadata\" WHERE table_name = 'people'"));
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM \"_zero.tableMetadata\" WHERE \"table\" = 'people'"));
        assertEquals("0f", TestReplica.stateVersion(reader));
    }

    @Test
    void schemaChangesAreRolledBackToo() throws Exception {
        apply(begin("0a"), data(createTable("tmp", "\"a\":{\"pos\":1,\"dataType\":\"text\"}")), rollback());
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM sqlite_master WHERE name = 'tmp'"));
        assertEquals("0", TestReplica.scalar(reader, "SELECT count(*) FROM \"_zero.column_metadata\" WHERE table_name = 'tmp'"));
        // The processor forgot the table again: inserting into it fails cleanly.
        apply(begin("0a"));
        assertThrows(ChangeProcessingException.class, () -> processor.process(Msgs.decode(data(
                "{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\",\"name\":\"tmp\",\"rowKey\":{\"columns\":[\"a\"]}},"
                        + "\"new\":{\"a\":\"x\"}}"))));
    }

    @Test
    void unsupportedAddColumnDefaultFails() throws Exception {
        apply(begin("0a"));
        ChangeProcessingException e = assertThrows(ChangeProcessingException.class, () -> processor.process(Msgs.decode(data(
                "{\"tag\":\"add-column\",\"table\":{\"schema\":\"public\",\"name\":\"issue\"},\"column\":{\"name\":\"t\","
                        + "\"spec\":{\"pos\":9,\"dataType\":\"timestamptz\",\"dflt\":\"now()\"}}}"))));
        assertTrue(e.getMessage().contains("Unsupported default value for issue.t: now()"), e.getMessage());
    }

    @Test
    void backfillWritesValuesAndRespectsNewerReplicatedValues() throws Exception {
        String rel = "{\"schema\":\"public\",\"name\":\"issue\",\"rowKey\":{\"columns\":[\"id\"],\"type\":\"default\"}}";
        apply(begin("0a"), insertIssue("a", "one"), insertIssue("b", "two"), insertIssue("c", "three"), commit("0a"));
        apply(begin("0b"), data("{\"tag\":\"add-column\",\"table\":{\"schema\":\"public\",\"name\":\"issue\"},"
                + "\"column\":{\"name\":\"score\",\"spec\":{\"pos\":9,\"dataType\":\"int4\"}},\"backfill\":{\"attNum\":9}}"),
                commit("0b"));
        // Replication writes a newer score for a, and deletes c, while the backfill (snapshot at 0b) runs.
        apply(begin("0d"), data("{\"tag\":\"update\",\"relation\":" + ISSUE + ",\"key\":null,\"new\":{\"id\":\"a\",\"score\":100}}"),
                deleteIssue("c"), commit("0d"));
        assertEquals("2", TestReplica.scalar(reader, "SELECT count(*) FROM \"_zero.changeLog2\""),
                "backup mode logs writes while a column is being backfilled");
        apply(begin("0e"), data("{\"tag\":\"backfill\",\"relation\":" + rel + ",\"columns\":[\"score\"],\"watermark\":\"0c\","
                        + "\"rowValues\":[[\"a\",1],[\"b\",2],[\"c\",3]]}"),
                data("{\"tag\":\"backfill-completed\",\"relation\":" + rel + ",\"columns\":[\"score\"],\"watermark\":\"0c\"}"),
                commit("0e"));
        assertEquals(List.of(Map.of("id", "a", "score", 100), Map.of("id", "b", "score", 2)),
                TestReplica.rows(reader, "SELECT id, score FROM issue ORDER BY id"));
        assertNull(TestReplica.scalar(reader,
                "SELECT backfill FROM \"_zero.column_metadata\" WHERE table_name = 'issue' AND column_name = 'score'"));
        assertEquals("0e", TestReplica.scalar(reader, "SELECT minRowVersion FROM \"_zero.tableMetadata\" WHERE \"table\" = 'issue'"));
    }

    /**
     * A backfill transaction exactly as the change source's backfill manager writes it: its own
     * {@code begin} with {@code json:"s"} and {@code skipAck}, a minor watermark between two stream
     * positions, rows at an older snapshot watermark, JSON values as text.
     */
    @Test
    void backfillTransactionOfTheBackfillManagerIsApplied() throws Exception {
        String rel = "{\"schema\":\"public\",\"name\":\"issue\",\"rowKey\":{\"columns\":[\"id\"]}}";
        apply(begin("0a"), insertIssue("a", "one"), insertIssue("b", "two"), commit("0a"));
        apply(begin("0b"), data("{\"tag\":\"add-column\",\"table\":{\"schema\":\"public\",\"name\":\"issue\"},"
                + "\"column\":{\"name\":\"extra\",\"spec\":{\"pos\":9,\"dataType\":\"jsonb\"}},\"backfill\":{\"attNum\":9}}"),
                commit("0b"));
        // The live stream sets a newer value for a after the backfill's snapshot (0b).
        apply(begin("0c"), data("{\"tag\":\"update\",\"relation\":" + ISSUE + ",\"key\":null,\"new\":{\"id\":\"a\","
                + "\"extra\":\"{\\\"live\\\": true}\"}}"), commit("0c"));
        CommitResult r = apply("[\"begin\",{\"tag\":\"begin\",\"json\":\"s\",\"skipAck\":true},{\"commitWatermark\":\"0c.01\"}]",
                data("{\"tag\":\"backfill\",\"relation\":" + rel + ",\"columns\":[\"extra\"],\"watermark\":\"0b\","
                        + "\"rowValues\":[[\"a\",\"{\\\"old\\\": 1}\"],[\"b\",\"{\\\"v\\\": 2}\"]],"
                        + "\"status\":{\"rows\":2,\"totalRows\":2,\"totalBytes\":40}}"),
                data("{\"tag\":\"backfill-completed\",\"relation\":" + rel + ",\"columns\":[\"extra\"],\"watermark\":\"0b\"}"),
                "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"0c.01\"}]");
        assertEquals("0c.01", r.watermark());
        assertEquals(List.of(Map.of("id", "a", "extra", "{\"live\": true}"), Map.of("id", "b", "extra", "{\"v\": 2}")),
                TestReplica.rows(reader, "SELECT id, extra FROM issue ORDER BY id"),
                "filled from the snapshot, without overwriting the newer live value; JSON text kept as is");
        assertEquals("0c.01", TestReplica.stateVersion(reader));
        assertNull(TestReplica.scalar(reader,
                "SELECT backfill FROM \"_zero.column_metadata\" WHERE table_name = 'issue' AND column_name = 'extra'"));
    }

    @Test
    void aReplicaLockedByAnotherWriterFailsTheTransactionAfterABoundedWait() throws Exception {
        java.sql.Connection writer = new ReplicaFile(file, 1000).openWriter();
        try (java.sql.Statement w = writer.createStatement()) {
            w.execute("PRAGMA busy_timeout = 50");
        }
        try (java.sql.Connection other = TestReplica.open(file);
                java.sql.Statement st = other.createStatement()) {
            st.execute("BEGIN IMMEDIATE"); // a foreign writer holds the write lock
            try (ChangeProcessor bounded = new ChangeProcessor(writer, Msgs.CODEC, 3)) {
                ChangeProcessingException e = org.junit.jupiter.api.Assertions.assertThrows(
                        ChangeProcessingException.class,
                        () -> bounded.process(Msgs.decode(begin("02"))));
                assertTrue(e.getMessage().contains("the replica is locked by another connection"), e.getMessage());
                assertTrue(e.getMessage().contains("after 3 busy timeouts"), e.getMessage());
            }
            st.execute("ROLLBACK");
        }
    }
}

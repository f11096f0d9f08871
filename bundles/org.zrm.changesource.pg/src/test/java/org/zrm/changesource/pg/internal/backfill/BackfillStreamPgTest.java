package org.zrm.changesource.pg.internal.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.pg.internal.setup.PublicationInfo;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.changesource.pg.internal.sync.JdbcPgConnector;
import org.zrm.changesource.pg.internal.sync.PgConnector;
import org.zrm.changesource.pg.internal.sync.ReplicationSlots;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.DownloadStatus;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;
import org.zrm.watermark.Lsn;

/**
 * The backfill snapshot reader against a real Postgres: a port of upstream
 * {@code backfill-stream.pg.test.ts} (column and table backfills in binary and text mode, compatible
 * and incompatible requests) plus the snapshot slot's life, row filters, toasted values, the 64 KiB
 * chunking, cancellation and the memory bound.
 */
@PostgresTest
class BackfillStreamPgTest {

    private static final String SLOT = "bfs_slot";
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private static PgDatabase db;
    private static PgConnector connector;

    @BeforeAll
    static void init(PgDatabase database) {
        db = database;
        connector = JdbcPgConnector.fromUri(db.uri());
    }

    @BeforeEach
    void createTables() throws SQLException {
        exec("""
                DROP TABLE IF EXISTS foo, bar, baz, boo, big, filtered, nokey, toasted, types CASCADE;
                DROP SCHEMA IF EXISTS other, old CASCADE;
                DROP TYPE IF EXISTS mood;
                DROP PUBLICATION IF EXISTS the_pub, pub_low, pub_high, pub_all;
                CREATE TABLE foo (id1 INT8 NOT NULL, id2 INT4 NOT NULL, a TEXT, b JSON, c JSON[], PRIMARY KEY (id1, id2));
                CREATE TABLE bar (id1 INT8 NOT NULL, id2 INT4 NOT NULL, a TEXT, b JSON, c JSON[], PRIMARY KEY (id1, id2));
                CREATE PUBLICATION the_pub FOR TABLE foo;
                INSERT INTO foo SELECT i, i + 1, repeat(i::text, 10), json_build_object('d', i),
                  ARRAY[to_json(i), to_json(i + 1), to_json((i + 2)::text), json_build_object('e', i + 3)]
                  FROM generate_series(1, 10) i;
                """);
    }

    @AfterEach
    void noSnapshotSlotLeft() throws SQLException {
        assertEquals(List.of(), snapshotSlots());
    }

    // --- upstream backfill-stream.pg.test.ts -------------------------------------------------

    @ParameterizedTest(name = "column backfill (text={0})")
    @ValueSource(booleans = {false, true})
    void columnBackfill(boolean text) throws Exception {
        List<DataOrSchemaChange> msgs = readAll(streamer(text, "the_pub"), request("public", "foo", List.of("id1", "id2"),
                List.of("c", "b")));
        assertEquals(2, msgs.size(), msgs::toString);
        Backfill bf = assertInstanceOf(Backfill.class, msgs.get(0));
        assertEquals("{\"schema\":\"public\",\"name\":\"foo\",\"rowKey\":{\"columns\":[\"id1\",\"id2\"]}}",
                relationJson(bf));
        assertEquals(List.of("c", "b"), bf.columns());
        StringBuilder expected = new StringBuilder("[");
        for (int i = 1; i <= 10; i++) {
            expected.append(i > 1 ? "," : "").append('[').append(i).append(',').append(i + 1).append(',')
                    .append(jsonArray(text, i)).append(",\"{\\\"d\\\" : ").append(i).append("}\"]");
        }
        assertEquals(expected.append(']').toString(), CODEC.encodeValue(bf.rowValues()));
        assertEquals(10, bf.status().rows());
        assertEquals(10, bf.status().totalRows());
        assertTrue(bf.status().totalBytes() > 0);
        BackfillCompleted done = assertInstanceOf(BackfillCompleted.class, msgs.get(1));
        assertEquals(List.of("c", "b"), done.columns());
        assertEquals(bf.watermark(), done.watermark());
        assertEquals(10, done.status().rows());
        assertEquals(bf.status().totalBytes(), done.status().totalBytes());
    }

    @ParameterizedTest(name = "table backfill (text={0})")
    @ValueSource(booleans = {false, true})
    void tableBackfill(boolean text) throws Exception {
        // Row-key columns in the columns are dropped from them; the row key keeps the metadata order.
        List<DataOrSchemaChange> msgs = readAll(streamer(text, "the_pub"), request("public", "foo", List.of("id2", "id1"),
                List.of("id1", "id2", "a", "c", "b")));
        Backfill bf = assertInstanceOf(Backfill.class, msgs.get(0));
        assertEquals("{\"schema\":\"public\",\"name\":\"foo\",\"rowKey\":{\"columns\":[\"id2\",\"id1\"]}}",
                relationJson(bf));
        assertEquals(List.of("a", "c", "b"), bf.columns());
        StringBuilder expected = new StringBuilder("[");
        for (int i = 1; i <= 10; i++) {
            expected.append(i > 1 ? "," : "").append('[').append(i + 1).append(',').append(i).append(",\"")
                    .append(String.valueOf(i).repeat(10)).append("\",").append(jsonArray(text, i))
                    .append(",\"{\\\"d\\\" : ").append(i).append("}\"]");
        }
        assertEquals(expected.append(']').toString(), CODEC.encodeValue(bf.rowValues()));
        BackfillCompleted done = assertInstanceOf(BackfillCompleted.class, msgs.get(1));
        assertEquals(List.of("a", "c", "b"), done.columns());
        assertEquals(List.of("id2", "id1"), done.relation().rowKey().columns());
        assertEquals(2, msgs.size());
    }

    /** Binary mode sends json[] as JSON text (what the replica stores), text mode as an array. */
    private static String jsonArray(boolean text, int i) {
        String arr = "[" + i + "," + (i + 1) + ",\"" + (i + 2) + "\",{\"e\":" + (i + 3) + "}]";
        return text ? arr : CODEC.encodeValue(arr);
    }

    @ParameterizedTest(name = "Compatible backfill request: {0}")
    @CsvSource(delimiter = '|', value = {
        "Rename unrelated column | ALTER TABLE foo RENAME a TO z",
        "Rename unrelated table | ALTER TABLE bar RENAME TO baz"})
    void compatibleRequest(String name, String sql) throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("c", "b"));
        exec(sql);
        try (BackfillRun run = streamer(false, "the_pub").open(req)) {
            assertEquals(10, assertInstanceOf(Backfill.class, run.next()).rowValues().size());
        }
    }

    @ParameterizedTest(name = "Incompatible backfill request: {0}")
    @CsvSource(delimiter = '|', value = {
        "Rename table | ALTER TABLE foo RENAME TO baz | Table has been renamed or dropped",
        "Rename backfilling row key column | ALTER TABLE foo RENAME id1 TO id | Row key (e.g. PRIMARY KEY or INDEX) has changed",
        "Rename backfilling column | ALTER TABLE foo RENAME b TO d | Column b has been renamed or dropped",
        "Drop backfilling row key column | ALTER TABLE foo DROP id2 | Row key (e.g. PRIMARY KEY or INDEX) has changed",
        "Drop backfilling column | ALTER TABLE foo DROP c | Column c has been renamed or dropped",
        "Drop backfilling table | DROP TABLE foo | Table has been renamed or dropped",
        "Swap backfilling row key names | ALTER TABLE foo RENAME id1 TO id; ALTER TABLE foo RENAME id2 TO id1; "
                + "ALTER TABLE foo RENAME id TO id2 | Column id1 no longer corresponds to the original column",
        "Swap backfilling column names | ALTER TABLE foo RENAME b TO d; ALTER TABLE foo RENAME c TO b; "
                + "ALTER TABLE foo RENAME d TO c | Column c no longer corresponds to the original column",
        "Swap table names | ALTER TABLE foo RENAME TO boo; ALTER TABLE bar RENAME TO foo; ALTER TABLE boo RENAME TO bar "
                + "| Table has been renamed or dropped",
        "Change backfilling row key | ALTER TABLE foo DROP CONSTRAINT foo_pkey; "
                + "ALTER TABLE foo ADD CONSTRAINT foo_pkey PRIMARY KEY (id1) | Row key (e.g. PRIMARY KEY or INDEX) has changed",
        "Re-create table | DROP TABLE foo; CREATE TABLE foo (id1 INT8, id2 INT4, a TEXT, b JSON, c JSON[], "
                + "PRIMARY KEY (id1, id2)); ALTER PUBLICATION the_pub ADD TABLE foo "
                + "| Table no longer corresponds to the original table"})
    void incompatibleRequest(String name, String sql, String reason) throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("c", "b"));
        exec(sql);
        SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class,
                () -> readAll(streamer(false, "the_pub"), req));
        assertEquals("Cannot backfill public.foo[c,b]: " + reason, e.getMessage());
    }

    @Test
    void incompatibleSchema() throws Exception {
        exec("""
                CREATE SCHEMA other;
                CREATE TABLE other.foo (id int PRIMARY KEY, c text, b text);
                ALTER PUBLICATION the_pub ADD TABLE other.foo;
                """);
        BackfillRequest req = request("other", "foo", List.of("id"), List.of("c", "b"));
        // The same table (same oid) now lives in a new schema of the same name.
        exec("ALTER SCHEMA other RENAME TO old; CREATE SCHEMA other; ALTER TABLE old.foo SET SCHEMA other");
        SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class,
                () -> readAll(streamer(false, "the_pub"), req));
        assertEquals("Cannot backfill other.foo[c,b]: Schema no longer corresponds to the original schema",
                e.getMessage());
    }

    @ParameterizedTest(name = "not MVCC-safe DDL after the snapshot: {0}")
    @CsvSource(delimiter = '|', value = {
        "ALTER TABLE foo RENAME b TO d | column \"b\" does not exist",
        "DROP TABLE foo | relation \"public.foo\" does not exist"})
    void ddlAfterValidationIsASchemaIncompatibility(String sql, String reason) throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("c", "b"));
        try (BackfillRun run = streamer(false, "the_pub").open(req)) {
            // Validation saw the snapshot's catalog; the COPY's parse sees the latest one.
            exec("SET lock_timeout = '10s'; " + sql);
            SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class, run::next);
            assertEquals("Cannot backfill public.foo[c,b]: " + reason, e.getMessage());
            ChangeSourceException again = assertThrows(ChangeSourceException.class, run::next);
            assertEquals("Backfill of public.foo[c,b] failed earlier", again.getMessage());
        }
        awaitNoBackfillBackend();
    }

    @Test
    void missingMetadataFailsBeforeTouchingUpstream() throws Exception {
        BackfillRequest req = CODEC.decodeBackfillRequest(
                "{\"table\":{\"schema\":\"public\",\"name\":\"foo\",\"metadata\":null},\"columns\":{\"b\":{\"attNum\":4}}}");
        SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class,
                () -> streamer(false, "the_pub").open(req));
        assertEquals("Cannot backfill public.foo[b]: Table metadata is missing", e.getMessage());
        assertEquals(0, backfillBackends());
    }

    // --- snapshot -----------------------------------------------------------------------------

    @Test
    void snapshotIsAtTheWatermarkAndIgnoresLaterWrites() throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("a"));
        Lsn before = currentLsn();
        try (BackfillRun run = streamer(false, "the_pub").open(req)) {
            Lsn after = currentLsn();
            Lsn at = Lsn.fromWatermark(run.watermark());
            assertTrue(at.compareTo(before) >= 0 && at.compareTo(after) <= 0, before + " <= " + at + " <= " + after);
            // The slot is gone as soon as the snapshot is imported.
            assertEquals(List.of(), snapshotSlots());
            exec("INSERT INTO foo VALUES (11, 12, 'new', null, null); UPDATE foo SET a = 'changed' WHERE id1 = 1");
            Backfill bf = assertInstanceOf(Backfill.class, run.next());
            assertEquals(10, bf.rowValues().size());
            assertEquals(List.of(1L, 2L, "1111111111"), bf.rowValues().get(0));
            assertEquals(run.watermark(), bf.watermark());
            assertInstanceOf(BackfillCompleted.class, run.next());
            assertNull(run.next());
            assertNull(run.next());
        }
        // The snapshot connection is closed after the final message.
        awaitNoBackfillBackend();
    }

    @Test
    void slotIsDroppedWhenInterruptedWhileOpening() throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("a"));
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> streamer(false, "the_pub").open(req));
        assertFalse(Thread.currentThread().isInterrupted());
        assertEquals(List.of(), snapshotSlots());
        awaitNoBackfillBackend();
    }

    @Test
    void slotIsDroppedWhenValidationFails() throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("a"));
        exec("ALTER TABLE foo RENAME a TO z");
        assertThrows(SchemaIncompatibilityException.class, () -> streamer(false, "the_pub").open(req));
        assertEquals(List.of(), snapshotSlots());
        awaitNoBackfillBackend();
    }

    @Test
    void orphanedSnapshotSlotsAreDropped() throws Exception {
        try (Connection repl = db.connectForReplication(); Statement st = repl.createStatement()) {
            exec("SELECT pg_create_logical_replication_slot('" + SLOT + "_bf_1700000000000', 'pgoutput')",
                    "SELECT pg_create_logical_replication_slot('" + SLOT + "_bf_old', 'pgoutput')",
                    "SELECT pg_create_logical_replication_slot('" + SLOT + "_other', 'pgoutput')",
                    "SELECT pg_create_logical_replication_slot('" + SLOT + "x_bf_1', 'pgoutput')");
            // A live run's temporary slot is active and must survive.
            st.execute("CREATE_REPLICATION_SLOT \"" + SLOT + "_bf_1800000000000\" TEMPORARY LOGICAL pgoutput");
            try {
                assertEquals(List.of(SLOT + "_bf_1700000000000"), streamer(false, "the_pub").dropOrphanedSlots());
                assertEquals(List.of(SLOT + "_bf_1800000000000", SLOT + "_bf_old", SLOT + "_other", SLOT + "x_bf_1"),
                        slotsLike(SLOT + "%"));
                assertEquals(List.of(), streamer(false, "the_pub").dropOrphanedSlots());
            } finally {
                st.execute("DROP_REPLICATION_SLOT \"" + SLOT + "_bf_1800000000000\"");
                exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name IN ('"
                        + SLOT + "_bf_old', '" + SLOT + "_other', '" + SLOT + "x_bf_1')");
            }
        }
    }

    @Test
    void aSnapshotSlotDiesWithItsSession() throws Exception {
        // What a crash between creating and dropping the slot leaves: Postgres drops a temporary
        // slot when its session goes away, and while the session lives no cleanup touches it.
        Connection repl = connector.connectForReplication(SnapshotTransaction.REPLICATION_APPLICATION_NAME);
        try {
            ReplicationSlots.createTemporarySlot(repl, SLOT + "_bf_42", Duration.ofSeconds(30));
            assertEquals(List.of(SLOT + "_bf_42"), snapshotSlots());
            assertEquals(List.of(), streamer(false, "the_pub").dropOrphanedSlots());
        } finally {
            repl.abort(Runnable::run);
        }
        awaitNoBackfillBackend();
        assertEquals(List.of(), snapshotSlots());
    }

    @Test
    void slotCreationFailureLeavesNothingBehind() throws Exception {
        BackfillRequest req = request("public", "foo", List.of("id1", "id2"), List.of("a"));
        PgBackfillStreamer streamer = new PgBackfillStreamer(connector, SLOT, List.of("the_pub"),
                new BackfillStreamOptions(false, 65536, Duration.ofSeconds(2)));
        try (Connection blocker = db.connect()) {
            // An older transaction with an xid keeps the slot's snapshot from being built.
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("INSERT INTO bar VALUES (1, 1, null, null, null)");
            }
            ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> streamer.open(req));
            assertEquals("55P03", ((SQLException) e.getCause()).getSQLState(), e.toString());
            blocker.rollback();
        }
        assertEquals(List.of(), snapshotSlots());
        awaitNoBackfillBackend();
    }

    // --- rows: filters, toast, no row key, types ------------------------------------------------

    @ParameterizedTest(name = "row filters (text={0})")
    @ValueSource(booleans = {false, true})
    void rowFilters(boolean text) throws Exception {
        exec("""
                CREATE TABLE filtered (id int PRIMARY KEY, v text);
                INSERT INTO filtered SELECT i, 'v' || i FROM generate_series(1, 10) i;
                CREATE PUBLICATION pub_low FOR TABLE filtered WHERE (id < 3);
                CREATE PUBLICATION pub_high FOR TABLE filtered WHERE (id > 8);
                CREATE PUBLICATION pub_all FOR TABLE filtered;
                """);
        BackfillRequest req = request("public", "filtered", List.of("id"), List.of("v"), "pub_low", "pub_high");
        List<DataOrSchemaChange> msgs = readAll(streamer(text, "pub_low", "pub_high"), req);
        Backfill bf = assertInstanceOf(Backfill.class, msgs.get(0));
        assertEquals("[[1,\"v1\"],[2,\"v2\"],[9,\"v9\"],[10,\"v10\"]]", CODEC.encodeValue(bf.rowValues()));
        assertEquals(4, bf.status().totalRows());
        // A publication without a filter publishes every row, and so does the backfill (as initial sync).
        msgs = readAll(streamer(text, "pub_low", "pub_all"), request("public", "filtered", List.of("id"), List.of("v"),
                "pub_low", "pub_all"));
        assertEquals(10, assertInstanceOf(Backfill.class, msgs.get(0)).rowValues().size());
        assertEquals(10, ((BackfillCompleted) msgs.get(1)).status().totalRows());
    }

    @ParameterizedTest(name = "toasted values updated during the backfill (text={0})")
    @ValueSource(booleans = {false, true})
    void toastedValues(boolean text) throws Exception {
        exec("""
                CREATE TABLE toasted (id int PRIMARY KEY, v text, j jsonb);
                ALTER TABLE toasted ALTER COLUMN v SET STORAGE EXTERNAL, ALTER COLUMN j SET STORAGE EXTERNAL;
                ALTER PUBLICATION the_pub ADD TABLE toasted;
                INSERT INTO toasted SELECT i, repeat(md5(i::text), 1000), jsonb_build_object('k', repeat('x', 5000))
                  FROM generate_series(1, 3) i;
                """);
        BackfillRequest req = request("public", "toasted", List.of("id"), List.of("v", "j"));
        try (BackfillRun run = streamer(text, "the_pub").open(req)) {
            exec("UPDATE toasted SET v = 'short', j = '{}' WHERE id = 2", "VACUUM toasted");
            List<List<Object>> rows = new ArrayList<>();
            DataOrSchemaChange msg;
            while ((msg = run.next()) instanceof Backfill bf) {
                rows.addAll(bf.rowValues());
            }
            // The snapshot still sees the old values: VACUUM cannot remove their TOAST chunks while it lives.
            assertEquals(3, rows.size());
            for (int i = 0; i < 3; i++) {
                assertEquals(i + 1L, rows.get(i).get(0));
                assertEquals(md5(i + 1).repeat(1000), rows.get(i).get(1));
                assertEquals("{\"k\": \"" + "x".repeat(5000) + "\"}", rows.get(i).get(2));
            }
            DownloadStatus status = ((BackfillCompleted) msg).status();
            assertTrue(status.totalBytes() > 3 * 32_000, "pg_column_size of toasted values: " + status);
        }
    }

    @ParameterizedTest(name = "table without a row key (text={0})")
    @ValueSource(booleans = {false, true})
    void tableWithoutRowKey(boolean text) throws Exception {
        exec("CREATE TABLE nokey (a int, b text); ALTER PUBLICATION the_pub ADD TABLE nokey");
        BackfillRequest req = request("public", "nokey", List.of(), List.of("a", "b"));
        // Empty: nothing to key, so the backfill just completes.
        List<DataOrSchemaChange> msgs = readAll(streamer(text, "the_pub"), req);
        assertEquals(1, msgs.size());
        BackfillCompleted done = assertInstanceOf(BackfillCompleted.class, msgs.get(0));
        assertEquals(List.of(), done.relation().rowKey().columns());
        assertEquals(0, done.status().totalRows());
        // Non-empty: the rows are sent with an empty row key, as upstream; the manager refuses them
        // (MissingRowKeyException).
        exec("INSERT INTO nokey VALUES (1, 'x'), (2, null)");
        msgs = readAll(streamer(text, "the_pub"), req);
        Backfill bf = assertInstanceOf(Backfill.class, msgs.get(0));
        assertEquals(List.of(), bf.relation().rowKey().columns());
        assertEquals("[[1,\"x\"],[2,null]]", CODEC.encodeValue(bf.rowValues()));
    }

    @ParameterizedTest(name = "values by type (text={0})")
    @CsvSource(delimiter = '|', value = {
        "false | [1,1,123456789098765432,{\"type\":\"Buffer\",\"data\":[0,255]},\"(1.5,2.5)\",\"1 year 2 mons 3 days 04:05:06\","
                + "\"happy\",\"{\\\"a\\\": 1}\",1547253035381.101,\"[1,2,null]\",\"[\\\"sad\\\",\\\"ok\\\"]\",null]",
        "true | [1,true,123456789098765432,{\"type\":\"Buffer\",\"data\":[0,255]},\"(1.5,2.5)\",\"1 year 2 mons 3 days 04:05:06\","
                + "\"happy\",\"{\\\"a\\\": 1}\",1547253035381.101,[1,2,null],[\"sad\",\"ok\"],null]"})
    void valuesByType(boolean text, String expected) throws Exception {
        exec("""
                CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
                CREATE TABLE types (id int PRIMARY KEY, bo bool, i8 int8, ba bytea, location point, duration interval,
                  m mood, jb jsonb, ts timestamp, ia int4[], ma mood[], n text);
                INSERT INTO types VALUES (1, true, 123456789098765432, '\\x00ff', '(1.5,2.5)',
                  '1 year 2 mons 3 days 04:05:06', 'happy', '{"a":1}', '2019-01-12 00:30:35.381101', '{1,2,NULL}',
                  '{sad,ok}', NULL);
                ALTER PUBLICATION the_pub ADD TABLE types;
                """);
        BackfillRequest req = request("public", "types", List.of("id"),
                List.of("bo", "i8", "ba", "location", "duration", "m", "jb", "ts", "ia", "ma", "n"));
        Backfill bf = assertInstanceOf(Backfill.class, readAll(streamer(text, "the_pub"), req).get(0));
        assertEquals(expected, CODEC.encodeValue(bf.rowValues().get(0)));
    }

    // --- chunking and memory ----------------------------------------------------------------------

    @ParameterizedTest(name = "a message per 64 KiB of COPY data (text={0})")
    @CsvSource({"false, 65, 1014", "true, 66, 1006"})
    void messagesPer64KiB(boolean text, int rowsPerMessage, int rowBytes) throws Exception {
        // Binary row: 2 (field count) + 4+4 (int4) + 4+1000 (text) = 1014 bytes, the 19-byte header
        // rides with the first row; text row: "1000\t" + 1000 + "\n" = 1006 bytes.
        exec("""
                CREATE TABLE big (id int PRIMARY KEY, payload text);
                INSERT INTO big SELECT i, repeat('p', 1000) FROM generate_series(1000, 1999) i;
                ALTER PUBLICATION the_pub ADD TABLE big;
                """);
        BackfillRequest req = request("public", "big", List.of("id"), List.of("payload"));
        List<Integer> sizes = new ArrayList<>();
        long rows = 0;
        try (PgBackfillRun run = (PgBackfillRun) streamer(text, "the_pub").open(req)) {
            DataOrSchemaChange msg;
            while ((msg = run.next()) instanceof Backfill bf) {
                sizes.add(bf.rowValues().size());
                rows += bf.rowValues().size();
                assertEquals(rows, bf.status().rows());
                assertEquals(1000, bf.status().totalRows());
                // Sized while decoding, without a walk over the values: per row its list and two
                // references, per value the overhead and its COPY length (4 digits in text, 4
                // bytes in binary; the 1000-byte payload).
                int perRow = BackfillCopyReader.ROW_OVERHEAD + 2 * 8 + 2 * BackfillCopyReader.VALUE_OVERHEAD + 4 + 1000;
                assertEquals(BackfillManager.CONTROL_COST + bf.rowValues().size() * perRow, run.estimatedSize(bf));
                int walked = BackfillManager.cost(bf);
                assertTrue(run.estimatedSize(bf) > walked / 2 && run.estimatedSize(bf) < walked * 2,
                        run.estimatedSize(bf) + " against " + walked);
            }
            assertInstanceOf(BackfillCompleted.class, msg);
            assertEquals(BackfillManager.cost(msg), run.estimatedSize(msg), "a completion is sized as before");
            assertEquals(1000 * (long) rowBytes + (text ? 0 : 19 + 2), run.copyBytes());
        }
        List<Integer> expected = new ArrayList<>();
        for (int left = 1000; left > 0; left -= rowsPerMessage) {
            expected.add(Math.min(left, rowsPerMessage));
        }
        assertEquals(expected, sizes);
    }

    @Test
    void largeTableIsReadInBoundedMessages() throws Exception {
        // 200,000 rows of 100-300 bytes (~40 MB of COPY data): no message may hold more than
        // 64 KiB + one row of it, whatever the table size.
        exec("""
                CREATE TABLE big (id int8 PRIMARY KEY, payload text);
                INSERT INTO big SELECT i, repeat(chr(97 + (i % 26)), 100 + (i % 201)) FROM generate_series(1, 200000) i;
                ALTER PUBLICATION the_pub ADD TABLE big;
                """);
        int maxRowBytes = 2 + 4 + 8 + 4 + 300;
        BackfillRequest req = request("public", "big", List.of("id"), List.of("payload"));
        long rows = 0;
        int messages = 0;
        try (PgBackfillRun run = (PgBackfillRun) streamer(false, "the_pub").open(req)) {
            DataOrSchemaChange msg;
            while ((msg = run.next()) instanceof Backfill bf) {
                rows += bf.rowValues().size();
                messages++;
                assertTrue(bf.rowValues().size() <= (65536 + maxRowBytes) / (2 + 4 + 8 + 4 + 100), "rows in one message");
            }
            assertEquals(200_000, ((BackfillCompleted) msg).status().rows());
            assertTrue(run.maxMessageCopyBytes() < 65536 + maxRowBytes + 19, "max " + run.maxMessageCopyBytes());
            assertTrue(messages >= run.copyBytes() / (65536 + maxRowBytes + 19), messages + " messages");
            assertTrue(run.copyBytes() > 40_000_000L, "copy bytes " + run.copyBytes());
        }
        assertEquals(200_000, rows);
    }

    // --- cancellation -------------------------------------------------------------------------------

    @Test
    void closeFromAnotherThreadStopsACopyInProgress() throws Exception {
        bigTable(20_000);
        BackfillRequest req = request("public", "big", List.of("id"), List.of("payload"));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            BackfillRun run = streamer(false, "the_pub").open(req);
            CountDownLatch first = new CountDownLatch(1);
            CountDownLatch proceed = new CountDownLatch(1);
            Future<Exception> reader = pool.submit(() -> {
                try {
                    run.next();
                    first.countDown();
                    proceed.await();
                    while (run.next() != null) {
                        // keep reading until the close fails a read
                    }
                    return null;
                } catch (ChangeSourceException | InterruptedException e) {
                    return e;
                }
            });
            assertTrue(first.await(30, TimeUnit.SECONDS));
            assertEquals(1, backfillBackends());
            run.close();
            proceed.countDown();
            Exception e = reader.get(30, TimeUnit.SECONDS);
            assertInstanceOf(ChangeSourceException.class, e);
            assertEquals("Backfill of public.big[payload] was closed", e.getMessage());
            run.close();
            awaitNoBackfillBackend();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closeCancelsAReadBlockedOnTheServer() throws Exception {
        bigTable(100);
        BackfillRequest req = request("public", "big", List.of("id"), List.of("payload"));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection locker = db.connect()) {
            BackfillRun run = streamer(false, "the_pub").open(req);
            locker.setAutoCommit(false);
            try (Statement st = locker.createStatement()) {
                st.execute("LOCK TABLE big IN ACCESS EXCLUSIVE MODE");
            }
            Future<Exception> reader = pool.submit(() -> {
                try {
                    run.next();
                    return null;
                } catch (ChangeSourceException | InterruptedException e) {
                    return e;
                }
            });
            awaitLockWait();
            run.close();
            Exception e = reader.get(30, TimeUnit.SECONDS);
            assertEquals("Backfill of public.big[payload] was closed", e.getMessage());
            // Cancelled on the server, so the session ends while the lock is still held.
            awaitNoBackfillBackend();
            locker.rollback();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void interruptedReadKeepsTheRunOpen() throws Exception {
        bigTable(1_000);
        BackfillRequest req = request("public", "big", List.of("id"), List.of("payload"));
        long rows = 0;
        try (BackfillRun run = streamer(false, "the_pub").open(req)) {
            rows += ((Backfill) run.next()).rowValues().size();
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, run::next);
            assertFalse(Thread.currentThread().isInterrupted());
            assertEquals(List.of(), snapshotSlots());
            DataOrSchemaChange msg;
            while ((msg = run.next()) instanceof Backfill bf) {
                rows += bf.rowValues().size();
                assertEquals(rows, bf.status().rows());
            }
            assertEquals(1_000, ((BackfillCompleted) msg).status().rows());
        }
        assertEquals(1_000, rows);
        awaitNoBackfillBackend();
    }

    @Test
    void interruptDuringTheCopyThenClose() throws Exception {
        bigTable(1_000);
        BackfillRequest req = request("public", "big", List.of("id"), List.of("payload"));
        BackfillRun run = streamer(false, "the_pub").open(req);
        run.next();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, run::next);
        run.close();
        ChangeSourceException e = assertThrows(ChangeSourceException.class, run::next);
        assertEquals("Backfill of public.big[payload] was closed", e.getMessage());
        assertEquals(List.of(), snapshotSlots());
        awaitNoBackfillBackend();
    }

    // --- helpers --------------------------------------------------------------------------------------

    private static PgBackfillStreamer streamer(boolean text, String... publications) {
        return new PgBackfillStreamer(connector, SLOT, List.of(publications), BackfillStreamOptions.defaults()
                .withTextCopy(text));
    }

    private static void bigTable(int rows) throws SQLException {
        exec("CREATE TABLE big (id int PRIMARY KEY, payload text);"
                + "INSERT INTO big SELECT i, repeat('p', 1000) FROM generate_series(1, " + rows + ") i;"
                + "ALTER PUBLICATION the_pub ADD TABLE big");
    }

    /** A request with the table's current metadata, as the stream would have reported it. */
    private static BackfillRequest request(String schema, String table, List<String> rowKey, List<String> columns,
            String... publications) throws SQLException {
        PublishedTable spec;
        try (Connection c = db.connect()) {
            spec = PublicationInfo.read(c, publications.length == 0 ? List.of("the_pub") : List.of(publications))
                    .schema().table(schema, table).orElseThrow();
        }
        Map<String, Object> key = new LinkedHashMap<>();
        rowKey.forEach(k -> key.put(k, Map.of("attNum", (long) spec.columns().get(k).pos())));
        Map<String, Object> cols = new LinkedHashMap<>();
        columns.forEach(k -> cols.put(k, Map.of("attNum", (long) spec.columns().get(k).pos())));
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("schemaOID", spec.schemaOid());
        meta.put("relationOID", spec.oid());
        meta.put("rowKey", key);
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("schema", schema);
        t.put("name", table);
        t.put("metadata", meta);
        return CODEC.decodeBackfillRequest(CODEC.encodeValue(Map.of("table", t, "columns", cols)));
    }

    private static List<DataOrSchemaChange> readAll(BackfillStreamer streamer, BackfillRequest req) throws Exception {
        try (BackfillRun run = streamer.open(req)) {
            return drain(run);
        }
    }

    private static List<DataOrSchemaChange> drain(BackfillRun run) throws Exception {
        List<DataOrSchemaChange> out = new ArrayList<>();
        DataOrSchemaChange msg;
        while ((msg = run.next()) != null) {
            out.add(msg);
        }
        return out;
    }

    private static String relationJson(Backfill bf) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema", bf.relation().schema());
        m.put("name", bf.relation().name());
        m.put("rowKey", Map.of("columns", bf.relation().rowKey().columns()));
        return CODEC.encodeValue(m);
    }

    private static String md5(int i) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT md5('" + i + "')")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void exec(String... sql) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        }
    }

    private static Lsn currentLsn() throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }

    private static List<String> snapshotSlots() throws SQLException {
        return slotsLike(SLOT + "\\_bf\\_%");
    }

    private static List<String> slotsLike(String pattern) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE '" + pattern + "' ORDER BY slot_name")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static int backfillBackends() throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'zero-backfill-%'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /**
     * A closed session's backend exits asynchronously and Postgres offers no notification of it,
     * so this polls pg_stat_activity, for at most 10 s.
     */
    private static void awaitNoBackfillBackend() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (backfillBackends() > 0) {
            assertTrue(System.nanoTime() < deadline, "a zero-backfill-* backend is still running");
            Thread.sleep(20);
        }
    }

    /** Polls until the backfill's statement waits for the table lock (no signal exists for it). */
    private static void awaitLockWait() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Connection c = db.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'zero-backfill-stream' "
                            + "AND wait_event_type = 'Lock'")) {
                rs.next();
                if (rs.getInt(1) == 1) {
                    return;
                }
            }
            assertTrue(System.nanoTime() < deadline, "the backfill never waited for the lock");
            Thread.sleep(20);
        }
    }
}

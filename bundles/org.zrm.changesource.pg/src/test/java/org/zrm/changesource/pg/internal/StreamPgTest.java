package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.*;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;
import org.zrm.watermark.Lsn;

/**
 * The replication stream against a real Postgres: every pgoutput message type through the change
 * maker, compared byte for byte with the JSON zero-cache produces (port of
 * {@code stream.pg.test.ts} and the data-path cases of {@code change-source.pg.test.ts}).
 */
@PostgresTest
class StreamPgTest {

    private static final Duration T = Duration.ofSeconds(20);

    private final PgDatabase db;
    private PgChangeSource source;
    private Connection c;

    StreamPgTest(PgDatabase db) {
        this.db = db;
    }

    @BeforeEach
    void setUp() throws Exception {
        source = source(settings(db.uri()));
        c = db.connect();
    }

    @AfterEach
    void tearDown() throws Exception {
        source.stop();
        exec(c, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE NOT active"
                + " AND database = current_database()");
        c.close();
    }

    @Test
    void logicalReplicationMessages() throws Exception {
        exec(c, "CREATE TABLE foo(id TEXT CONSTRAINT foo_pk PRIMARY KEY, int INT4, big BIGINT, flt FLOAT8,"
                        + " bool BOOLEAN, date DATE, time TIMESTAMPTZ, json JSON, num NUMERIC, ints INT4[],"
                        + " times TIMESTAMPTZ[], jsons JSON[])",
                "CREATE PUBLICATION foo_pub FOR TABLE foo",
                "CREATE SCHEMA IF NOT EXISTS my",
                "CREATE TABLE my.boo(a TEXT PRIMARY KEY, b TEXT, c TEXT, d TEXT)",
                "CREATE PUBLICATION my_pub FOR TABLES IN SCHEMA my");
        String start = createSlot(c, "msgs_slot");
        PgChangeStream stream = source.openStream("msgs_slot", List.of("foo_pub", "my_pub"), start);
        tx(c, "INSERT INTO foo (id, int, big, flt, bool, date, time, json, num, ints, times, jsons) VALUES ('bar', 123,"
                        + " '123456789098765432'::bigint, 456.789, true, '2025-03-19', '2019-01-12T00:30:35.381101032Z',"
                        + " '{\"zoo\":\"dar\"}', '12345.678909876', ARRAY[1, 2, 3],"
                        + " ARRAY['2019-01-12T00:30:35.654321Z'::timestamptz, '2019-01-12T00:30:35.123456Z'::timestamptz],"
                        + " ARRAY['1'::json, '\"2\"'::json, '{\"a\":123}'::json])",
                "UPDATE foo SET bool = false",
                "DELETE FROM foo",
                "INSERT INTO my.boo(a, b, c, d) VALUES ('1', '2', '3', '4')",
                "TRUNCATE my.boo, foo",
                "SELECT pg_logical_emit_message(true, 'foo/bar', 'baz')");
        List<ChangeStreamMessage> msgs = takeTransactions(stream, 1, T);
        List<String> json = encode(msgs);
        String foo = relationJson(oid(c, "foo"), "public", "foo", "\"id\"", "default");
        String boo = relationJson(oid(c, "my.boo"), "my", "boo", "\"a\"", "default");
        String row = "\"id\":\"bar\",\"int\":123,\"big\":123456789098765432,\"flt\":456.789,\"bool\":%s,"
                + "\"date\":1742342400000,\"time\":1547253035381.101,\"json\":\"{\\\"zoo\\\":\\\"dar\\\"}\","
                + "\"num\":12345.678909876,\"ints\":[1,2,3],\"times\":[1547253035654.321,1547253035123.456],"
                + "\"jsons\":[1,\"2\",{\"a\":123}]";
        assertEquals(7, json.size(), json.toString());
        assertBeginAndCommit(json.get(0), json.get(6));
        assertEquals("[\"data\",{\"tag\":\"insert\",\"relation\":" + foo + ",\"new\":{" + String.format(row, "true")
                + "}}]", json.get(1));
        assertEquals("[\"data\",{\"tag\":\"update\",\"relation\":" + foo + ",\"key\":null,\"old\":null,\"new\":{"
                + String.format(row, "false") + "}}]", json.get(2));
        assertEquals("[\"data\",{\"tag\":\"delete\",\"relation\":" + foo + ",\"key\":{\"id\":\"bar\"},\"old\":null}]",
                json.get(3));
        assertEquals("[\"data\",{\"tag\":\"insert\",\"relation\":" + boo
                + ",\"new\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\",\"d\":\"4\"}}]", json.get(4));
        assertEquals("[\"data\",{\"tag\":\"truncate\",\"cascade\":false,\"restartIdentity\":false,\"relations\":["
                + boo + "," + foo + "]}]", json.get(5));
        // Every message passes the codec's validation and re-encodes to the same bytes.
        for (String j : json) {
            assertEquals(j, CODEC.encode(CODEC.decodeChangeStreamMessage(j)));
        }
    }

    private static final Pattern BEGIN = Pattern.compile("\\[\"begin\",\\{\"tag\":\"begin\",\"commitLsn\":\"([0-9A-F]{8}/[0-9A-F]{8})\","
            + "\"commitTime\":(\\d{16}),\"xid\":(\\d+),\"json\":\"s\"},\\{\"commitWatermark\":\"([0-9a-z]+)\"}]");
    private static final Pattern COMMIT = Pattern.compile("\\[\"commit\",\\{\"tag\":\"commit\",\"flags\":0,"
            + "\"commitLsn\":\"([0-9A-F]{8}/[0-9A-F]{8})\",\"commitEndLsn\":\"([0-9A-F]{8}/[0-9A-F]{8})\","
            + "\"commitTime\":(\\d{16})},\\{\"watermark\":\"([0-9a-z]+)\"}]");

    /** Begin and commit carry the pgoutput fields spread as zero does, with watermark = lexi(commit LSN). */
    static void assertBeginAndCommit(String begin, String commit) {
        Matcher b = BEGIN.matcher(begin);
        Matcher cm = COMMIT.matcher(commit);
        assertTrue(b.matches(), begin);
        assertTrue(cm.matches(), commit);
        assertEquals(b.group(1), cm.group(1), "same commit LSN");
        assertEquals(Lsn.parse(b.group(1)).toWatermark(), b.group(4));
        assertEquals(b.group(4), cm.group(4));
        assertEquals(b.group(2), cm.group(3), "same commit time");
        assertTrue(Lsn.parse(cm.group(2)).compareTo(Lsn.parse(cm.group(1))) > 0, "end after start");
        long micros = Long.parseLong(b.group(2));
        assertTrue(Math.abs(micros / 1000 - System.currentTimeMillis()) < 600_000, "µs since the Unix epoch");
    }

    @Test
    void acks() throws Exception {
        exec(c, "CREATE TABLE ack(a TEXT PRIMARY KEY)", "CREATE PUBLICATION ack_pub FOR TABLE ack");
        String start = createSlot(c, "ack_slot");
        PgChangeStream stream = source.openStream("ack_slot", List.of("ack_pub"), start);
        exec(c, "INSERT INTO ack VALUES ('1')", "INSERT INTO ack VALUES ('2')", "INSERT INTO ack VALUES ('3')");
        List<ChangeStreamMessage> msgs = takeTransactions(stream, 3, T);
        CommitMessage first = (CommitMessage) msgs.get(2);
        CommitMessage second = (CommitMessage) msgs.get(5);
        ackCommit(stream, first);
        awaitConfirmedFlush("ack_slot", Lsn.fromWatermark(first.watermark()));
        ackCommit(stream, second);
        awaitConfirmedFlush("ack_slot", Lsn.fromWatermark(second.watermark()));
        assertEquals(second.commit().extra().get("commitLsn"),
                Lsn.parse(confirmedFlush(c, "ack_slot")).toPaddedString(), "acking the commit LSN exactly");
    }

    void awaitConfirmedFlush(String slot, Lsn expected) throws Exception {
        long deadline = System.nanoTime() + T.toNanos();
        while (true) {
            Lsn now = Lsn.parse(confirmedFlush(c, slot));
            if (now.equals(expected)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                assertEquals(expected, now);
            }
            // No signal exists for "the walsender processed our status update"; poll the catalog.
            Thread.sleep(50);
        }
    }

    @Test
    void toastedValuesUnchangedAcrossUpdateAreAbsent() throws Exception {
        exec(c, "CREATE TABLE toasty(id INT PRIMARY KEY, big TEXT, small TEXT)",
                "ALTER TABLE toasty ALTER COLUMN big SET STORAGE EXTERNAL",
                "CREATE TABLE toasty_full(id INT PRIMARY KEY, big TEXT, small TEXT)",
                "ALTER TABLE toasty_full REPLICA IDENTITY FULL",
                "CREATE PUBLICATION toast_pub FOR TABLE toasty, toasty_full");
        String start = createSlot(c, "toast_slot");
        PgChangeStream stream = source.openStream("toast_slot", List.of("toast_pub"), start);
        exec(c, "INSERT INTO toasty VALUES (1, repeat('x', 100000), 'a')",
                "INSERT INTO toasty_full VALUES (1, repeat('y', 100000), 'a')",
                "UPDATE toasty SET small = 'b'",
                "UPDATE toasty_full SET small = 'b'");
        List<ChangeStreamMessage> msgs = takeTransactions(stream, 4, T);
        Map<String, Object> inserted = ((org.zrm.protocol.Insert) data(msgs.get(1))).newRow();
        assertEquals(100000, ((String) inserted.get("big")).length());
        org.zrm.protocol.Update u = (org.zrm.protocol.Update) data(msgs.get(7));
        assertEquals(Map.of("id", 1L, "small", "b"), u.newRow(), "unchanged TOAST column is absent, not null");
        assertTrue(!u.newRow().containsKey("big"));
        String json = CODEC.encode(msgs.get(7));
        assertTrue(json.endsWith(",\"key\":null,\"old\":null,\"new\":{\"id\":1,\"small\":\"b\"}}]"), json);
        // With REPLICA IDENTITY FULL the old row supplies the unchanged value.
        org.zrm.protocol.Update full = (org.zrm.protocol.Update) data(msgs.get(10));
        assertEquals(100000, ((String) full.newRow().get("big")).length());
        assertEquals("b", full.newRow().get("small"));
        assertEquals("a", full.key().get("small"), "key = the full old row");
    }

    static org.zrm.protocol.DataOrSchemaChange data(ChangeStreamMessage m) {
        return ((ChangeStreamMessage.DataMessage) m).change();
    }

    @Test
    void everyReplicaIdentityMode() throws Exception {
        exec(c, "CREATE TABLE ri_default(id INT PRIMARY KEY, v TEXT)",
                "CREATE TABLE ri_index(a INT NOT NULL, b INT NOT NULL, v TEXT)",
                "CREATE UNIQUE INDEX ri_index_ab ON ri_index(a, b)",
                "ALTER TABLE ri_index REPLICA IDENTITY USING INDEX ri_index_ab",
                "CREATE TABLE ri_full(id INT PRIMARY KEY, v TEXT)",
                "ALTER TABLE ri_full REPLICA IDENTITY FULL",
                "CREATE TABLE ri_nothing(id INT PRIMARY KEY, v TEXT)",
                "ALTER TABLE ri_nothing REPLICA IDENTITY NOTHING",
                "CREATE PUBLICATION ri_pub FOR TABLE ri_default, ri_index, ri_full",
                "CREATE PUBLICATION ri_ins_pub FOR TABLE ri_nothing WITH (publish = 'insert')");
        String start = createSlot(c, "ri_slot");
        PgChangeStream stream = source.openStream("ri_slot", List.of("ri_pub", "ri_ins_pub"), start);
        tx(c, "INSERT INTO ri_default VALUES (1, 'a')", "UPDATE ri_default SET v = 'b'",
                "UPDATE ri_default SET id = 2", "DELETE FROM ri_default");
        tx(c, "INSERT INTO ri_index VALUES (1, 2, 'a')", "UPDATE ri_index SET v = 'b'",
                "UPDATE ri_index SET b = 3", "DELETE FROM ri_index");
        tx(c, "INSERT INTO ri_full VALUES (1, 'a')", "UPDATE ri_full SET v = 'b'", "DELETE FROM ri_full");
        tx(c, "INSERT INTO ri_nothing VALUES (1, 'a')");
        List<String> j = encode(takeTransactions(stream, 4, T));
        String def = relationJson(oid(c, "ri_default"), "public", "ri_default", "\"id\"", "default");
        String idx = relationJson(oid(c, "ri_index"), "public", "ri_index", "\"a\",\"b\"", "index");
        String full = relationJson(oid(c, "ri_full"), "public", "ri_full", "\"id\",\"v\"", "full");
        String nothing = relationJson(oid(c, "ri_nothing"), "public", "ri_nothing", "", "nothing");
        assertEquals(List.of(
                "[\"data\",{\"tag\":\"insert\",\"relation\":" + def + ",\"new\":{\"id\":1,\"v\":\"a\"}}]",
                "[\"data\",{\"tag\":\"update\",\"relation\":" + def + ",\"key\":null,\"old\":null,\"new\":{\"id\":1,\"v\":\"b\"}}]",
                "[\"data\",{\"tag\":\"update\",\"relation\":" + def + ",\"key\":{\"id\":1},\"old\":null,\"new\":{\"id\":2,\"v\":\"b\"}}]",
                "[\"data\",{\"tag\":\"delete\",\"relation\":" + def + ",\"key\":{\"id\":2},\"old\":null}]"),
                j.subList(1, 5));
        assertEquals(List.of(
                "[\"data\",{\"tag\":\"insert\",\"relation\":" + idx + ",\"new\":{\"a\":1,\"b\":2,\"v\":\"a\"}}]",
                "[\"data\",{\"tag\":\"update\",\"relation\":" + idx + ",\"key\":null,\"old\":null,\"new\":{\"a\":1,\"b\":2,\"v\":\"b\"}}]",
                "[\"data\",{\"tag\":\"update\",\"relation\":" + idx + ",\"key\":{\"a\":1,\"b\":2},\"old\":null,\"new\":{\"a\":1,\"b\":3,\"v\":\"b\"}}]",
                "[\"data\",{\"tag\":\"delete\",\"relation\":" + idx + ",\"key\":{\"a\":1,\"b\":3},\"old\":null}]"),
                j.subList(7, 11));
        assertEquals(List.of(
                "[\"data\",{\"tag\":\"insert\",\"relation\":" + full + ",\"new\":{\"id\":1,\"v\":\"a\"}}]",
                "[\"data\",{\"tag\":\"update\",\"relation\":" + full + ",\"key\":{\"id\":1,\"v\":\"a\"},\"old\":{\"id\":1,\"v\":\"a\"},\"new\":{\"id\":1,\"v\":\"b\"}}]",
                "[\"data\",{\"tag\":\"delete\",\"relation\":" + full + ",\"key\":{\"id\":1,\"v\":\"b\"},\"old\":{\"id\":1,\"v\":\"b\"}}]"),
                j.subList(13, 16));
        assertEquals("[\"data\",{\"tag\":\"insert\",\"relation\":" + nothing + ",\"new\":{\"id\":1,\"v\":\"a\"}}]",
                j.get(18));
    }

    @Test
    void truncateFlagsAndMultipleTables() throws Exception {
        exec(c, "CREATE TABLE t_parent(id SERIAL PRIMARY KEY)",
                "CREATE TABLE t_child(id INT PRIMARY KEY, p INT REFERENCES t_parent(id))",
                "CREATE TABLE t_other(id INT PRIMARY KEY)",
                "CREATE PUBLICATION t_pub FOR TABLE t_parent, t_child, t_other");
        String start = createSlot(c, "t_slot");
        PgChangeStream stream = source.openStream("t_slot", List.of("t_pub"), start);
        exec(c, "TRUNCATE t_parent CASCADE", "TRUNCATE t_other RESTART IDENTITY",
                "TRUNCATE t_parent, t_other RESTART IDENTITY CASCADE");
        List<String> j = encode(takeTransactions(stream, 3, T));
        String parent = relationJson(oid(c, "t_parent"), "public", "t_parent", "\"id\"", "default");
        String child = relationJson(oid(c, "t_child"), "public", "t_child", "\"id\"", "default");
        String other = relationJson(oid(c, "t_other"), "public", "t_other", "\"id\"", "default");
        assertEquals("[\"data\",{\"tag\":\"truncate\",\"cascade\":true,\"restartIdentity\":false,\"relations\":["
                + parent + "," + child + "]}]", j.get(1));
        assertEquals("[\"data\",{\"tag\":\"truncate\",\"cascade\":false,\"restartIdentity\":true,\"relations\":["
                + other + "]}]", j.get(4));
        assertEquals("[\"data\",{\"tag\":\"truncate\",\"cascade\":true,\"restartIdentity\":true,\"relations\":["
                + parent + "," + other + "," + child + "]}]", j.get(7));
    }

    @Test
    void multiTableTransactionKeepsOrderAndOneWatermark() throws Exception {
        exec(c, "CREATE TABLE m1(id INT PRIMARY KEY)", "CREATE TABLE m2(id INT PRIMARY KEY)",
                "CREATE TABLE unpublished(id INT PRIMARY KEY)", "CREATE PUBLICATION m_pub FOR TABLE m1, m2");
        String start = createSlot(c, "m_slot");
        PgChangeStream stream = source.openStream("m_slot", List.of("m_pub"), start);
        tx(c, "INSERT INTO m1 VALUES (1)", "INSERT INTO m2 VALUES (1)", "INSERT INTO unpublished VALUES (1)",
                "INSERT INTO m1 VALUES (2)", "UPDATE m2 SET id = 5");
        List<ChangeStreamMessage> msgs = takeTransactions(stream, 1, T);
        List<String> j = encode(msgs);
        assertEquals(6, j.size(), j.toString());
        assertTrue(j.get(1).contains("\"name\":\"m1\"") && j.get(1).contains("\"new\":{\"id\":1}"));
        assertTrue(j.get(2).contains("\"name\":\"m2\"") && j.get(2).contains("\"new\":{\"id\":1}"));
        assertTrue(j.get(3).contains("\"name\":\"m1\"") && j.get(3).contains("\"new\":{\"id\":2}"));
        assertTrue(j.get(4).contains("\"key\":{\"id\":1}") && j.get(4).contains("\"new\":{\"id\":5}"));
        assertEquals(((BeginMessage) msgs.get(0)).commitWatermark(), ((CommitMessage) msgs.get(5)).watermark());
    }

    @Test
    void startAfterConfirmedFlushReplaysNothingTwiceAndLosesNothing() throws Exception {
        exec(c, "CREATE TABLE r(id INT PRIMARY KEY)", "CREATE PUBLICATION r_pub FOR TABLE r");
        String start = createSlot(c, "r_slot");
        PgChangeStream first = source.openStream("r_slot", List.of("r_pub"), start);
        exec(c, "INSERT INTO r VALUES (1)", "INSERT INTO r VALUES (2)", "INSERT INTO r VALUES (3)");
        List<ChangeStreamMessage> msgs = takeTransactions(first, 3, T);
        ackCommit(first, msgs.get(2));
        awaitConfirmedFlush("r_slot", Lsn.fromWatermark(((CommitMessage) msgs.get(2)).watermark()));
        first.close();
        assertThrows(ChangeStreamClosedException.class, first::take);

        // Not acked beyond commit 1: restarting after commit 1 replays 2 and 3 ...
        PgChangeStream second = source.openStream("r_slot", List.of("r_pub"),
                ((CommitMessage) msgs.get(2)).watermark());
        exec(c, "INSERT INTO r VALUES (4)");
        List<ChangeStreamMessage> replay = takeTransactions(second, 3, T);
        assertEquals(List.of(encode(msgs).get(4), encode(msgs).get(7)),
                List.of(encode(replay).get(1), encode(replay).get(4)), "same changes, same order");
        assertEquals(((CommitMessage) msgs.get(5)).watermark(), ((CommitMessage) replay.get(2)).watermark());
        assertTrue(encode(replay).get(7).contains("\"new\":{\"id\":4}"));
        second.close();

        // ... and restarting after commit 2 (with a minor version, which is ignored) starts at 3.
        PgChangeStream third = source.openStream("r_slot", List.of("r_pub"),
                ((CommitMessage) msgs.get(5)).watermark() + ".01");
        List<ChangeStreamMessage> after = takeTransactions(third, 2, T);
        assertTrue(encode(after).get(1).contains("\"new\":{\"id\":3}"), encode(after).toString());
        assertTrue(encode(after).get(4).contains("\"new\":{\"id\":4}"), encode(after).toString());
    }

    @Test
    void automaticAcksForNonPublicationLsnAdvancement() throws Exception {
        exec(c, "CREATE TABLE pub_t(id INT PRIMARY KEY)", "CREATE TABLE unpub_t(id INT PRIMARY KEY)",
                "CREATE PUBLICATION auto_pub FOR TABLE pub_t");
        String start = createSlot(c, "auto_slot");
        Lsn initial = Lsn.parse(confirmedFlush(c, "auto_slot"));
        PgChangeStream stream = source.openStream("auto_slot", List.of("auto_pub"), start);
        for (int i = 0; i < 20; i++) {
            exec(c, "INSERT INTO unpub_t VALUES (" + i + ")");
        }
        Lsn written = Lsn.parse(queryString(c, "SELECT pg_current_wal_lsn()"));
        // Keepalives without reply request are confirmed by the source itself while nothing is
        // outstanding; Postgres sends one when it has caught up with the WAL.
        long deadline = System.nanoTime() + T.toNanos();
        while (Lsn.parse(confirmedFlush(c, "auto_slot")).compareTo(initial) <= 0) {
            assertTrue(System.nanoTime() < deadline, "confirmed_flush_lsn never advanced");
            Thread.sleep(50);
        }
        assertTrue(Lsn.parse(confirmedFlush(c, "auto_slot")).compareTo(written) >= 0
                || Lsn.parse(confirmedFlush(c, "auto_slot")).compareTo(initial) > 0);
        assertEquals(null, stream.poll(Duration.ZERO) instanceof BeginMessage ? "begin" : null,
                "no transaction for unpublished changes");
    }

    @Test
    void shardDdlMessagesAreReadAndMalformedOnesRequireReset() throws Exception {
        exec(c, "CREATE TABLE d(id INT PRIMARY KEY)", "CREATE PUBLICATION d_pub FOR TABLE d");
        String start = createSlot(c, "d_slot");
        PgChangeStream stream = source.openStream("d_slot", List.of("d_pub"), start);
        tx(c, "INSERT INTO d VALUES (1)",
                "SELECT pg_logical_emit_message(true, 'zero/0/ddl', '{\"type\":\"ddlStart\",\"version\":1,"
                        + "\"previousSchema\":null,\"schema\":{\"tables\":[],\"indexes\":[]},"
                        + "\"event\":{\"tag\":\"ALTER TABLE\"},\"context\":{\"query\":\"ALTER TABLE d\"}}')",
                "SELECT pg_logical_emit_message(true, 'zero/1/ddl', 'not json, other shard')",
                "SELECT pg_logical_emit_message(true, 'zero/0/other', 'unknown suffix')");
        List<ChangeStreamMessage> ok = takeTransactions(stream, 1, T);
        assertEquals(3, ok.size(), encode(ok).toString());

        tx(c, "INSERT INTO d VALUES (2)", "SELECT pg_logical_emit_message(true, 'zero/0/ddl', '{broken')",
                "INSERT INTO d VALUES (3)");
        exec(c, "INSERT INTO d VALUES (4)");
        List<ChangeStreamMessage> failed = takeUntil(stream, m -> m instanceof ControlMessage, T);
        List<ChangeStreamMessage> data = failed.stream()
                .filter(m -> !(m instanceof ChangeStreamMessage.StatusMessage)).toList();
        assertInstanceOf(BeginMessage.class, data.get(0));
        assertTrue(CODEC.encode(data.get(1)).contains("\"new\":{\"id\":2}"));
        assertInstanceOf(RollbackMessage.class, data.get(2));
        String control = CODEC.encode(data.get(3));
        assertTrue(control.startsWith("[\"control\",{\"tag\":\"reset-required\",\"message\":\"Unable to continue"
                + " replication from LSN "), control);
        assertTrue(control.contains("\"errorDetails\":{\"error\":\"Unable to continue replication from LSN "), control);
        assertTrue(control.contains("\"reason\":\"MalformedDdlEventException: DDL event is not valid JSON"), control);
        // Sticky: later transactions produce nothing, while the stream keeps being drained.
        ChangeStreamMessage next = stream.poll(Duration.ofSeconds(1));
        assertTrue(next == null || next instanceof ChangeStreamMessage.StatusMessage, String.valueOf(next));
    }

    @Test
    void oversizedMessageStopsTheStreamWithAClearError() throws Exception {
        exec(c, "CREATE TABLE huge(id INT PRIMARY KEY, v TEXT)", "CREATE PUBLICATION huge_pub FOR TABLE huge");
        String start = createSlot(c, "huge_slot");
        PgChangeSource small = source(new PgSourceSettings(db.uri(), SHARD, List.of(), "zero.db", 0, 0, 0.75, 5, 10,
                4096, 16, 1 << 20));
        try {
            PgChangeStream stream = small.openStream("huge_slot", List.of("huge_pub"), start);
            exec(c, "INSERT INTO huge VALUES (1, repeat('z', 10000))");
            ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class,
                    () -> takeTransactions(stream, 1, T));
            assertTrue(e.getMessage().contains("exceeds replication.maxMessageBytes (4096)"), e.getMessage());
        } finally {
            small.stop();
        }
    }

    @Test
    void missingPublicationIsARetryableErrorThatSaysWhatToDo() throws Exception {
        exec(c, "CREATE TABLE np(id INT PRIMARY KEY)", "CREATE PUBLICATION np_pub FOR TABLE np");
        String start = createSlot(c, "np_slot");
        PgChangeStream stream = source.openStream("np_slot", List.of("np_pub", "no_such_pub"), start);
        exec(c, "INSERT INTO np VALUES (1)");
        ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> takeTransactions(stream, 1, T));
        assertTrue(e.isRetryable());
        assertTrue(e.getMessage().contains("no_such_pub"), e.getMessage());
        assertTrue(e.getMessage().contains("create the publication upstream or correct app.publications"),
                e.getMessage());
    }

    @Test
    void mixedCasePublicationNamesAreQuoted() throws Exception {
        // QUIRK decision: upstream passes names unquoted and Postgres down-cases them; we quote them.
        exec(c, "CREATE TABLE mc(id INT PRIMARY KEY)", "CREATE PUBLICATION \"MixedPub\" FOR TABLE mc");
        String start = createSlot(c, "mc_slot");
        PgChangeStream stream = source.openStream("mc_slot", List.of("MixedPub"), start);
        exec(c, "INSERT INTO mc VALUES (1)");
        assertEquals(3, takeTransactions(stream, 1, T).size());
    }

    @Test
    void slotActiveForAnotherStreamIsRetriedABoundedNumberOfTimes() throws Exception {
        exec(c, "CREATE TABLE busy(id INT PRIMARY KEY)", "CREATE PUBLICATION busy_pub FOR TABLE busy");
        String start = createSlot(c, "busy_slot");
        PgChangeStream first = source.openStream("busy_slot", List.of("busy_pub"), start);
        long t0 = System.nanoTime();
        ChangeSourceException e = assertThrows(ChangeSourceException.class,
                () -> source.openStream("busy_slot", List.of("busy_pub"), start));
        assertTrue(e.getMessage().startsWith("exceeded max attempts (6) to start the Postgres stream"), e.getMessage());
        assertTrue(e.isRetryable());
        // 10+20+40+80+160 ms of back-off between the six attempts.
        assertTrue(Duration.ofNanos(System.nanoTime() - t0).toMillis() >= 300);
        exec(c, "INSERT INTO busy VALUES (1)");
        assertEquals(3, takeTransactions(first, 1, T).size(), "the first stream is unaffected");
    }
}

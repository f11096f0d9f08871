package org.zrm.changesource.pg.internal.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.stream.PublishedJson.*;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;

/**
 * The DDL handler's event parsing and state: effective tag across nested events, legacy events
 * without {@code previousSchema}, unknown types, malformed events, validation errors as
 * reset-required, and the delayed replica-identity fix.
 */
class SchemaChangeHandlerTest {

    private static final String S0 = schemaJson(List.of(), List.of());
    private static final String FOO = table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true));
    private static final String FOO_PKEY = index("public", "foo", "foo_pkey", true, true, false, "\"id\":\"ASC\"");
    private static final String S1 = schemaJson(List.of(FOO), List.of(FOO_PKEY));
    private static final String S2 = schemaJson(List.of(table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true),
            text("c", 2, false))), List.of(FOO_PKEY));

    private final RecordingExecutor executor = new RecordingExecutor();
    private final AtomicInteger opened = new AtomicInteger();
    private final CountDownLatch fixRan = new CountDownLatch(1);
    private final SchemaChangeHandler handler = new SchemaChangeHandler(CODEC, TableValidator.strict(), executor, () -> {
        opened.incrementAndGet();
        fixRan.countDown();
        throw new SQLException("no database in this test");
    });

    @AfterEach
    void tearDown() {
        executor.shutdownNow();
    }

    private static PgOutputMessage.Message msg(String json) {
        return new PgOutputMessage.Message(1, 0x10, "zero/0/ddl", json.getBytes(StandardCharsets.UTF_8));
    }

    private List<String> handle(String json) {
        return handler.handle(0x10, msg(json)).stream()
                .map(m -> CODEC.encodeChange(((DataMessage) m).change())).toList();
    }

    private List<String> tags(String json) {
        return handler.handle(0x10, msg(json)).stream().map(m -> ((DataMessage) m).change().tag()).toList();
    }

    private static boolean backfilled(String change) {
        return change.contains("\"backfill\"");
    }

    @Test
    void startWithoutChangeEmitsNothingThenUpdateUsesTheStartTag() {
        assertEquals(List.of(), handle("{\"type\":\"ddlStart\",\"version\":1,\"previousSchema\":null,\"schema\":" + S0
                + ",\"event\":{\"tag\":\"CREATE TABLE\"},\"context\":{\"query\":\"CREATE TABLE foo\"}}"));
        List<String> out = handle(event("ddlUpdate", S0, S1, "CREATE TABLE", "CREATE TABLE foo"));
        assertEquals(2, out.size());
        assertFalse(backfilled(out.get(0)), out.get(0));
    }

    @Test
    void nestedStartStartEndEnd() {
        // [1] start CREATE TABLE; [2] a nested start (another event trigger's ALTER TABLE) that already
        // sees the new table; [3] the nested end; [4] the outer end.
        handle("{\"type\":\"ddlStart\",\"version\":1,\"previousSchema\":null,\"schema\":" + S0
                + ",\"event\":{\"tag\":\"CREATE TABLE\"},\"context\":{\"query\":\"q\"}}");
        List<String> nested = handle(event("ddlStart", S0, S1, "ALTER TABLE", "q"));
        assertEquals(2, nested.size());
        assertFalse(backfilled(nested.get(0)), "the tag of the outer start decides: " + nested.get(0));
        // After a start the tag of that start decides; here the nested start's ALTER TABLE.
        List<String> end = handle(event("ddlUpdate", S1, S2, "ALTER TABLE", "q"));
        assertFalse(backfilled(end.get(0)), end.get(0));
        // After an update, the update's own tag.
        List<String> second = handle(event("ddlUpdate", S2, S1, "ALTER TABLE", "q"));
        assertEquals(List.of("{\"tag\":\"drop-column\",\"table\":{\"schema\":\"public\",\"name\":\"foo\"},\"column\":\"c\"}"),
                second);
    }

    @Test
    void aKeylessTableIsAllowedWithinATransactionAndRejectedWhenItCommits() {
        String keyless = schemaJson(List.of(table(101, "public", "bar", 'd', "[]", text("a", 1, true))), List.of());
        String keyed = schemaJson(List.of(table(101, "public", "bar", 'd', "[\"a\"]", text("a", 1, true))),
                List.of(index("public", "bar", "bar_pkey", true, true, false, "\"a\":\"ASC\"")));
        // CREATE TABLE bar(a text not null); ALTER TABLE bar ADD PRIMARY KEY (a); in one transaction.
        assertEquals(List.of("create-table"), tags(event("ddlUpdate", S0, keyless, "CREATE TABLE", "CREATE TABLE bar")));
        assertEquals(List.of("update-table-metadata", "create-index"),
                tags(event("ddlUpdate", keyless, keyed, "ALTER TABLE", "ALTER TABLE bar ADD PRIMARY KEY (a)")));
        handler.beforeCommit(); // the committed schema has a key

        // The same CREATE TABLE committed on its own halts, with the event's query as context.
        tags(event("ddlUpdate", keyed, S0, "DROP TABLE", "DROP TABLE bar"));
        handler.beforeCommit();
        tags(event("ddlUpdate", S0, keyless, "CREATE TABLE", "CREATE TABLE bar"));
        UnsupportedSchemaChangeException e = org.junit.jupiter.api.Assertions.assertThrows(
                UnsupportedSchemaChangeException.class, handler::beforeCommit);
        assertEquals("UnsupportedTableSchemaError: Table \"bar\" has no PRIMARY KEY and no UNIQUE index over NOT NULL"
                + " columns. Add a primary key (or a unique index on non-null columns) so that its rows can be"
                + " identified and synced to clients.", e.description());
        assertEquals("CREATE TABLE bar", e.context().get("query"));
        handler.beforeCommit(); // reported once, for the transaction that committed it
    }

    @Test
    void effectiveTagRules() {
        DdlEvent start = DdlEvent.parse(event("ddlStart", S0, S0, "CREATE TABLE", "q"), CODEC);
        DdlEvent update = DdlEvent.parse(event("ddlUpdate", S0, S0, "ALTER TABLE", "q"), CODEC);
        DdlEvent snapshot = DdlEvent.parse(event("schemaSnapshot", S0, S0, "COMMENT", "q"), CODEC);
        assertEquals("CREATE TABLE", SchemaChangeHandler.effectiveTag(start, update));
        assertEquals("CREATE TABLE", SchemaChangeHandler.effectiveTag(start, snapshot));
        assertEquals("ALTER TABLE", SchemaChangeHandler.effectiveTag(update, update));
        assertEquals("ALTER TABLE", SchemaChangeHandler.effectiveTag(null, update));
        assertEquals("UNKNOWN", SchemaChangeHandler.effectiveTag(update, snapshot));
        assertEquals("UNKNOWN", SchemaChangeHandler.effectiveTag(update, start));
        assertEquals("UNKNOWN", SchemaChangeHandler.effectiveTag(null, snapshot));
    }

    @Test
    void snapshotAfterUpdateIsBackfilled() {
        handle(event("ddlUpdate", S0, S0, "ALTER PUBLICATION", "q"));
        List<String> out = handle(event("schemaSnapshot", S0, S1, "COMMENT", "COMMENT ON PUBLICATION"));
        assertTrue(backfilled(out.get(0)), out.get(0));
    }

    @Test
    void legacyEventsWithoutPreviousSchemaUseThePreviousEvent() {
        assertEquals(List.of(), handle(event("ddlStart", null, S0, "CREATE TABLE", "q")));
        List<String> out = handle(event("ddlUpdate", null, S1, "CREATE TABLE", "q"));
        assertEquals(List.of("create-table", "create-index"), out.stream().map(s -> s.substring(8, s.indexOf("\",")))
                .toList());
        assertFalse(backfilled(out.get(0)));
        assertEquals(List.of("add-column"), tags(event("ddlUpdate", null, S2, "ALTER TABLE", "q")));
    }

    @Test
    void lastSchemaIsThatOfTheLastKnownEvent() {
        assertEquals(null, handler.lastSchema());
        handle(event("ddlUpdate", S0, S1, "CREATE TABLE", "q"));
        handle("{\"type\":\"other\"}");
        assertEquals(List.of("foo"), handler.lastSchema().tables().stream().map(t -> t.name()).toList());
    }

    @Test
    void legacyStartWithoutEventTagReadsAsUnknown() {
        DdlEvent e = DdlEvent.parse("{\"type\":\"ddlStart\",\"version\":1,\"schema\":" + S0
                + ",\"context\":{\"query\":\"q\"}}", CODEC);
        assertEquals("UNKNOWN", e.tag());
        assertFalse(e.previousSchemaPresent());
    }

    @Test
    void unknownTypeIsIgnoredAndLeavesTheStateAlone() {
        handle(event("ddlStart", null, S0, "CREATE TABLE", "q"));
        assertEquals(List.of(), handle("{\"type\":\"ddlSomethingNew\",\"whatever\":[1]}"));
        // Still the start's tag and schema: no backfill, and the diff starts from S0.
        List<String> out = handle(event("ddlUpdate", null, S1, "ALTER TABLE", "q"));
        assertEquals(2, out.size());
        assertFalse(backfilled(out.get(0)));
    }

    @Test
    void malformedEventsThrow() {
        assertMalformed("not json", "DDL event is not valid JSON");
        assertMalformed("[1]", "DDL event the event is not an object: array");
        assertMalformed("{\"version\":1}", "DDL event has no string \"type\"");
        assertMalformed(event("ddlUpdate", S0, S1, "ALTER TABLE", "q").replace("\"version\":1", "\"version\":2"),
                "DDL event ddlUpdate has unsupported version 2 (expected 1)");
        assertMalformed(event("ddlUpdate", S0, S1, "ALTER TABLE", "q").replace("\"version\":1,", ""),
                "DDL event ddlUpdate has unsupported version (none) (expected 1)");
        assertMalformed("{\"type\":\"ddlUpdate\",\"version\":1,\"event\":{\"tag\":\"X\"},\"context\":{\"query\":\"q\"}}",
                "DDL event schema is not an object: null");
        assertMalformed(event("ddlUpdate", S0, S1, "ALTER TABLE", "q").replace("\"previousSchema\":" + S0,
                "\"previousSchema\":null"), "DDL event ddlUpdate has a null \"previousSchema\"");
        assertMalformed(event("ddlUpdate", S0, S1, "ALTER TABLE", "q").replace("{\"query\":\"q\"}", "{}"),
                "DDL event context has no string \"query\"");
        assertMalformed(event("ddlUpdate", S0, S1, "ALTER TABLE", "q").replace("\"event\":{\"tag\":\"ALTER TABLE\"},", ""),
                "DDL event event is not an object: null");
        assertMalformed(event("ddlUpdate", S0, S1.replace("\"pos\":1", "\"pos\":\"1\""), "ALTER TABLE", "q"),
                "schema.tables[] public.foo.columns.id: \"pos\" must be a number");
        assertMalformed(event("ddlUpdate", S0, S1.replace("[\"id\"]", "null"), "ALTER TABLE", "q"),
                "schema.tables[] public.foo: \"primaryKey\" must be an array of strings");
        assertMalformed(event("ddlUpdate", S0, S1.replace("\"ASC\"", "\"UP\""), "ALTER TABLE", "q"),
                "schema.indexes[] public.foo_pkey.columns.id: direction must be ASC or DESC");
        assertMalformed(event("ddlUpdate", S0, S1.replace("\"replicaIdentity\":\"d\"", "\"replicaIdentity\":\"x\""),
                "ALTER TABLE", "q"), "schema.tables[] public.foo: \"replicaIdentity\" must be one of d, n, f, i");
    }

    private void assertMalformed(String json, String message) {
        MalformedDdlEventException e = assertThrows(MalformedDdlEventException.class, () -> handle(json));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void unsupportedTableBecomesResetRequiredWithReasonAndContext() {
        String nothing = schemaJson(List.of(FOO.replace("\"replicaIdentity\":\"d\"", "\"replicaIdentity\":\"n\"")),
                List.of(FOO_PKEY));
        ChangeMaker maker = new ChangeMaker("zero", 0, handler);
        List<ChangeStreamMessage> out = maker.makeChanges(0x16B374D848L,
                msg(event("ddlUpdate", S1, nothing, "ALTER TABLE", "ALTER TABLE foo REPLICA IDENTITY NOTHING")));
        assertEquals(List.of("[\"rollback\",{\"tag\":\"rollback\"}]",
                "[\"control\",{\"tag\":\"reset-required\",\"message\":\"Unable to continue replication from LSN 16/B374D848\","
                        + "\"errorDetails\":{\"error\":\"Unable to continue replication from LSN 16/B374D848\","
                        + "\"reason\":\"UnsupportedTableSchemaError: Table \\\"foo\\\" with REPLICA IDENTITY NOTHING cannot be"
                        + " replicated\",\"context\":{\"query\":\"ALTER TABLE foo REPLICA IDENTITY NOTHING\"}}}]"),
                out.stream().map(CODEC::encode).toList());
        assertTrue(maker.failed());
        assertEquals(List.of(), maker.makeChanges(0x16B374D849L, msg(event("ddlUpdate", S0, S1, "CREATE TABLE", "q"))));
    }

    @Test
    void malformedEventBecomesResetRequiredWithoutContext() {
        ChangeMaker maker = new ChangeMaker("zero", 0, handler);
        List<ChangeStreamMessage> out = maker.makeChanges(0x20, msg("{\"type\":\"ddlUpdate\",\"version\":7}"));
        assertEquals("[\"control\",{\"tag\":\"reset-required\",\"message\":\"Unable to continue replication from LSN 0/20\","
                + "\"errorDetails\":{\"error\":\"Unable to continue replication from LSN 0/20\",\"reason\":"
                + "\"MalformedDdlEventException: DDL event ddlUpdate has unsupported version 7 (expected 1)\"}}]",
                CODEC.encode(out.get(1)));
    }

    @Test
    void unsupportedSchemaChangeMessageIsUpstreams() {
        UnsupportedSchemaChangeException e = assertThrows(UnsupportedSchemaChangeException.class,
                () -> handle(event("ddlUpdate", S0, S1.replace("\"name\":\"foo\"", "\"name\":\"a/b\""), "ALTER TABLE", "q")));
        assertEquals("Replication halted. Resync the replica to recover: UnsupportedTableSchemaError: Table \"a/b\" has"
                + " invalid characters.", e.getMessage());
    }

    private static final String JOIN = schemaJson(List.of(table(100, "public", "j", 'd', "[]", text("a", 1, true),
            text("b", 2, true))), List.of(index("public", "j", "j_key", true, false, false, "\"a\":\"ASC\",\"b\":\"ASC\"")));

    @Test
    void replicaIdentityFixIsScheduledAndTheNextEventCancelsIt() throws Exception {
        // Hold the executor's only thread so that no fix can run before the test lets it.
        CountDownLatch release = new CountDownLatch(1);
        executor.execute(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        // (execute goes through schedule: forget the blocker)
        executor.scheduled.clear();
        executor.delaysMs.clear();
        handle(event("ddlUpdate", S0, JOIN, "CREATE TABLE", "q"));
        assertEquals(1, executor.scheduled.size());
        assertEquals(SchemaChangeHandler.REPLICA_IDENTITY_DELAY_MS, executor.delaysMs.get(0));
        handle(event("ddlUpdate", JOIN, JOIN, "CREATE INDEX", "q"));
        assertTrue(executor.scheduled.get(0).isCancelled());
        assertEquals(2, executor.scheduled.size());
        release.countDown();
        assertTrue(fixRan.await(10, TimeUnit.SECONDS));
        executor.scheduled.get(1).get(10, TimeUnit.SECONDS);
        // The error of the fix is logged, not thrown; only the surviving fix opened a connection.
        assertEquals(1, opened.get());
        // Even an event of unknown type cancels a pending fix.
        handle(event("ddlUpdate", JOIN, JOIN, "ALTER TABLE", "q"));
        handle("{\"type\":\"other\"}");
        assertTrue(executor.scheduled.get(2).isCancelled() || executor.scheduled.get(2).isDone());
    }

    @Test
    void noFixForTablesWithAPrimaryKey() {
        handle(event("ddlUpdate", S0, S1, "CREATE TABLE", "q"));
        assertEquals(0, executor.scheduled.size());
    }

    /** Records what the handler schedules. */
    private static final class RecordingExecutor extends ScheduledThreadPoolExecutor {
        final List<ScheduledFuture<?>> scheduled = new CopyOnWriteArrayList<>();
        final List<Long> delaysMs = new CopyOnWriteArrayList<>();

        RecordingExecutor() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            ScheduledFuture<?> f = super.schedule(command, delay, unit);
            scheduled.add(f);
            delaysMs.add(unit.toMillis(delay));
            return f;
        }
    }
}

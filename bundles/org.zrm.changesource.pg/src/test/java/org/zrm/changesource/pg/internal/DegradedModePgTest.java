package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.CODEC;
import static org.zrm.changesource.pg.internal.SourceFixture.SHARD;
import static org.zrm.changesource.pg.internal.SourceFixture.ackCommit;
import static org.zrm.changesource.pg.internal.SourceFixture.encode;
import static org.zrm.changesource.pg.internal.SourceFixture.exec;
import static org.zrm.changesource.pg.internal.SourceFixture.queryString;
import static org.zrm.changesource.pg.internal.SourceFixture.takeTransactions;
import static org.zrm.changesource.pg.internal.SourceFixture.tx;
import static org.zrm.changesource.pg.internal.SyncedShard.T;
import static org.zrm.changesource.pg.internal.SyncedShard.assertHaltsForMissingEventTriggers;
import static org.zrm.changesource.pg.internal.SyncedShard.next;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.setup.PublicationInfo;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.stream.ChangeMaker;
import org.zrm.changesource.pg.internal.stream.DegradedModeRelationHandler;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.testing.PostgresTest;

/**
 * Degraded mode (spec §3.2): a shard without event triggers streams data normally and halts with
 * reset-required on any schema change it cannot follow. Ports the ddlDetection = false cases of
 * upstream's {@code change-source.pg.test.ts}; each case gets a fresh upstream database and a real
 * initial sync.
 */
@PostgresTest
class DegradedModePgTest {

    /** Upstream's test schema: a row-filtered table, key orders, an index identity, a schema publication. */
    static final String SCHEMA = String.join("\n",
            "CREATE TABLE foo(id TEXT CONSTRAINT foo_pk PRIMARY KEY, int INT4, big BIGINT, flt FLOAT8, bool BOOLEAN,",
            "  timea TIMESTAMPTZ, timeb TIMESTAMPTZ, date DATE, time TIME, dates DATE[], times TIMESTAMP[], num NUMERIC);",
            "CREATE TABLE compound_key_same_order(a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (a, b));",
            "CREATE TABLE compound_key_reverse_order(a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (b, a));",
            "CREATE PUBLICATION zero_foo FOR TABLE foo WHERE (id != 'exclude-me'),",
            "  TABLE compound_key_same_order, compound_key_reverse_order;",
            "CREATE SCHEMA IF NOT EXISTS my;",
            "CREATE TABLE my.boo(a TEXT PRIMARY KEY, b TEXT, c TEXT, d TEXT);",
            "CREATE TABLE my.bar(a TEXT NOT NULL);",
            "CREATE UNIQUE INDEX bar_idx ON my.bar (a);",
            "ALTER TABLE my.bar REPLICA IDENTITY USING INDEX bar_idx;",
            "CREATE TABLE not_in_publication(a INT PRIMARY KEY);",
            "CREATE PUBLICATION zero_zero FOR TABLES IN SCHEMA my;");
    static final List<String> PUBLICATIONS = List.of("zero_foo", "zero_zero");

    /** Upstream's shard initialised with event triggers, then stripped of them ({@code withoutTriggers}). */
    private static SyncedShard withoutTriggers(PgCluster cluster, Path dir) throws Exception {
        SyncedShard shard = SyncedShard.start(cluster, dir, SCHEMA, PUBLICATIONS, null);
        try {
            shard.dropEventTriggers();
            return shard;
        } catch (Exception | Error e) {
            shard.close();
            throw e;
        }
    }

    /** {@code (before, after, what the reason names)}: upstream's cases, plus the difference each one shows. */
    static Stream<Arguments> schemaChanges() {
        String fooColumns = "Columns of table \"foo\" have changed";
        String booColumns = "Columns of table \"boo\" have changed";
        String withinTx = "relation has changed within the transaction: ";
        return Stream.of(
                Arguments.of("ALTER TABLE foo ADD COLUMN bar int4", null, fooColumns),
                Arguments.of("ALTER TABLE foo RENAME times TO timez", null, fooColumns),
                Arguments.of("ALTER TABLE foo DROP COLUMN date", null, fooColumns),
                Arguments.of("ALTER TABLE foo ALTER COLUMN times TYPE TIMESTAMPTZ[]", null, fooColumns),
                Arguments.of("ALTER TABLE foo ALTER COLUMN int SET NOT NULL", null, fooColumns),
                // rename a column and back: only the Relation message shows it
                Arguments.of("ALTER TABLE foo RENAME times TO timez", "ALTER TABLE foo RENAME timez TO times", withinTx),
                // a new table
                Arguments.of("CREATE TABLE my.oof(a TEXT PRIMARY KEY); INSERT INTO my.oof(a) VALUES ('1')", null,
                        "tables created or dropped"),
                // a new table that is dropped again
                Arguments.of("CREATE TABLE my.oof(a TEXT PRIMARY KEY); INSERT INTO my.oof(a) VALUES ('1')",
                        "DROP TABLE my.oof", "relation not in initialSchema: {\"tag\":\"relation\""),
                // rename a table and back
                Arguments.of("ALTER TABLE my.boo RENAME TO oof; INSERT INTO my.oof(a) VALUES ('1')",
                        "ALTER TABLE my.oof RENAME TO boo", withinTx),
                // drop a column and add it back
                Arguments.of("ALTER TABLE my.boo DROP d; ALTER TABLE my.boo ADD d TEXT; INSERT INTO my.boo(a) VALUES ('1')",
                        null, booColumns),
                // shift columns so that they look alike
                Arguments.of("ALTER TABLE my.boo DROP b; ALTER TABLE my.boo RENAME c TO b; ALTER TABLE my.boo RENAME d TO c;"
                        + " ALTER TABLE my.boo ADD d TEXT; INSERT INTO my.boo(a) VALUES ('1')", null, booColumns),
                // not in upstream's list: a table newly published by ALTER PUBLICATION
                Arguments.of("ALTER PUBLICATION zero_foo ADD TABLE not_in_publication;"
                        + " INSERT INTO not_in_publication VALUES (1)", null, "tables created or dropped"));
    }

    @ParameterizedTest(name = "halt on schema change when ddlDetection = false: {0} / {1}")
    @MethodSource("schemaChanges")
    void haltOnSchemaChange(String before, String after, String difference, PgCluster cluster, @TempDir Path dir)
            throws Exception {
        try (SyncedShard shard = withoutTriggers(cluster, dir); Connection c = shard.connect()) {
            ChangeStream stream = shard.stream();
            try {
                // A data-only transaction streams normally.
                exec(c, "INSERT INTO foo(id, int) VALUES('hello', 0)");
                assertInstanceOf(BeginMessage.class, next(stream));
                ChangeStreamMessage insert = next(stream);
                assertTrue(CODEC.encode(insert).contains("\"tag\":\"insert\""), CODEC.encode(insert));
                ChangeStreamMessage commit = next(stream);
                assertInstanceOf(CommitMessage.class, commit);
                ackCommit(stream, commit);

                List<String> statements = new ArrayList<>(List.of(before, "INSERT INTO foo(id, int) VALUES('wide', 1)",
                        "INSERT INTO foo(id, int) VALUES('world', 2)"));
                if (after != null) {
                    statements.add(after);
                }
                tx(c, statements.toArray(String[]::new));
                String reason = assertHaltsForMissingEventTriggers(stream);
                assertTrue(reason.startsWith("MissingEventTriggerSupport: " + difference), reason);

                // Sticky: nothing more is converted, the stream stays drained.
                exec(c, "INSERT INTO foo(id, int) VALUES('later', 3)");
                assertNothingButStatuses(stream, Duration.ofSeconds(1));
            } finally {
                stream.close();
            }
        }
    }

    @Test
    void noHaltWithoutSchemaChanges(PgCluster cluster, @TempDir Path dir) throws Exception {
        try (SyncedShard shard = withoutTriggers(cluster, dir); Connection c = shard.connect()) {
            ChangeStream stream = shard.stream();
            List<ChangeStreamMessage> first;
            try {
                // COMMENT is upstream's way to make event triggers emit a snapshot; without them it
                // changes nothing that is compared.
                tx(c, "COMMENT ON TABLE foo IS 'commented'", "COMMENT ON COLUMN my.boo.b IS 'commented'",
                        "INSERT INTO foo(id, int) VALUES('a', 1)", "UPDATE foo SET int = 2 WHERE id = 'a'",
                        "INSERT INTO compound_key_same_order VALUES ('x', 'y')",
                        // PRIMARY KEY (b, a): the Relation message flags a and b in column order
                        "INSERT INTO compound_key_reverse_order VALUES ('x', 'y')",
                        "INSERT INTO my.boo(a, b) VALUES ('1', 'one')", "INSERT INTO my.bar VALUES ('i')",
                        "UPDATE my.bar SET a = 'j'", "DELETE FROM my.boo");
                // Index changes need no halt: they are not compared.
                exec(c, "CREATE INDEX foo_int ON foo (int)", "INSERT INTO foo(id, int) VALUES('b', 3)");
                first = takeTransactions(stream, 2, T);
            } finally {
                stream.close();
            }
            assertEquals(List.of("begin", "insert", "update", "insert", "insert", "insert", "insert", "update", "delete",
                    "commit", "begin", "insert", "commit"), tags(first), encode(first).toString());
            ackCommit(stream, first.get(first.size() - 1));

            // A new walsender session sends every Relation message again: still no halt.
            stream = shard.source.startStream(((CommitMessage) first.get(first.size() - 1)).watermark(), List.of());
            try {
                exec(c, "INSERT INTO foo(id, int) VALUES('c', 4)", "INSERT INTO my.boo(a) VALUES ('2')",
                        "INSERT INTO compound_key_reverse_order VALUES ('p', 'q')");
                List<ChangeStreamMessage> second = takeTransactions(stream, 3, T);
                assertEquals(List.of("begin", "insert", "commit", "begin", "insert", "commit", "begin", "insert", "commit"),
                        tags(second), encode(second).toString());
            } finally {
                stream.close();
            }
        }
    }

    /**
     * The catalog query failing (here: refused) says nothing about the schema: the stream ends
     * retryably instead of halting, and a new stream converts the same transaction completely.
     */
    @Test
    void catalogQueryFailureIsRetryableNotAReset(PgCluster cluster, @TempDir Path dir) throws Exception {
        try (SyncedShard shard = withoutTriggers(cluster, dir); Connection c = shard.connect()) {
            String slot = queryString(c, "SELECT slot FROM " + SHARD.schema() + ".replicas");
            PublishedSchema initial = PublicationInfo.read(c, shard.state.publications()).schema();
            exec(c, "INSERT INTO foo(id, int) VALUES('kept', 1)");

            PgChangeStream failing = shard.source.openStream(slot, shard.state.publications(), shard.state.watermark(),
                    new DegradedModeRelationHandler(initial, () -> {
                        throw new SQLException("Connection to 127.0.0.1:1 refused", "08001");
                    }));
            ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> {
                while (true) {
                    ChangeStreamMessage m = failing.poll(T);
                    assertNotNull(m, "the stream neither failed nor delivered");
                    assertFalse(m instanceof ChangeStreamMessage.ControlMessage, () -> CODEC.encode(m));
                    assertFalse(m instanceof ChangeStreamMessage.RollbackMessage, () -> CODEC.encode(m));
                }
            });
            assertTrue(e.isRetryable(), e.toString());
            assertTrue(e.getMessage().contains("reading the published schema for the Relation message of public.foo:"
                    + " Connection to 127.0.0.1:1 refused (connection failed:"), e.getMessage());

            PgChangeStream retried = shard.source.openStream(slot, shard.state.publications(), shard.state.watermark(),
                    new DegradedModeRelationHandler(initial, () -> {
                        try (Connection q = shard.connect()) {
                            return PublicationInfo.read(q, shard.state.publications()).schema();
                        }
                    }));
            try {
                List<ChangeStreamMessage> tx = takeTransactions(retried, 1, T);
                assertEquals(List.of("begin", "insert", "commit"), tags(tx), encode(tx).toString());
                assertTrue(CODEC.encode(tx.get(1)).contains("\"id\":\"kept\""), CODEC.encode(tx.get(1)));
            } finally {
                retried.close();
            }
        }
    }

    /**
     * Upstream's manual workaround: {@code update_schemas()} emits a schemaSnapshot DDL message even
     * without event triggers, and it reaches the change maker's DDL handler inside its transaction.
     */
    @Test
    void updateSchemasEmitsASchemaSnapshotInDegradedMode(PgCluster cluster, @TempDir Path dir) throws Exception {
        try (SyncedShard shard = withoutTriggers(cluster, dir); Connection c = shard.connect()) {
            LinkedBlockingQueue<PgOutputMessage.Message> ddl = new LinkedBlockingQueue<>();
            PgChangeStream stream = shard.streamThrough(new ChangeMaker(SHARD.appId(), SHARD.shardNum(),
                    (lsn, message) -> {
                        ddl.add(message);
                        return List.of();
                    }, new DegradedModeRelationHandler(PublishedSchema.parse(initialSchema(c)), () -> {
                        try (Connection q = shard.connect()) {
                            return PublicationInfo.read(q, shard.state.publications()).schema();
                        }
                    })));
            try {
                exec(c, "SELECT " + SHARD.schema() + ".update_schemas()");
                List<ChangeStreamMessage> tx = takeTransactions(stream, 1, T);
                assertEquals(List.of("begin", "commit"), tags(tx), encode(tx).toString());
                PgOutputMessage.Message m = ddl.poll(10, TimeUnit.SECONDS);
                assertEquals(SHARD.appId() + "/" + SHARD.shardNum() + "/ddl", m.prefix());
                assertTrue(m.transactional());
                @SuppressWarnings("unchecked")
                Map<String, Object> event = (Map<String, Object>) CODEC.decodeValue(
                        new String(m.content(), StandardCharsets.UTF_8));
                assertEquals("schemaSnapshot", event.get("type"));
                assertEquals(1L, ((Number) event.get("version")).longValue());
                assertEquals(Map.of("tag", "MANUAL"), event.get("event"));
                assertTrue(((Map<?, ?>) event.get("schema")).containsKey("tables"), event.toString());
                assertTrue(ddl.isEmpty(), ddl.toString());

                // Data after it still streams: the snapshot is no schema change.
                exec(c, "INSERT INTO foo(id) VALUES ('after-snapshot')");
                List<ChangeStreamMessage> data = takeTransactions(stream, 1, T);
                assertEquals(List.of("begin", "insert", "commit"), tags(data), encode(data).toString());
            } finally {
                stream.close();
            }
        }
    }

    /**
     * A non-superuser upstream as a provider without event-trigger support has it: setup falls back
     * to degraded mode on its own, data streams, and the first schema change halts.
     */
    @Test
    void nonSuperuserUpstreamHaltsOnSchemaChange(PgCluster cluster, @TempDir Path dir) throws Exception {
        try (SyncedShard shard = SyncedShard.start(cluster, dir, SCHEMA, PUBLICATIONS, "degraded_replicator");
                Connection c = shard.connect()) {
            assertEquals("f", queryString(c, "SELECT \"ddlDetection\" FROM " + SHARD.schema() + ".\"shardConfig\""));
            assertEquals("0", queryString(c, "SELECT count(*) FROM pg_event_trigger"));
            ChangeStream stream = shard.stream();
            try {
                exec(c, "INSERT INTO my.boo(a) VALUES ('1')");
                List<ChangeStreamMessage> ok = takeTransactions(stream, 1, T);
                assertEquals(List.of("begin", "insert", "commit"), tags(ok), encode(ok).toString());
                ackCommit(stream, ok.get(2));

                tx(c, "ALTER TABLE my.boo ADD COLUMN e TEXT", "INSERT INTO my.boo(a, e) VALUES ('2', 'x')");
                String reason = assertHaltsForMissingEventTriggers(stream);
                assertTrue(reason.startsWith("MissingEventTriggerSupport: Columns of table \"boo\" have changed"), reason);
            } finally {
                stream.close();
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> initialSchema(Connection c) throws SQLException {
        return (Map<String, Object>) CODEC.decodeValue(
                queryString(c, "SELECT \"initialSchema\" FROM " + SHARD.schema() + ".replicas"));
    }

    private static void assertNothingButStatuses(ChangeStream stream, Duration wait) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            ChangeStreamMessage m = stream.poll(Duration.ofNanos(left));
            assertTrue(m == null || m instanceof StatusMessage, () -> CODEC.encode(m));
        }
    }

    /** Message tags: {@code begin}, the data change's tag, {@code commit}, … */
    private static List<String> tags(List<ChangeStreamMessage> messages) {
        List<String> out = new ArrayList<>();
        for (ChangeStreamMessage m : messages) {
            if (m instanceof BeginMessage) {
                out.add("begin");
            } else if (m instanceof CommitMessage) {
                out.add("commit");
            } else if (m instanceof DataMessage) {
                String json = CODEC.encode(m);
                int i = json.indexOf("\"tag\":\"") + 7;
                out.add(json.substring(i, json.indexOf('"', i)));
            } else {
                out.add(CODEC.encode(m));
            }
        }
        return out;
    }
}

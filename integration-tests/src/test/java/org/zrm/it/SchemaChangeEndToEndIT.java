package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.zrm.it.ChangesClient.Transaction;

/**
 * Schema changes end to end through the shipped runtime (issue 10): upstream DDL is captured by
 * the event triggers, becomes schema changes inside its transaction, reaches a protocol-v6
 * WebSocket subscriber in order and is applied to the SQLite replica by the in-process
 * replicator, while an unrelated writer keeps committing. Afterwards the replica must describe
 * exactly the upstream schema (tables, columns with their lite types, indexes by name, column
 * metadata) and hold exactly the upstream rows. The tests of this class share one runtime.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class SchemaChangeEndToEndIT {

    /** The done-when bound of issue 10: a table created after start-up and its row reach the replica. */
    private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(1);

    /**
     * The schema changes the migration series must produce, in stream order, each as
     * {@link #describe} renders it. Postgres publishes primary-key indexes as indexes, so a
     * {@code CREATE TABLE} with a key is followed by its {@code create-index}, and a
     * {@code DROP TABLE} is preceded by the {@code drop-index} of its key (upstream drops indexes
     * first, because SQLite would refuse to drop a column an index still uses).
     */
    private static final List<String> EXPECTED_SCHEMA_CHANGES = List.of(
            "create-table public.mig_t(id,label)",
            "create-index public.mig_t_pkey on mig_t",
            "add-column public.mig_t.plain dflt=null",
            "add-column public.mig_t.dflt dflt='dv'::text",
            "update-column public.mig_t.label->title",
            "rename-table public.mig_t->public.mig_renamed",
            "create-index public.mig_renamed_title on mig_renamed",
            "drop-index public.mig_renamed_title",
            "drop-index public.mig_gone_pkey",
            "drop-table public.mig_gone");

    /** Marker rows for {@link Pipeline#settledWatermark}. */
    private static final String SETTLE = "it_settle";

    @Inject
    private BundleContext context;

    private Pipeline pipeline;
    private String replicaVersion;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-schema-"),
                "CREATE TABLE mig_base (id int4 PRIMARY KEY, n int8 NOT NULL)",
                "CREATE TABLE mig_gone (id int4 PRIMARY KEY, note text)",
                "INSERT INTO mig_gone VALUES (1, 'synced, then dropped')",
                "CREATE TABLE " + SETTLE + " (id int8 PRIMARY KEY)");
    }

    @Before
    public void awaitPipeline() throws Exception {
        pipeline = new Pipeline(context);
        replicaVersion = pipeline.awaitStreaming();
    }

    @Test
    public void migrationSeriesWhileWritesContinueReachesSubscriberAndReplica() throws Exception {
        // (Not lastStoredWatermark: the other test's transactions may still be on their way to the storer.)
        String start = pipeline.settledWatermark(SETTLE);
        ChangesClient sub = ChangesClient.connect(pipeline.http(),
                ChangesClient.changesUri(pipeline.port(), 6, ChangesClient.query("it-schema", replicaVersion, start)));
        assertEquals("status", sub.awaitFirstFrame().type());

        Writer writer = new Writer();
        writer.start();
        try {
            // Each step commits on its own (as psql in autocommit mode would), then the writer gets
            // at least one transaction in, then the changed table gets a row of its new shape.
            step(writer, "CREATE TABLE mig_t (id int4 PRIMARY KEY, label text)",
                    "INSERT INTO mig_t VALUES (1, 'one')");
            step(writer, "ALTER TABLE mig_t ADD COLUMN plain int4",
                    "INSERT INTO mig_t VALUES (2, 'two', 2)");
            step(writer, "ALTER TABLE mig_t ADD COLUMN dflt text DEFAULT 'dv'",
                    "INSERT INTO mig_t (id, label, plain) VALUES (3, 'three', 3)");
            step(writer, "ALTER TABLE mig_t RENAME COLUMN label TO title",
                    "UPDATE mig_t SET title = 'uno' WHERE id = 1");
            step(writer, "ALTER TABLE mig_t RENAME TO mig_renamed",
                    "INSERT INTO mig_renamed VALUES (4, 'four', 4, 'own')");
            step(writer, "CREATE INDEX mig_renamed_title ON mig_renamed (title)",
                    "INSERT INTO mig_renamed VALUES (5, 'five', 5, DEFAULT)");
            step(writer, "DROP INDEX mig_renamed_title",
                    "DELETE FROM mig_renamed WHERE id = 2");
            step(writer, "DROP TABLE mig_gone",
                    "UPDATE mig_renamed SET plain = 30, dflt = NULL WHERE id = 3");
        } finally {
            writer.stop();
        }
        assertNull("writer failed: " + writer.failure.get(), writer.failure.get());
        long written = writer.written();
        assertTrue("the writer committed between every step: " + written, written >= 8);

        // A last transaction marks the end: everything before it has been streamed once it arrives.
        pipeline.exec("INSERT INTO mig_base VALUES (0, -1)");
        String end = pipeline.awaitStoredInsert("mig_base", 0);

        List<Transaction> txs = new ArrayList<>();
        while (txs.isEmpty() || !txs.get(txs.size() - 1).commitWatermark().equals(end)) {
            Transaction tx = sub.nextTransaction();
            assertTrue(tx.commitWatermark() + " past the end marker " + end, tx.commitWatermark().compareTo(end) <= 0);
            txs.add(tx);
        }
        assertStreamed(txs, start, written);

        pipeline.awaitReplicaAt(end);
        try (Connection replica = pipeline.replica()) {
            assertReplicaMatchesUpstream(replica);
            assertEquals("the row the initial sync copied went with its table",
                    List.of(), Pipeline.rows(replica, "SELECT name FROM sqlite_master WHERE name LIKE 'mig_gone%'"));
            assertEquals("rows of mig_renamed in the replica",
                    List.of(Arrays.asList("1", "uno", null, "dv"), Arrays.asList("3", "three", "30", null),
                            List.of("4", "four", "4", "own"), List.of("5", "five", "5", "dv")),
                    Pipeline.rows(replica, "SELECT id, title, plain, dflt FROM mig_renamed ORDER BY id"));
        }
        sub.close();
    }

    @Test
    public void tableCreatedAfterStartUpAppearsInTheReplicaWithinASecond() throws Exception {
        pipeline.exec("CREATE TABLE quick_start (id int4 PRIMARY KEY, label text)",
                "INSERT INTO quick_start VALUES (1, 'hello')");
        long committed = System.nanoTime();
        long deadline = committed + Pipeline.SLOW_WAIT.toNanos();
        List<List<String>> rows = List.of();
        String lastError = null;
        while (System.nanoTime() < deadline) {
            try (Connection replica = pipeline.replica()) {
                rows = Pipeline.rows(replica, "SELECT id, label FROM quick_start");
                if (!rows.isEmpty()) {
                    break;
                }
            } catch (SQLException e) {
                lastError = e.getMessage(); // "no such table" until the create-table is applied
            }
            // The replicator signals nothing a test can observe; poll the file within the deadline.
            TimeUnit.MILLISECONDS.sleep(10);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - committed);
        System.out.println("SchemaChangeEndToEndIT: quick_start and its row reached the replica " + took.toMillis()
                + " ms after the commit");
        assertEquals("replica rows of quick_start after " + took + " (last error: " + lastError + ")",
                List.of(List.of("1", "hello")), rows);
        assertTrue("the new table and its row took " + took.toMillis() + " ms to reach the replica",
                took.compareTo(VISIBLE_WITHIN) <= 0);
    }

    // ------------------------------------------------------------------ the migration series

    /**
     * Commits {@code ddl}, waits until the writer has committed a transaction after it (so the
     * data stream really interleaves with the schema changes), then commits {@code dml}.
     */
    private void step(Writer writer, String ddl, String dml) throws Exception {
        pipeline.exec(ddl);
        writer.awaitOneMore();
        pipeline.exec(dml);
    }

    /**
     * One upstream transaction at a time on {@code mig_base}: insert row {@code i} and bump the
     * previous row, so the stream must carry inserts 1..n and updates 1..n-1, in that order.
     */
    private final class Writer {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Object lock = new Object();
        private long committed;
        private Thread thread;

        void start() {
            thread = new Thread(this::run, "it-schema-writer");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            try (Connection c = pipeline.upstream(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                for (long i = 1; running.get(); i++) {
                    s.execute("INSERT INTO mig_base VALUES (" + i + ", " + i + ")");
                    if (i > 1) {
                        s.execute("UPDATE mig_base SET n = n + 1000 WHERE id = " + (i - 1));
                    }
                    c.commit();
                    synchronized (lock) {
                        committed = i;
                        lock.notifyAll();
                    }
                    TimeUnit.MILLISECONDS.sleep(15); // a steady offered load, not a wait for a condition
                }
            } catch (Throwable t) {
                failure.set(t);
                synchronized (lock) {
                    lock.notifyAll();
                }
            }
        }

        /** Waits until the writer has committed one more transaction than when called. */
        void awaitOneMore() throws InterruptedException {
            long deadline = System.nanoTime() + ChangesClient.WAIT.toNanos();
            synchronized (lock) {
                long target = committed + 1;
                while (committed < target && failure.get() == null) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new AssertionError("the writer committed nothing within " + ChangesClient.WAIT);
                    }
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("writer failed: " + failure.get());
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(ChangesClient.WAIT.toMillis());
            assertFalse("writer did not stop", thread.isAlive());
        }

        long written() {
            synchronized (lock) {
                return committed;
            }
        }
    }

    // ------------------------------------------------------------------ checking the stream

    /**
     * The subscriber's transactions after {@code start}: the schema changes of the series in
     * order, each inside a transaction of its own; the writer's transactions each exactly once
     * and in order; the rows of the changed table in the shape of their step.
     */
    private static void assertStreamed(List<Transaction> txs, String start, long written) {
        List<String> schemaChanges = new ArrayList<>();
        List<Long> baseInserts = new ArrayList<>();
        List<Long> baseUpdates = new ArrayList<>();
        List<String> migRows = new ArrayList<>();
        String previous = start;
        for (Transaction tx : txs) {
            assertTrue(tx.commitWatermark() + " after " + previous, tx.commitWatermark().compareTo(previous) > 0);
            previous = tx.commitWatermark();
            boolean ddl = false;
            boolean dml = false;
            for (JsonNode change : tx.data()) {
                String tag = change.path("tag").asText();
                switch (tag) {
                    case "insert", "update", "delete" -> {
                        dml = true;
                        String table = change.path("relation").path("name").asText();
                        JsonNode row = tag.equals("delete") ? change.path("key") : change.path("new");
                        if (table.equals("mig_base")) {
                            (tag.equals("insert") ? baseInserts : baseUpdates).add(row.path("id").asLong());
                        } else {
                            migRows.add(tag + " " + table + " " + row);
                        }
                    }
                    default -> {
                        ddl = true;
                        schemaChanges.add(describe(change));
                        assertSchemaChangeFields(change);
                    }
                }
            }
            assertFalse("a schema change shares a transaction with a data change: " + tx.data(), ddl && dml);
        }
        assertEquals("schema changes in stream order", EXPECTED_SCHEMA_CHANGES, schemaChanges);
        List<Long> ids = new ArrayList<>(LongStream.rangeClosed(1, written).boxed().toList());
        ids.add(0L); // the end marker
        assertEquals("the writer's inserts, each once and in order", ids, baseInserts);
        assertEquals("the writer's updates, each once and in order",
                LongStream.range(1, written).boxed().toList(), baseUpdates);
        assertEquals("the changed table's rows, in the shape of their step", List.of(
                "insert mig_t {\"id\":1,\"label\":\"one\"}",
                "insert mig_t {\"id\":2,\"label\":\"two\",\"plain\":2}",
                "insert mig_t {\"id\":3,\"label\":\"three\",\"plain\":3,\"dflt\":\"dv\"}",
                "update mig_t {\"id\":1,\"title\":\"uno\",\"plain\":null,\"dflt\":\"dv\"}",
                "insert mig_renamed {\"id\":4,\"title\":\"four\",\"plain\":4,\"dflt\":\"own\"}",
                "insert mig_renamed {\"id\":5,\"title\":\"five\",\"plain\":5,\"dflt\":\"dv\"}",
                "delete mig_renamed {\"id\":2}",
                "update mig_renamed {\"id\":3,\"title\":\"three\",\"plain\":30,\"dflt\":null}"), migRows);
    }

    /** A one-line rendering of a schema change: its tag and what it names. */
    private static String describe(JsonNode c) {
        String tag = c.path("tag").asText();
        return switch (tag) {
            case "create-table" -> {
                List<String> columns = new ArrayList<>();
                // Columns by position: a JSON object's key order is not part of the protocol.
                Map<Integer, String> byPos = new TreeMap<>();
                c.path("spec").path("columns").fields()
                        .forEachRemaining(e -> byPos.put(e.getValue().path("pos").asInt(), e.getKey()));
                columns.addAll(byPos.values());
                yield tag + " " + id(c.path("spec")) + "(" + String.join(",", columns) + ")";
            }
            case "create-index" -> tag + " " + id(c.path("spec")) + " on " + c.path("spec").path("tableName").asText();
            case "add-column" -> tag + " " + id(c.path("table")) + "." + c.path("column").path("name").asText()
                    + " dflt=" + c.path("column").path("spec").path("dflt").asText("null");
            case "update-column" -> tag + " " + id(c.path("table")) + "." + c.path("old").path("name").asText() + "->"
                    + c.path("new").path("name").asText();
            case "rename-table" -> tag + " " + id(c.path("old")) + "->" + id(c.path("new"));
            case "drop-index", "drop-table" -> tag + " " + id(c.path("id"));
            case "drop-column" -> tag + " " + id(c.path("table")) + "." + c.path("column").asText();
            default -> tag + " " + c;
        };
    }

    private static String id(JsonNode node) {
        return node.path("schema").asText() + "." + node.path("name").asText();
    }

    /**
     * What upstream sets beyond the names: a table created by {@code CREATE TABLE} and a column
     * added by {@code ALTER TABLE} with a constant (or no) default need no backfill, and both
     * carry the table's metadata (its row key); a renamed column keeps its type.
     */
    private static void assertSchemaChangeFields(JsonNode c) {
        switch (c.path("tag").asText()) {
            case "create-table" -> {
                assertFalse("CREATE TABLE needs no backfill: " + c, c.has("backfill"));
                assertEquals(c.toString(), "[\"id\"]", c.path("spec").path("primaryKey").toString());
                assertTrue("create-table carries the table metadata: " + c, c.path("metadata").has("rowKey"));
            }
            case "add-column" -> {
                assertFalse("ADD COLUMN with a constant default needs no backfill: " + c, c.has("backfill"));
                assertTrue("add-column carries the table metadata: " + c, c.path("tableMetadata").has("rowKey"));
                assertEquals(c.toString(), c.path("column").path("name").asText().equals("plain") ? "int4" : "text",
                        c.path("column").path("spec").path("dataType").asText());
            }
            case "update-column" -> assertEquals(c.toString(), c.path("old").path("spec").path("dataType"),
                    c.path("new").path("spec").path("dataType"));
            default -> { }
        }
    }

    // ------------------------------------------------------------------ replica vs upstream

    /**
     * The replica describes the upstream schema exactly and holds its rows: the same public
     * tables, each with the upstream columns in attnum order (lite type = upstream type name plus
     * {@code |NOT_NULL}) and {@code _0_version} (zero-cache appends an added column after it, so
     * its place is not compared), the same indexes by name and table, one
     * {@code _zero.column_metadata} row per upstream column, and every row equal.
     */
    private void assertReplicaMatchesUpstream(Connection replica) throws Exception {
        List<String> upstreamTables = pipeline.queryStrings("SELECT tablename FROM pg_tables"
                + " WHERE schemaname = 'public' ORDER BY tablename");
        // (Besides the data tables: the _zero.* tables, the shard's zero_0.* tables and the statistics
        // tables SQLite's ANALYZE creates.)
        List<String> replicaTables = Pipeline.rows(replica, "SELECT name FROM sqlite_master WHERE type = 'table'"
                + " AND name NOT LIKE '%.%' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").stream()
                .map(r -> r.get(0)).toList();
        assertEquals("public tables", upstreamTables, replicaTables);

        List<String> upstreamIndexes = pipeline.queryStrings("SELECT indexname || ' on ' || tablename FROM pg_indexes"
                + " WHERE schemaname = 'public' ORDER BY indexname");
        List<String> replicaIndexes = Pipeline.rows(replica, "SELECT name || ' on ' || tbl_name FROM sqlite_master"
                + " WHERE type = 'index' AND sql IS NOT NULL AND tbl_name NOT LIKE '%.%' ORDER BY name").stream()
                .map(r -> r.get(0)).toList();
        assertEquals("indexes of the public tables", upstreamIndexes, replicaIndexes);

        List<String> upstreamMetadata = new ArrayList<>();
        for (String table : upstreamTables) {
            List<String> upstreamColumns = pipeline.queryStrings("SELECT a.attname || ' ' || t.typname"
                    + " || CASE WHEN a.attnotnull THEN '|NOT_NULL' ELSE '' END FROM pg_attribute a"
                    + " JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = 'public." + table + "'::regclass"
                    + " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum");
            List<String> expected = new ArrayList<>(upstreamColumns);
            expected.add("_0_version");
            // (_0_version's declared type is the layout's business, not the upstream schema's. SQLite
            // reports a declared type that is one of its own type names, e.g. "text", in upper case.)
            List<String> replicaColumns = Pipeline.rows(replica, "SELECT name || CASE WHEN name = '_0_version' THEN ''"
                    + " WHEN upper(type) = 'TEXT' THEN ' text' ELSE ' ' || type END FROM pragma_table_info('" + table
                    + "') ORDER BY name = '_0_version', cid")
                    .stream().map(r -> r.get(0)).toList();
            assertEquals("columns of " + table, expected, replicaColumns);
            upstreamMetadata.addAll(pipeline.queryStrings("SELECT '" + table + " ' || a.attname || ' ' || t.typname"
                    + " || ' ' || a.attnotnull::int FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid"
                    + " WHERE a.attrelid = 'public." + table + "'::regclass AND a.attnum > 0 AND NOT a.attisdropped"));

            List<String> names = upstreamColumns.stream().map(c -> c.substring(0, c.indexOf(' '))).toList();
            String select = "SELECT " + String.join(", ", names) + " FROM " + table + " ORDER BY id";
            List<List<String>> upstreamRows;
            try (Connection up = pipeline.upstream()) {
                upstreamRows = Pipeline.rows(up, select);
            }
            assertEquals("rows of " + table, upstreamRows, Pipeline.rows(replica, select));
        }
        upstreamMetadata.sort(null);
        List<String> replicaMetadata = Pipeline.rows(replica, "SELECT table_name || ' ' || column_name || ' '"
                + " || upstream_type || ' ' || is_not_null FROM \"_zero.column_metadata\""
                + " WHERE table_name NOT LIKE '%.%'").stream().map(r -> r.get(0)).sorted().toList();
        assertEquals("_zero.column_metadata of the public tables", upstreamMetadata, replicaMetadata);
    }
}

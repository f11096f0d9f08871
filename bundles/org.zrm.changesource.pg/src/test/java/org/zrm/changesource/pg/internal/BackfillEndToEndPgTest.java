package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.exec;
import static org.zrm.changesource.pg.internal.SourceFixture.queryString;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.pg.internal.backfill.BackfillRun;
import org.zrm.changesource.pg.internal.backfill.BackfillStreamer;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.Insert;
import org.zrm.protocol.Update;
import org.zrm.testing.PostgresTest;

/**
 * The backfill pipeline end to end in the Postgres change source: real shard setup and initial
 * sync, the live stream, the backfill manager and the real snapshot reader (temporary snapshot
 * slot, binary or text COPY). A port of upstream's {@code change-source.backfill.pg.test.ts}
 * (same upstream schema, same statements) plus the manager's policies as the whole source shows
 * them: cancel by drop, retry after a stream error, a table without a row key, yielding to live
 * transactions, {@code backfill-completed} waiting for the stream, and incompatible requests.
 *
 * <p>Upstream checks the SQLite replica its change processor builds from the stream; this bundle
 * has no replicator, so the tests check what reaches it: the committed {@code backfill} rows of
 * the completing run (row key, then columns) and, where the live stream matters, its changes.
 */
@PostgresTest
class BackfillEndToEndPgTest {

    /** Upstream's schema, plus {@code published.tick}: live commits that move the stream on. */
    private static final String SCHEMA = """
            CREATE TABLE foo(id INT PRIMARY KEY, num INT, big TEXT, json JSON, jsons JSON[]);
            CREATE SCHEMA IF NOT EXISTS published;
            CREATE TABLE published.bar(id INT PRIMARY KEY, num INT);
            INSERT INTO published.bar SELECT i, i FROM generate_series(1, 3) i;
            CREATE TABLE baz(id INT PRIMARY KEY, num INT, ooka TEXT);
            INSERT INTO baz SELECT i, i, 'aaa' FROM generate_series(1, 3) i;
            CREATE TABLE published.tick(id SERIAL PRIMARY KEY);
            CREATE PUBLICATION published_schema FOR TABLES IN SCHEMA published;
            CREATE PUBLICATION published_tables FOR TABLE baz(id, num);
            """;

    private static final List<String> PUBLICATIONS = List.of("published_schema", "published_tables");

    private static final String FOO_ROWS = """
            INSERT INTO foo (id, num, big, json, jsons)
              SELECT i, i, REPEAT('a', 10), json_build_object('d', i),
                     ARRAY[to_json(i), to_json(i+1), to_json((i+2)::text), json_build_object('e', i+3)]
              FROM generate_series(1, %d) i;
            """;

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final PgCluster cluster;

    BackfillEndToEndPgTest(PgCluster cluster) {
        this.cluster = cluster;
    }

    // ------------------------------------------------------------------ upstream's cases

    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void tableAddedToPublishedSchema(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec(FOO_ROWS.formatted(3), "ALTER TABLE foo SET SCHEMA published");
            Collected got = s.collectUntilCompleted("foo");
            CreateTable create = got.first(CreateTable.class, t -> t.spec().name().equals("foo"));
            assertEquals("published", create.spec().schema());
            assertEquals(java.util.Set.of("id", "num", "big", "json", "jsons"), create.backfill().keySet());
            assertEquals(java.util.Set.of("num", "big", "json", "jsons"), java.util.Set.copyOf(got.completed.columns()));
            assertEquals(List.of(
                    "{big=aaaaaaaaaa, id=1, json={\"d\" : 1}, jsons=[1,2,\"3\",{\"e\":4}], num=1}",
                    "{big=aaaaaaaaaa, id=2, json={\"d\" : 2}, jsons=[2,3,\"4\",{\"e\":5}], num=2}",
                    "{big=aaaaaaaaaa, id=3, json={\"d\" : 3}, jsons=[3,4,\"5\",{\"e\":6}], num=3}"), got.rows());
            s.assertNoSnapshotSlot();
        }
    }

    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void tableAddedToPublicationWithRowFilter(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec(FOO_ROWS.formatted(6), "ALTER PUBLICATION published_schema ADD TABLE foo WHERE (id % 2 = 0)");
            Collected got = s.collectUntilCompleted("foo");
            assertEquals("public", got.completed.relation().schema());
            assertEquals(List.of(
                    "{big=aaaaaaaaaa, id=2, json={\"d\" : 2}, jsons=[2,3,\"4\",{\"e\":5}], num=2}",
                    "{big=aaaaaaaaaa, id=4, json={\"d\" : 4}, jsons=[4,5,\"6\",{\"e\":7}], num=4}",
                    "{big=aaaaaaaaaa, id=6, json={\"d\" : 6}, jsons=[6,7,\"8\",{\"e\":9}], num=6}"), got.rows());
        }
    }

    /**
     * Toasted values updated during the backfill: the live updates leave the unchanged toasted
     * column out, so only the backfill carries it; the backfill reads it whole.
     */
    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void toastedValuesWithUpdatesDuringBackfill(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec("INSERT INTO foo (id, num, big) SELECT i, i, REPEAT('a', 1000000) FROM generate_series(1, 9) i",
                    "ALTER TABLE foo SET SCHEMA published");
            s.exec("UPDATE published.foo SET num = id + 1");
            Collected got = s.collectUntilCompleted("foo");
            String big = "a".repeat(1_000_000);
            List<List<Object>> rows = got.rawRows();
            assertEquals(9, rows.size());
            List<String> columns = concat(List.of("id"), got.completed.columns());
            int num = columns.indexOf("num");
            int bigAt = columns.indexOf("big");
            for (List<Object> row : rows) {
                int id = ((Number) row.get(0)).intValue();
                assertEquals(big, row.get(bigAt), "the toasted value of row " + id);
                int n = ((Number) row.get(num)).intValue();
                assertTrue(n == id || n == id + 1, "num of row " + id + " at the snapshot: " + n);
            }
            List<Update> updates = got.all(Update.class, u -> u.relation().name().equals("foo"));
            assertEquals(9, updates.size(), "the live updates");
            for (Update u : updates) {
                int id = ((Number) u.newRow().get("id")).intValue();
                assertEquals(id + 1, ((Number) u.newRow().get("num")).intValue());
                assertTrue(!u.newRow().containsKey("big") || u.newRow().get("big") == null
                        || big.equals(u.newRow().get("big")), "an unchanged toasted value is left out");
            }
        }
    }

    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void tableAddedThenColumnAndTableRenamed(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec(FOO_ROWS.formatted(3), "ALTER TABLE foo SET SCHEMA published");
            s.exec("ALTER TABLE published.foo RENAME big TO bigz", "ALTER TABLE published.foo RENAME TO zoo");
            // Upstream renames 1-5 ms later: the run may finish first (then the renames move its rows
            // in the replica) or be restarted under the new names.
            Collected got = s.collectUntil(c -> c.completed != null && s.shard.source.backfillStatus().isEmpty());
            boolean renamedFirst = got.completed.relation().name().equals("zoo");
            assertEquals(java.util.Set.of("num", renamedFirst ? "bigz" : "big", "json", "jsons"),
                    java.util.Set.copyOf(got.completed.columns()));
            if (!renamedFirst) {
                assertEquals("foo", got.completed.relation().name());
                got.renamed("big", "bigz");
            }
            assertEquals(List.of(
                    "{bigz=aaaaaaaaaa, id=1, json={\"d\" : 1}, jsons=[1,2,\"3\",{\"e\":4}], num=1}",
                    "{bigz=aaaaaaaaaa, id=2, json={\"d\" : 2}, jsons=[2,3,\"4\",{\"e\":5}], num=2}",
                    "{bigz=aaaaaaaaaa, id=3, json={\"d\" : 3}, jsons=[3,4,\"5\",{\"e\":6}], num=3}"), got.rows());
        }
    }

    /** Defaults SQLite cannot express: an expression, a non-empty array, {@code CURRENT_USER}. */
    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void unsupportedDefaultsTriggerBackfills(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec("ALTER TABLE published.bar ADD COLUMN expr INT DEFAULT (2 + 18) / 4");
            Collected got = s.collectUntilCompleted("bar");
            AddColumn add = got.first(AddColumn.class, a -> a.column().name().equals("expr"));
            assertTrue(add.column().spec().dflt().isNull(), "backfilled instead of a default: " + add.column().spec().dflt());
            assertNotNull(add.backfill());
            assertEquals(List.of("expr"), got.completed.columns());
            assertEquals(List.of("{expr=5, id=1}", "{expr=5, id=2}", "{expr=5, id=3}"), got.rows());

            s.exec("ALTER TABLE published.bar ADD COLUMN tags TEXT[] DEFAULT ARRAY['a', 'b']::text[]");
            got = s.collectUntilCompleted("bar");
            assertEquals(List.of("tags"), got.completed.columns());
            assertEquals(List.of("{id=1, tags=[\"a\",\"b\"]}", "{id=2, tags=[\"a\",\"b\"]}", "{id=3, tags=[\"a\",\"b\"]}"), got.rows());

            s.exec("ALTER TABLE published.bar ADD COLUMN created_by TEXT DEFAULT CURRENT_USER");
            got = s.collectUntilCompleted("bar");
            assertEquals(List.of("created_by"), got.completed.columns());
            String user = PgCluster.SUPERUSER;
            assertEquals(List.of("{created_by=" + user + ", id=1}", "{created_by=" + user + ", id=2}", "{created_by=" + user + ", id=3}"), got.rows());
        }
    }

    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void publishedColumnChange(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec("ALTER PUBLICATION published_tables SET TABLE baz (id, ooka)");
            Collected got = s.collectUntilCompleted("baz");
            assertEquals(List.of("ooka"), got.completed.columns());
            assertEquals(List.of("{id=1, ooka=aaa}", "{id=2, ooka=aaa}", "{id=3, ooka=aaa}"), got.rows());
        }
    }

    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void columnRenamedWhileBeingBackfilled(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec("ALTER TABLE published.bar ADD COLUMN expr INT DEFAULT 3 * 8 + 21");
            s.exec("ALTER TABLE published.bar RENAME expr TO expression");
            // As upstream (1-5 ms between the statements), the run may finish before the rename
            // (the rename then moves its values in the replica) or be restarted under the new name.
            Collected got = s.collectUntil(c -> c.completed != null && s.shard.source.backfillStatus().isEmpty());
            if (got.completed.columns().equals(List.of("expr"))) {
                got.renamed("expr", "expression");
            } else {
                assertEquals(List.of("expression"), got.completed.columns());
            }
            assertEquals(List.of("{expression=45, id=1}", "{expression=45, id=2}", "{expression=45, id=3}"), got.rows());
        }
    }

    /**
     * Upstream's "empty table with no primary key", with {@code tables.requireRowKey = false}
     * (zero-cache's behaviour; ZRM's default halts replication for such a table): the backfill of
     * an empty keyless table completes with no rows.
     */
    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void emptyTableWithoutPrimaryKey(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir, UnaryOperator.identity(),
                new org.zrm.changesource.pg.internal.setup.TableValidator(false))) {
            s.exec("CREATE TABLE no_pk (id TEXT NOT NULL)", "ALTER TABLE no_pk SET SCHEMA published");
            Collected got = s.collectUntilCompleted("no_pk");
            assertEquals(List.of(), got.rows());
            assertEquals(List.of(), s.shard.source.backfillStatus());
        }
    }

    /**
     * Upstream's "non-empty table that eventually gets a primary key" (with
     * {@code tables.requireRowKey = false}): the run fails for the missing key and is retried with
     * back-off until the table gets a primary key; no keyless rows are committed.
     */
    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void nonEmptyTableThatEventuallyGetsAPrimaryKey(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir, UnaryOperator.identity(),
                new org.zrm.changesource.pg.internal.setup.TableValidator(false))) {
            s.exec("CREATE TABLE late_pk (id TEXT NOT NULL)", "INSERT INTO late_pk (id) VALUES ('foo'), ('bar')",
                    "ALTER TABLE late_pk SET SCHEMA published");
            Map<String, Object> retrying = s.awaitStatus(st -> "published.late_pk".equals(st.get("table"))
                    && ((Number) st.getOrDefault("retries", 0)).intValue() >= 1);
            assertNotNull(retrying.get("lastError"), retrying.toString());
            s.exec("ALTER TABLE published.late_pk ADD PRIMARY KEY (id)");
            Collected got = s.collectUntilCompleted("late_pk");
            assertEquals(List.of("{id=bar}", "{id=foo}"), got.rows());
            assertTrue(got.all(Backfill.class, b -> b.relation().name().equals("late_pk")
                    && b.relation().rowKey().columns().isEmpty() && !b.rowValues().isEmpty()).isEmpty(),
                    "no keyless rows were committed");
        }
    }

    // ------------------------------------------------------------------ the manager's policies

    /** A table added and then dropped: the drop cancels the backfill; nothing is left running. */
    @ParameterizedTest(name = "textCopy={0}")
    @ValueSource(booleans = {false, true})
    void tableAddedThenDroppedCancelsTheBackfill(boolean textCopy, @TempDir Path dir) throws Exception {
        try (Session s = new Session(textCopy, dir)) {
            s.exec("INSERT INTO foo (id, num, big) SELECT i, i, REPEAT('x', 2000) FROM generate_series(1, 20000) i",
                    "ALTER TABLE foo SET SCHEMA published");
            s.awaitStatus(st -> "published.foo".equals(st.get("table")));
            s.exec("DROP TABLE published.foo");
            s.exec("INSERT INTO published.tick DEFAULT VALUES");
            Collected got = s.collectUntil(c -> c.changes.stream().anyMatch(
                    ch -> ch instanceof org.zrm.protocol.DropTable d && d.id().name().equals("foo"))
                    && c.lastInsertOf("tick") != null);
            // DROP TABLE waits for the backfill's snapshot transaction (it holds ACCESS SHARE on the
            // table). So either the drop reached the stream first and cancelled the backfill, or the
            // backfill finished first and its completion precedes the drop; never the other way.
            if (got.completed != null) {
                int completedAt = got.changes.indexOf(got.completed);
                int droppedAt = -1;
                for (int i = 0; i < got.changes.size(); i++) {
                    if (got.changes.get(i) instanceof org.zrm.protocol.DropTable d && d.id().name().equals("foo")) {
                        droppedAt = i;
                    }
                }
                assertTrue(completedAt >= 0 && completedAt < droppedAt, "a completion after the drop");
            }
            s.awaitStatus(List::isEmpty, st -> true);
            s.assertNoSnapshotSlot();
        }
    }

    /**
     * The backfill's COPY connection is killed mid-stream: the run fails, its open transaction is
     * rolled back, and a new run after the back-off delivers every row.
     */
    @Test
    void retryOnStreamError(@TempDir Path dir) throws Exception {
        AtomicInteger opened = new AtomicInteger();
        UnaryOperator<BackfillStreamer> killFirstRun = real -> request -> {
            BackfillRun run = real.open(request);
            if (opened.incrementAndGet() > 1) {
                return run;
            }
            return new BackfillRun() {
                int sent;

                @Override
                public String watermark() {
                    return run.watermark();
                }

                @Override
                public DataOrSchemaChange next() throws ChangeSourceException, InterruptedException {
                    if (sent++ == 1) {
                        killCopyBackends();
                    }
                    return run.next();
                }

                @Override
                public void close() {
                    run.close();
                }
            };
        };
        try (Session s = new Session(false, dir, killFirstRun)) {
            holder = s;
            s.exec("INSERT INTO foo (id, num, big) SELECT i, i, REPEAT('x', 500) FROM generate_series(1, 5000) i",
                    "ALTER TABLE foo SET SCHEMA published");
            Collected got = s.collectUntilCompleted("foo");
            assertEquals(2, opened.get(), "one retry");
            List<List<Object>> rows = got.rawRows();
            assertEquals(5000, rows.size());
            // (Whether the killed run had opened a transaction, then rolled back, depends on timing.)
            s.assertNoSnapshotSlot();
        }
    }

    private Session holder;

    private void killCopyBackends() throws ChangeSourceException {
        try (Connection c = holder.shard.connect()) {
            queryString(c, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'COPY%'");
        } catch (java.sql.SQLException e) {
            throw new ChangeSourceException("could not kill the COPY: " + e.getMessage(), e);
        }
    }

    /**
     * A large backfill yields its reservation: live transactions committed while it runs reach the
     * stream between its transactions, not after it.
     */
    @Test
    void backfillYieldsToLiveTransactions(@TempDir Path dir) throws Exception {
        try (Session s = new Session(false, dir)) {
            s.exec("INSERT INTO foo (id, num, big) SELECT i, i, REPEAT('y', 1000) FROM generate_series(1, 40000) i");
            java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicReference<Exception> failed = new java.util.concurrent.atomic.AtomicReference<>();
            Thread writer = new Thread(() -> {
                try (Connection c = s.shard.connect()) {
                    while (running.get()) {
                        exec(c, "INSERT INTO published.tick DEFAULT VALUES");
                    }
                } catch (java.sql.SQLException e) {
                    failed.set(e);
                }
            }, "bf-e2e-writer");
            writer.start();
            Collected got;
            try {
                s.exec("ALTER TABLE foo SET SCHEMA published");
                got = s.collectUntilCompleted("foo");
            } finally {
                running.set(false);
                writer.join(WAIT.toMillis());
            }
            assertNull(failed.get());
            assertEquals(40000, got.rawRows().size());
            // Between the run's first and last backfill transaction, some live ones.
            int first = -1;
            int last = -1;
            int liveBetween = 0;
            for (int i = 0; i < got.transactions.size(); i++) {
                if (got.transactions.get(i).skipAck) {
                    first = first < 0 ? i : first;
                    last = i;
                }
            }
            for (int i = first; i <= last; i++) {
                liveBetween += got.transactions.get(i).skipAck ? 0 : 1;
            }
            assertTrue(last - first > 1, "the backfill took several transactions: " + (last - first + 1));
            assertTrue(liveBetween >= 1, "live transactions between backfill transactions: " + liveBetween);
        }
    }

    // ------------------------------------------------------------------ fixture

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /**
     * An array or object value as JSON text: binary COPY hands arrays on as their JSON text, text
     * COPY as parsed lists; the replica stores both as the same JSON.
     */
    static Object json(Object v) {
        if (v instanceof List<?> || v instanceof Map<?, ?>) {
            try {
                return JSON.writeValueAsString(v);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }
        return v;
    }

    /** One committed (or rolled back) transaction of the stream. */
    record Tx(String watermark, boolean skipAck, List<DataOrSchemaChange> changes) {
    }

    /** What the stream delivered up to a condition. */
    static final class Collected {
        final List<DataOrSchemaChange> changes = new ArrayList<>();
        final List<Tx> transactions = new ArrayList<>();
        int rolledBack;
        BackfillCompleted completed;

        <T> T first(Class<T> type, Predicate<T> p) {
            List<T> all = all(type, p);
            assertTrue(!all.isEmpty(), "no " + type.getSimpleName() + " in " + changes.size() + " changes");
            return all.get(0);
        }

        <T> List<T> all(Class<T> type, Predicate<T> p) {
            return changes.stream().filter(type::isInstance).map(type::cast).filter(p).toList();
        }

        Insert lastInsertOf(String table) {
            List<Insert> ins = all(Insert.class, i -> i.relation().name().equals(table));
            return ins.isEmpty() ? null : ins.get(ins.size() - 1);
        }

        /** The rows of the completing run (same table and snapshot watermark), sorted by key. */
        List<List<Object>> rawRows() {
            assertNotNull(completed, "completed");
            List<List<Object>> rows = new ArrayList<>();
            for (Backfill b : all(Backfill.class, b -> b.relation().name().equals(completed.relation().name())
                    && b.watermark().equals(completed.watermark()))) {
                assertEquals(completed.columns(), b.columns());
                rows.addAll(b.rowValues());
            }
            rows.sort(Comparator.comparing(r -> String.valueOf(r.get(0)),
                    Comparator.comparing((String k) -> k.length()).thenComparing(Comparator.naturalOrder())));
            return rows;
        }

        private final Map<String, String> renames = new java.util.HashMap<>();

        /** Renders column {@code from} of the completing run as {@code to} (a rename after it). */
        void renamed(String from, String to) {
            renames.put(from, to);
        }

        /** Each row of {@link #rawRows} as {@code {column=value, ...}}, columns sorted by name (as upstream compares objects). */
        List<String> rows() {
            List<String> names = new ArrayList<>(completed.relation().rowKey().columns());
            names.addAll(completed.columns());
            List<String> out = new ArrayList<>();
            for (List<Object> row : rawRows()) {
                Map<String, Object> byName = new java.util.TreeMap<>();
                for (int i = 0; i < names.size(); i++) {
                    byName.put(renames.getOrDefault(names.get(i), names.get(i)), json(row.get(i)));
                }
                out.add(byName.toString());
            }
            return out;
        }
    }

    /** A synced shard with the real snapshot reader and its stream. */
    final class Session implements AutoCloseable {
        final SyncedShard shard;
        final ChangeStream stream;

        Session(boolean textCopy, Path dir) throws Exception {
            this(textCopy, dir, UnaryOperator.identity());
        }

        Session(boolean textCopy, Path dir, UnaryOperator<BackfillStreamer> wrap) throws Exception {
            this(textCopy, dir, wrap, org.zrm.changesource.pg.internal.setup.TableValidator.strict());
        }

        Session(boolean textCopy, Path dir, UnaryOperator<BackfillStreamer> wrap,
                org.zrm.changesource.pg.internal.setup.TableValidator validator) throws Exception {
            shard = SyncedShard.startWithSnapshotBackfills(cluster, dir, SCHEMA, PUBLICATIONS, textCopy, wrap, validator);
            stream = shard.stream();
        }

        /**
         * Runs statements upstream while this thread keeps taking the stream: DDL on a table being
         * backfilled waits for the backfill's snapshot transaction, which waits for this consumer
         * once the change stream's buffer is full (the streamer consumes all the time in
         * production; here the test is the consumer).
         */
        void exec(String... sql) throws Exception {
            java.util.concurrent.CompletableFuture<Void> done = java.util.concurrent.CompletableFuture.runAsync(() -> {
                try (Connection c = shard.connect()) {
                    SourceFixture.exec(c, sql);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                try {
                    done.get(20, java.util.concurrent.TimeUnit.MILLISECONDS);
                    return;
                } catch (java.util.concurrent.TimeoutException e) {
                    assertTrue(System.nanoTime() < deadline, "statements not done: " + String.join("; ", sql));
                    pump(Duration.ofMillis(20));
                } catch (java.util.concurrent.ExecutionException e) {
                    throw e.getCause() instanceof Exception ex ? ex : e;
                }
            }
        }

        Collected collectUntilCompleted(String table) throws Exception {
            return collectUntil(c -> c.completed != null && c.completed.relation().name().equals(table));
        }

        private Collected current = new Collected();
        private String mainWatermark;
        private List<DataOrSchemaChange> open;
        private boolean openSkipAck;
        private String openWatermark;

        /**
         * Takes messages until {@code done} holds after a commit; what was taken is returned, and
         * the next collection starts afresh. When the stream is idle for a second, a live commit
         * moves it on (a backfill-completed waits for the stream to pass its snapshot; upstream's
         * test relies on other traffic for that).
         */
        Collected collectUntil(Predicate<Collected> done) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!pump(Duration.ofSeconds(1)) || !done.test(current)) {
                assertTrue(System.nanoTime() < deadline, "not done after " + current.transactions.size()
                        + " transactions; status " + shard.source.backfillStatus());
            }
            Collected c = current;
            current = new Collected();
            return c;
        }

        /** Takes one message; true after a commit. */
        private boolean pump(Duration wait) throws Exception {
            ChangeStreamMessage m = stream.poll(wait);
            if (m == null) {
                if (wait.toMillis() >= 1000) {
                    exec("INSERT INTO published.tick DEFAULT VALUES");
                }
                return false;
            }
            if (m instanceof StatusMessage st) {
                if (st.watermark() != null && (mainWatermark == null || st.watermark().compareTo(mainWatermark) > 0)) {
                    mainWatermark = st.watermark();
                }
            } else if (m instanceof BeginMessage b) {
                assertNull(open, "nested begin");
                open = new ArrayList<>();
                openSkipAck = b.begin().skipsAck();
                openWatermark = b.commitWatermark();
            } else if (m instanceof DataMessage d) {
                assertNotNull(open, "data outside a transaction");
                open.add(d.change());
            } else if (m instanceof RollbackMessage) {
                assertNotNull(open, "rollback outside a transaction");
                current.rolledBack++;
                open = null;
            } else if (m instanceof CommitMessage cm) {
                assertNotNull(open, "commit outside a transaction");
                assertEquals(openWatermark, cm.watermark());
                current.transactions.add(new Tx(cm.watermark(), openSkipAck, open));
                current.changes.addAll(open);
                for (DataOrSchemaChange ch : open) {
                    if (ch instanceof BackfillCompleted bc) {
                        current.completed = bc;
                    }
                }
                if (!openSkipAck && (mainWatermark == null || cm.watermark().compareTo(mainWatermark) > 0)) {
                    mainWatermark = cm.watermark();
                }
                open = null;
                return true;
            }
            return false;
        }

        Map<String, Object> awaitStatus(Predicate<Map<String, Object>> p) throws Exception {
            return awaitStatus(all -> all.stream().anyMatch(p), p);
        }

        /**
         * The source's status is a pull-only view; it is polled within {@link #WAIT} while the
         * stream is taken (into the next collection), so a full buffer cannot hold the backfill.
         */
        Map<String, Object> awaitStatus(Predicate<List<Map<String, Object>>> all, Predicate<Map<String, Object>> p)
                throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                List<Map<String, Object>> status = shard.source.backfillStatus();
                if (all.test(status)) {
                    return status.stream().filter(p).findFirst().orElse(Map.of());
                }
                assertTrue(System.nanoTime() < deadline, "status never matched: " + status);
                pump(Duration.ofMillis(50));
            }
        }

        void assertNoSnapshotSlot() throws Exception {
            try (Connection c = shard.connect()) {
                assertEquals("0", queryString(c,
                        "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '%\\_bf\\_%'"),
                        "no snapshot slot is left");
            }
        }

        @Override
        public void close() throws Exception {
            try {
                stream.close();
            } finally {
                shard.close();
            }
        }
    }
}

package org.zrm.storer.internal.queue;

import org.zrm.changelog.StorerStats;
import org.zrm.changelog.CatchupRequest;
import org.zrm.storer.internal.DelegatingChangeLog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.storer.internal.queue.Msgs.wm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** The storer queue over the real {@link PgChangeLog}, including child JVMs for memory and crashes. */
@PostgresTest
@Timeout(300)
class StorerQueuePgTest {

    private static final AtomicInteger SHARDS = new AtomicInteger(40);
    private static final String APP = "qtest";

    private static PgChangeLog open(PgDatabase db, int shard, int batchSize, String task) throws ChangeLogException {
        PgChangeLog log = new PgChangeLog(StorerSettings.of(db.uri(), APP, shard).withChangeLogBatchSize(batchSize));
        log.ensureReplicationConfig(new SubscriptionState("00", List.of(), "00"), false);
        log.assumeOwnership(task, "127.0.0.1:1");
        return log;
    }

    private static String table(int shard) {
        return "\"" + APP + "_" + shard + "/cdc\".\"changeLog\"";
    }

    /** (watermark -> rows as "pos:tag") of the committed log, excluding the initial rows. */
    private static Map<String, List<String>> rows(PgDatabase db, int shard) throws Exception {
        Map<String, List<String>> out = new TreeMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT watermark, pos, change->>'tag' FROM " + table(shard)
                        + " WHERE watermark <> '00' ORDER BY watermark, pos")) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getLong(2) + ":" + rs.getString(3));
            }
        }
        return out;
    }

    private static String lastWatermark(PgDatabase db, int shard) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT \"lastWatermark\" FROM \"" + APP + "_" + shard + "/cdc\".\"replicationState\"")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void put(StorerQueue q, Msgs.M m) throws Exception {
        q.enqueue(m.message(), m.json());
    }

    private static void tx(StorerQueue q, String w, int inserts) throws Exception {
        put(q, Msgs.begin(w));
        for (int i = 0; i < inserts; i++) {
            put(q, Msgs.insert(i, w + "-" + i));
        }
        put(q, Msgs.commit(w));
    }

    @Test
    void storesByteIdenticalRowsAndAcksAfterCommit(PgDatabase db) throws Exception {
        int shard = SHARDS.incrementAndGet();
        RecordingListener listener = new RecordingListener();
        try (PgChangeLog log = open(db, shard, 2, "task");
                StorerQueue q = new StorerQueue(log, "task", StorerQueueSettings.defaults(), listener, listener)) {
            Msgs.M big = Msgs.insert(1, "x\"y\\z\u00e9\u0001");
            put(q, Msgs.begin(wm(5)));
            put(q, big);
            put(q, Msgs.insert(2, "b"));
            put(q, Msgs.insert(3, "c"));
            put(q, Msgs.commit(wm(5)));
            put(q, Msgs.beginSkipAck(wm(6)));
            put(q, Msgs.insert(4, "d"));
            put(q, Msgs.commit(wm(6)));
            put(q, Msgs.begin(wm(7)));
            put(q, Msgs.insert(5, "e"));
            put(q, Msgs.rollback());
            q.barrier().get(60, TimeUnit.SECONDS);
            assertEquals(List.of("stored:" + wm(5), "stored-noack:" + wm(6)), listener.snapshot());
            assertEquals(Map.of(wm(5), List.of("0:begin", "1:insert", "2:insert", "3:insert", "4:commit"),
                    wm(6), List.of("0:begin", "1:insert", "2:commit")), rows(db, shard));
            assertEquals(wm(6), lastWatermark(db, shard));
            try (Connection c = db.connect(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT change::text, precommit FROM " + table(shard)
                            + " WHERE watermark = '" + wm(5) + "' ORDER BY pos")) {
                rs.next();
                rs.next();
                assertEquals(big.json(), "[\"data\"," + rs.getString(1) + "]", "stored text is byte-identical");
                rs.next();
                rs.next();
                rs.next();
                assertEquals(wm(5), rs.getString(2));
            }
        }
    }

    /**
     * A backfill transaction exactly as the change source's backfill manager writes it, between two
     * replication transactions: stored at its minor watermark, never acked, and its
     * {@code backfill-completed} clears the column's backfill record.
     */
    @Test
    void backfillTransactionOfTheBackfillManagerIsStoredButNotAcked(PgDatabase db) throws Exception {
        int shard = SHARDS.incrementAndGet();
        RecordingListener listener = new RecordingListener();
        String rel = "{\"schema\":\"public\",\"name\":\"foo\",\"rowKey\":{\"columns\":[\"id\"]}}";
        String minor = wm(5) + ".01";
        try (PgChangeLog log = open(db, shard, 2, "task");
                StorerQueue q = new StorerQueue(log, "task", StorerQueueSettings.defaults(), listener, listener)) {
            put(q, Msgs.begin(wm(5)));
            put(q, Msgs.of(Msgs.CODEC.decodeChangeStreamMessage("[\"data\",{\"tag\":\"add-column\",\"table\":"
                    + "{\"schema\":\"public\",\"name\":\"foo\"},\"column\":{\"name\":\"v\",\"spec\":{\"pos\":2,"
                    + "\"dataType\":\"jsonb\"}},\"tableMetadata\":{\"rowKey\":{\"id\":{\"attNum\":1}}},"
                    + "\"backfill\":{\"attNum\":2}}]")));
            put(q, Msgs.commit(wm(5)));
            q.barrier().get(60, TimeUnit.SECONDS);
            assertEquals(1, log.streamStartParameters().backfillRequests().size(), "v is being backfilled");
            put(q, Msgs.of(Msgs.CODEC.decodeChangeStreamMessage("[\"begin\",{\"tag\":\"begin\",\"json\":\"s\","
                    + "\"skipAck\":true},{\"commitWatermark\":\"" + minor + "\"}]")));
            put(q, Msgs.of(Msgs.CODEC.decodeChangeStreamMessage("[\"data\",{\"tag\":\"backfill\",\"relation\":" + rel
                    + ",\"columns\":[\"v\"],\"watermark\":\"" + wm(4) + "\",\"rowValues\":[[1,\"{\\\"a\\\": 1}\"]],"
                    + "\"status\":{\"rows\":1,\"totalRows\":1,\"totalBytes\":12}}]")));
            put(q, Msgs.of(Msgs.CODEC.decodeChangeStreamMessage("[\"data\",{\"tag\":\"backfill-completed\",\"relation\":"
                    + rel + ",\"columns\":[\"v\"],\"watermark\":\"" + wm(4) + "\"}]")));
            put(q, Msgs.of(Msgs.CODEC.decodeChangeStreamMessage("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\""
                    + minor + "\"}]")));
            tx(q, wm(6), 1);
            q.barrier().get(60, TimeUnit.SECONDS);
            assertEquals(List.of("stored:" + wm(5), "stored-noack:" + minor, "stored:" + wm(6)), listener.snapshot());
            assertEquals(List.of("0:begin", "1:backfill", "2:backfill-completed", "3:commit"), rows(db, shard).get(minor));
            assertEquals(wm(6), lastWatermark(db, shard));
            assertEquals(List.of(), log.streamStartParameters().backfillRequests(), "completed: no request is left");
        }
    }

    @Test
    void groupCommitWritesQueuedTransactionsInOneDatabaseTransaction(PgDatabase db) throws Exception {
        int shard = SHARDS.incrementAndGet();
        RecordingListener listener = new RecordingListener();
        Semaphore firstCommit = new Semaphore(0);
        try (PgChangeLog real = open(db, shard, 3, "task")) {
            GateLog log = new GateLog(real, firstCommit);
            try (StorerQueue q = new StorerQueue(log, "task", StorerQueueSettings.defaults(), listener, listener)) {
                tx(q, wm(1), 2);
                StorerQueueTest.waitFor(() -> log.commits.get() == 1);
                for (int i = 2; i <= 9; i++) {
                    tx(q, wm(i), 4);
                }
                Req r = new Req();
                q.enqueueCatchup(r);
                tx(q, wm(10), 1);
                firstCommit.release();
                q.barrier().get(60, TimeUnit.SECONDS);
                assertEquals(new StorerStats(3, 10, 4 + 8 * 6 + 3, 8), q.stats());
                assertEquals(10, rows(db, shard).size());
                assertEquals(wm(10), lastWatermark(db, shard));
                // The catch-up snapshot was pinned after the group ending at wm(9): it sees wm(9), not wm(10).
                assertEquals(1, r.snapshotWatermarks.size());
                assertEquals(wm(9), r.snapshotWatermarks.get(0));
                assertEquals(List.of(wm(9)), r.lastRowWatermarks);
            }
        }
    }

    @Test
    void ownershipTakenOverFailsTheQueueAndNothingIsAcked(PgDatabase db) throws Exception {
        int shard = SHARDS.incrementAndGet();
        RecordingListener listener = new RecordingListener();
        try (PgChangeLog log = open(db, shard, 2, "task");
                PgChangeLog other = open(db, shard, 2, "task")) {
            other.assumeOwnership("other-task", "127.0.0.1:2");
            try (StorerQueue q = new StorerQueue(log, "task", StorerQueueSettings.defaults(), listener, listener)) {
                try {
                    tx(q, wm(1), 3);
                } catch (ChangeLogException e) {
                    // the writer may already have failed when the commit is handed over
                }
                assertInstanceOf(OwnershipLostException.class, listener.failure.get(60, TimeUnit.SECONDS));
                assertTrue(listener.acks.isEmpty());
                assertEquals(Map.of(), rows(db, shard));
            }
        }
    }

    // ------------------------------------------------------------------ child JVMs

    @Test
    void aMillionChangeTransactionCompletesUnder256MegabytesOfHeap(PgDatabase db) throws Exception {
        int shard = SHARDS.incrementAndGet();
        Child child = Child.start("million", db.uri(), APP, String.valueOf(shard), "1000000");
        int code = child.waitFor(Duration.ofMinutes(4));
        String out = child.output();
        assertEquals(0, code, "child failed:\n" + out);
        assertTrue(out.contains("DONE"), out);
        assertTrue(out.contains("maxHeap=" ), out);
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*), max(pos) FROM " + table(shard) + " WHERE watermark = '"
                        + wm(1000) + "'")) {
            rs.next();
            assertEquals(1_000_002, rs.getLong(1));
            assertEquals(1_000_001, rs.getLong(2));
        }
        assertTrue(out.contains("ACK " + wm(1000)), out);
    }

    @Test
    void killedBetweenFlushAndCommitNothingUnstoredIsAckedAndNothingIsDuplicated(PgDatabase db) throws Exception {
        int shard = SHARDS.incrementAndGet();
        int transactions = 12;
        Child child = Child.start("crash", db.uri(), APP, String.valueOf(shard), String.valueOf(transactions), "2");
        String hold = child.awaitLine(l -> l.startsWith("HOLD"), Duration.ofMinutes(2));
        // The held group's rows were flushed: its connection sits idle inside an open transaction.
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND state = 'idle in transaction' AND pid <> pg_backend_pid()")) {
            rs.next();
            assertEquals(1, rs.getLong(1), "the group's transaction is open, with its flushes done");
        }
        assertEquals("HOLD rows=" + (transactions - 1) * 5, hold);
        child.kill();
        List<String> acked = child.lines().stream().filter(l -> l.startsWith("ACK ")).map(l -> l.substring(4)).toList();

        Map<String, List<String>> stored = rows(db, shard);
        assertEquals(List.of(wm(1)), acked, "only the first group was acked");
        assertEquals(new TreeSet<>(acked), stored.keySet(), "acked == stored: nothing acked that is not stored");
        assertEquals(wm(1), lastWatermark(db, shard));

        // Restart: the source replays everything after the last stored watermark; each stored once.
        RecordingListener listener = new RecordingListener();
        try (PgChangeLog log = open(db, shard, 2, "task-2")) {
            String resume = log.streamStartParameters().lastWatermark();
            try (StorerQueue q = new StorerQueue(log, "task-2", StorerQueueSettings.defaults(), listener, listener)) {
                for (int t = 1; t <= transactions; t++) {
                    if (wm(t).compareTo(resume) <= 0) {
                        continue;
                    }
                    put(q, Msgs.begin(wm(t)));
                    for (int i = 0; i < 3; i++) {
                        put(q, Msgs.insert(t * 10L + i, "crash-" + t + "-" + i));
                    }
                    put(q, Msgs.commit(wm(t)));
                }
                q.barrier().get(60, TimeUnit.SECONDS);
            }
        }
        Map<String, List<String>> after = rows(db, shard);
        assertEquals(transactions, after.size());
        after.values().forEach(r -> assertEquals(List.of("0:begin", "1:insert", "2:insert", "3:insert", "4:commit"), r));
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) - count(DISTINCT (watermark, pos)) FROM " + table(shard))) {
            rs.next();
            assertEquals(0, rs.getLong(1));
        }
        assertEquals(transactions - 1, listener.acks.size());
        assertEquals(wm(transactions), lastWatermark(db, shard));
    }

    /** A child JVM on the test class path. */
    static final class Child {
        private final Process process;
        private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        private final LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();

        private Child(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        lines.add(line);
                        queue.add(line);
                    }
                } catch (java.io.IOException e) {
                    lines.add("(output lost: " + e + ")");
                }
            }, "child-output");
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(String... args) throws java.io.IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-cp", cp,
                    QueueChild.class.getName()));
            cmd.addAll(List.of(args));
            return new Child(new ProcessBuilder(cmd).redirectErrorStream(true).start());
        }

        int waitFor(Duration timeout) throws InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("child did not finish in " + timeout + ":\n" + output());
            }
            return process.exitValue();
        }

        String awaitLine(java.util.function.Predicate<String> p, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                String line = queue.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    process.destroyForcibly();
                    throw new AssertionError("child never printed the expected line:\n" + output());
                }
                if (p.test(line)) {
                    return line;
                }
            }
        }

        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        List<String> lines() {
            synchronized (lines) {
                return List.copyOf(lines);
            }
        }

        String output() {
            return String.join("\n", lines());
        }
    }

    /** Delegates to the real log but holds the first commit until released. */
    static final class GateLog extends DelegatingChangeLog {
        final AtomicInteger commits = new AtomicInteger();
        private final Semaphore gate;

        GateLog(PgChangeLog real, Semaphore first) {
            super(real);
            this.gate = first;
        }

        @Override
        public org.zrm.changelog.ChangeLogTransaction beginTransaction(String taskID) throws ChangeLogException {
            org.zrm.changelog.ChangeLogTransaction tx = delegate().beginTransaction(taskID);
            return new org.zrm.changelog.ChangeLogTransaction() {
                @Override
                public void append(ChangeLogEntry entry) throws ChangeLogException {
                    tx.append(entry);
                }

                @Override
                public void commit() throws ChangeLogException {
                    if (commits.getAndIncrement() == 0) {
                        try {
                            gate.acquire();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new ChangeLogException("interrupted", e);
                        }
                    }
                    tx.commit();
                }

                @Override
                public void close() {
                    tx.close();
                }
            };
        }
    }

    /** A catch-up request that reads its snapshot on the spot (tests only; a handler hands it off). */
    static final class Req implements CatchupRequest, RecordingListener.SnapshotReader {
        final List<String> snapshotWatermarks = new ArrayList<>();
        final List<String> lastRowWatermarks = new ArrayList<>();
        final CompletableFuture<Exception> failed = new CompletableFuture<>();

        @Override
        public void read(org.zrm.changelog.CatchupSnapshot snapshot) throws Exception {
            snapshotWatermarks.add(snapshot.lastWatermark());
            try (CatchupCursor cursor = snapshot.catchup("00", wm(8))) {
                TreeSet<String> seen = new TreeSet<>();
                for (List<ChangeLogEntry> batch = cursor.nextBatch(); !batch.isEmpty(); batch = cursor.nextBatch()) {
                    batch.forEach(e -> seen.add(e.watermark()));
                }
                lastRowWatermarks.addAll(seen);
            }
        }

        @Override
        public void fail(Exception cause) {
            failed.complete(cause);
        }
    }
}

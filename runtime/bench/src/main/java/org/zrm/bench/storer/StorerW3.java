package org.zrm.bench.storer;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.zrm.bench.BenchContext;
import org.zrm.bench.Result;
import org.zrm.bench.Workload;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.changelog.StorerListener;
import org.zrm.storer.internal.queue.StorerQueue;
import org.zrm.storer.internal.queue.StorerQueueSettings;
import org.zrm.watermark.LexiVersion;

/**
 * {@code storer-W3}: the storer alone on Zero's fixture workload (WORKLOADS.md W3). Transactions of
 * 20,000 and 50,000 inserts are handed to a {@link StorerQueue} over the real {@link PgChangeLog};
 * the time runs from the first message handed over to the commit being reported durable. The limit
 * is {@code COPY} of the same rows into a table shaped like {@code changeLog}, in the same run and
 * cluster. Group commit is measured with single-change transactions against the same transactions
 * stored one database transaction each (upstream behaviour).
 */
public final class StorerW3 implements Workload {

    private static final String TASK = "bench-task";
    private static final String REPLICA_VERSION = "00";
    private static final int REPS = 3;
    private static final int WARM_UP_ROUNDS = 3;
    private static final double TARGET = 0.8;

    private BenchContext ctx;

    @Override
    public String name() {
        return "storer-W3";
    }

    @Override
    public String description() {
        return "storer alone, Zero fixture W3: 20k/50k-change transactions vs COPY; group commit";
    }

    @Override
    public List<Result> run(BenchContext context) throws Exception {
        this.ctx = context;
        List<Result> results = new ArrayList<>();
        try (PgCluster cluster = PgCluster.builder()
                .dataDir(context.workDir().resolve("pg"))
                .binDir(context.pgBin())
                .setting("shared_preload_libraries", "pg_stat_statements")
                .setting("pg_stat_statements.track", "all")
                .start()) {
            say("cluster on port %d, data in %s", cluster.port(), context.workDir());
            String copyDb = cluster.createDatabase("copy");
            try (Connection c = cluster.connect(copyDb)) {
                CopyLimit.createTable(c);
                try (Statement s = c.createStatement()) {
                    s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
                }
            }
            // Warm-up (JIT, cluster caches); not reported. The storer runs far more code per row than
            // the COPY loop (queue, validation, encoding, the pipeline, back-pressure), and a short
            // warm-up left the JIT compiling through the measured reps (50-150 ms of compiler time
            // per rep, on the cores the backend needs), so both sides first get several rounds of
            // the largest transaction, which also exercises back-pressure.
            List<W3Fixture.Msg> warm = W3Fixture.transaction(wm(1), 1, context.scaled(50_000));
            for (int round = 0; round < WARM_UP_ROUNDS; round++) {
                storeOnce(cluster, warm, StorerSettings.DEFAULT_BATCH_SIZE, StorerQueueSettings.defaults(),
                        new Profile());
                copyOnce(cluster, copyDb, CopyLimit.rows(warm), true);
                copyOnce(cluster, copyDb, CopyLimit.rows(warm), false);
            }

            results.add(bigTransaction(cluster, copyDb, "storer-W3-20k", context.scaled(20_000),
                    StorerSettings.DEFAULT_BATCH_SIZE));
            results.add(bigTransaction(cluster, copyDb, "storer-W3-50k", context.scaled(50_000),
                    StorerSettings.DEFAULT_BATCH_SIZE));
            results.add(bigTransaction(cluster, copyDb, "storer-W3-unbatched-20k", context.scaled(20_000), 1));
            results.add(groupCommit(cluster, context.scaled(100_000)));
        }
        return results;
    }

    // ------------------------------------------------------------------ one big transaction

    private Result bigTransaction(PgCluster cluster, String copyDb, String name, int changes, int batchSize)
            throws Exception {
        long startId = 1_000_000L;
        List<W3Fixture.Msg> tx = W3Fixture.transaction(wm(1000), startId, changes);
        double mb = W3Fixture.payloadBytes(startId, changes) / W3Fixture.BYTES_PER_MB;
        long jsonChars = tx.stream().mapToLong(m -> m.json().length()).sum();
        say("%s: %d changes, %.1f MB payload, %.1f MB of message JSON, batch size %d", name, changes, mb,
                jsonChars / 1e6, batchSize);
        CopyLimit.Row[] rows = CopyLimit.rows(tx);
        List<Double> zrm = new ArrayList<>();
        List<Double> text = new ArrayList<>();
        List<Double> binary = new ArrayList<>();
        Profile profile = new Profile();
        Profile limitProfile = new Profile();
        double coldStorer;
        double coldCopy;
        try (Rig rig = new Rig(cluster, batchSize, StorerSettings.DEFAULT_INSERT_MODE);
                Connection limitConnection = cluster.connect(copyDb)) {
            // Both sides measure what a running system sees: a storer keeps its pooled connections
            // (300-600 s each) and a COPY loader its session. The first run on a new backend pays
            // for mapping the shared buffers it touches (a minor page fault per 8 KB page, ~16,000
            // per 50k rep for the storer, whose per-batch COPYs each take a fresh buffer ring), so
            // each side does one unreported run on its connections first; its time is recorded.
            coldStorer = storeOnce(rig, tx, StorerQueueSettings.defaults(), new Profile()) / 1e9;
            coldCopy = copyOnce(limitConnection, rows, true, new Profile()) / 1e9;
            copyOnce(limitConnection, rows, false, new Profile());
            for (int rep = 0; rep < REPS; rep++) {
                double s = storeOnce(rig, tx, StorerQueueSettings.defaults(), profile) / 1e9;
                double ct = copyOnce(limitConnection, rows, false, new Profile()) / 1e9;
                double cb = copyOnce(limitConnection, rows, true, limitProfile) / 1e9;
                zrm.add(mb / s);
                text.add(mb / ct);
                binary.add(mb / cb);
                say("  rep %d: storer %.3f s (%.1f MB/s); COPY text %.3f s (%.1f MB/s), binary %.3f s (%.1f MB/s)",
                        rep + 1, s, mb / s, ct, mb / ct, cb, mb / cb);
            }
        }
        say("  on new connections (unreported): storer %.3f s (%.1f MB/s), COPY binary %.3f s (%.1f MB/s)",
                coldStorer, mb / coldStorer, coldCopy, mb / coldCopy);
        double zrmRate = median(zrm);
        double textRate = median(text);
        double binaryRate = median(binary);
        double limit = Math.max(textRate, binaryRate);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("changes", changes);
        details.put("payloadMB", round(mb));
        details.put("messageJsonMB", round(jsonChars / 1e6));
        details.put("changeLogBatchSize", batchSize);
        details.put("insertMode", StorerSettings.DEFAULT_INSERT_MODE.property());
        details.put("reps", REPS);
        details.put("storerMBps", rounded(zrm));
        details.put("copyTextMBps", rounded(text));
        details.put("copyBinaryMBps", rounded(binary));
        details.put("limitForm", binaryRate >= textRate ? "COPY binary" : "COPY text");
        details.put("profile", profile.toJson(REPS));
        details.put("limitBinaryCpu", limitProfile.cpuJson(REPS));
        details.put("newConnectionStorerMBps", round(mb / coldStorer));
        details.put("newConnectionCopyBinaryMBps", round(mb / coldCopy));
        if (batchSize > 1) {
            // The same storer with upstream's statement (change.insertMode=json), once, for the
            // before/after comparison of the insert-mode decision; not part of the RESULT line.
            double js;
            try (Rig rig = new Rig(cluster, batchSize, StorerSettings.InsertMode.JSON)) {
                js = storeOnce(rig, tx, StorerQueueSettings.defaults(), new Profile()) / 1e9;
            }
            details.put("storerJsonModeMBps", round(mb / js));
            say("  insertMode=json (upstream statement), one rep: %.3f s (%.1f MB/s, %.3f x limit)", js, mb / js,
                    (mb / js) / limit);
            details.put("insertPathProbe", probe(cluster, copyDb, rows, batchSize, mb));
        }
        return new Result(name, zrmRate, limit, TARGET, "MB/s", details);
    }

    /**
     * Where the time goes in the insert path: the same rows written back to back, without the
     * queue, with the core's {@code json_to_recordset} statement and with binary COPY per batch.
     */
    private Map<String, Object> probe(PgCluster cluster, String copyDb, CopyLimit.Row[] rows, int batchSize, double mb)
            throws SQLException {
        long[] recordset;
        long copyBatches;
        try (Connection c = cluster.connect(copyDb)) {
            CopyLimit.truncate(c);
            recordset = CopyLimit.jsonToRecordset(c, rows, batchSize);
            CopyLimit.truncate(c);
            copyBatches = CopyLimit.copyBinaryBatches(c, rows, batchSize);
        }
        Map<String, Object> probe = new LinkedHashMap<>();
        probe.put("jsonToRecordsetSequentialMBps", round(mb / (recordset[1] / 1e9)));
        probe.put("jsonToRecordsetClientEncodeMs", round(recordset[0] / 1e6));
        probe.put("jsonToRecordsetStatementsMs", round((recordset[1] - recordset[0]) / 1e6));
        probe.put("copyBinaryPerBatchMBps", round(mb / (copyBatches / 1e9)));
        say("  probe: json_to_recordset back to back %.1f MB/s (encode %.0f ms, statements %.0f ms);"
                + " binary COPY per %d-row batch %.1f MB/s", mb / (recordset[1] / 1e9), recordset[0] / 1e6,
                (recordset[1] - recordset[0]) / 1e6, batchSize, mb / (copyBatches / 1e9));
        return probe;
    }

    /**
     * A change database with an open {@link PgChangeLog} kept across the repetitions of one case;
     * each run starts from an empty {@code changeLog} (truncated, so the next run writes into a new
     * relation file as a fresh table would).
     */
    private final class Rig implements AutoCloseable {
        final PgCluster cluster;
        final String db;
        final PgChangeLog log;

        Rig(PgCluster cluster, int batchSize, StorerSettings.InsertMode mode) throws Exception {
            this.cluster = cluster;
            this.db = cluster.createDatabase("storer");
            try {
                this.log = openLog(cluster, db, batchSize, mode);
            } catch (Exception e) {
                cluster.dropDatabase(db);
                throw e;
            }
        }

        void reset() throws SQLException {
            try (Connection c = cluster.connect(db); Statement s = c.createStatement()) {
                s.execute("TRUNCATE \"bench_0/cdc\".\"changeLog\"");
            }
        }

        long rows(String watermark) throws SQLException {
            try (Connection c = cluster.connect(db); PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM \"bench_0/cdc\".\"changeLog\" WHERE watermark = ?")) {
                ps.setString(1, watermark);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }

        @Override
        public void close() throws Exception {
            try {
                log.close();
            } finally {
                cluster.dropDatabase(db);
            }
        }
    }

    /** Stores one transaction into a fresh change log; returns nanoseconds from first message to durable. */
    private long storeOnce(PgCluster cluster, List<W3Fixture.Msg> tx, int batchSize, StorerQueueSettings qs,
            Profile profile) throws Exception {
        try (Rig rig = new Rig(cluster, batchSize, StorerSettings.DEFAULT_INSERT_MODE)) {
            return storeOnce(rig, tx, qs, profile);
        }
    }

    /** Stores one transaction into the rig's emptied change log; returns nanoseconds from first message to durable. */
    private long storeOnce(Rig rig, List<W3Fixture.Msg> tx, StorerQueueSettings qs, Profile profile) throws Exception {
        String last = ((org.zrm.protocol.ChangeStreamMessage.CommitMessage) tx.get(tx.size() - 1).message()).watermark();
        Latch latch = new Latch(last);
        rig.reset();
        resetStatements(rig.cluster, rig.db);
        quiesce(rig.cluster, rig.db);
        long t0;
        long handedOver;
        long t1;
        CpuSample cpuBefore;
        try (StorerQueue queue = new StorerQueue(rig.log, TASK, qs, latch, (snapshot, requests) -> snapshot.close())) {
            cpuBefore = CpuSample.take();
            t0 = System.nanoTime();
            for (W3Fixture.Msg m : tx) {
                queue.enqueue(m.message(), m.json());
            }
            handedOver = System.nanoTime();
            latch.await();
            t1 = System.nanoTime();
            profile.addCpu(cpuBefore, CpuSample.take());
            profile.backPressureEvents += queue.backPressureEvents();
        }
        long rows = rig.rows(last);
        if (rows != tx.size()) {
            throw new IllegalStateException("expected " + tx.size() + " rows, found " + rows);
        }
        profile.wallNanos += t1 - t0;
        profile.enqueueNanos += handedOver - t0;
        profile.add(serverTimes(rig.cluster, rig.db));
        return t1 - t0;
    }

    private long copyOnce(PgCluster cluster, String copyDb, CopyLimit.Row[] rows, boolean binary) throws SQLException {
        try (Connection c = cluster.connect(copyDb)) {
            return copyOnce(c, rows, binary, new Profile());
        }
    }

    /** One COPY of {@code rows} into the truncated limit table on {@code c}; its CPU goes to {@code profile}. */
    private static long copyOnce(Connection c, CopyLimit.Row[] rows, boolean binary, Profile profile)
            throws SQLException {
        CopyLimit.truncate(c);
        quiesce(c);
        CpuSample before = CpuSample.take();
        long nanos = binary ? CopyLimit.copyBinary(c, rows) : CopyLimit.copyText(c, rows);
        profile.addCpu(before, CpuSample.take());
        return nanos;
    }

    // ------------------------------------------------------------------ group commit

    private Result groupCommit(PgCluster cluster, int transactions) throws Exception {
        long startId = 5_000_000L;
        List<List<W3Fixture.Msg>> txs = new ArrayList<>(transactions);
        for (int i = 0; i < transactions; i++) {
            txs.add(W3Fixture.transaction(wm(10_000 + i), startId + i, 1));
        }
        double mb = W3Fixture.payloadBytes(startId, transactions) / W3Fixture.BYTES_PER_MB;
        // Without group commit each transaction pays a durable commit (an fsync); measured on a prefix
        // so that the run stays within minutes, which is enough for a stable rate.
        int baselineTxns = Math.min(transactions, Math.max(1, ctx.scaled(10_000)));
        say("storer-W3-groupcommit: %d single-change transactions (%.1f MB payload); baseline on %d", transactions,
                mb, baselineTxns);
        StorerQueueSettings on = StorerQueueSettings.defaults();
        StorerQueueSettings off = on.withGroupCommit(1, on.maxGroupBytes(), on.maxGroupDelay());
        GroupRun with = storeMany(cluster, txs, on);
        say("  group commit: %.3f s, %.0f txn/s, %d database transactions (largest %d)", with.nanos / 1e9,
                with.txnPerSec(), with.groups, with.largest);
        GroupRun without = storeMany(cluster, txs.subList(0, baselineTxns), off);
        say("  without group commit: %.3f s for %d, %.0f txn/s", without.nanos / 1e9, baselineTxns,
                without.txnPerSec());
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("comparedWith", "the same transactions stored without group commit (one database transaction"
                + " per upstream transaction, as zero-cache does); zrm and limit are txn/s");
        details.put("transactions", transactions);
        details.put("payloadMB", round(mb));
        details.put("groupCommitSeconds", round(with.nanos / 1e9));
        details.put("groupCommitTxnPerSec", round(with.txnPerSec()));
        details.put("groupCommitMBps", round(mb / (with.nanos / 1e9)));
        details.put("databaseTransactions", with.groups);
        details.put("largestGroup", with.largest);
        details.put("averageGroup", round((double) transactions / Math.max(1, with.groups)));
        details.put("baselineTransactions", baselineTxns);
        details.put("baselineSeconds", round(without.nanos / 1e9));
        details.put("baselineTxnPerSec", round(without.txnPerSec()));
        details.put("settings", Map.of("maxGroupTransactions", on.maxGroupTransactions(), "maxGroupBytes",
                on.maxGroupBytes(), "maxGroupDelayMs", on.maxGroupDelay().toMillis()));
        return new Result("storer-W3-groupcommit", with.txnPerSec(), without.txnPerSec(), 1.0, "txn/s", details);
    }

    private record GroupRun(long nanos, int txns, long groups, long largest) {
        double txnPerSec() {
            return txns / (nanos / 1e9);
        }
    }

    private GroupRun storeMany(PgCluster cluster, List<List<W3Fixture.Msg>> txs, StorerQueueSettings qs)
            throws Exception {
        String db = cluster.createDatabase("group");
        try (PgChangeLog log = openLog(cluster, db, StorerSettings.DEFAULT_BATCH_SIZE)) {
            List<W3Fixture.Msg> lastTx = txs.get(txs.size() - 1);
            String last = ((org.zrm.protocol.ChangeStreamMessage.BeginMessage) lastTx.get(0).message()).commitWatermark();
            Latch latch = new Latch(last);
            long t0;
            long t1;
            org.zrm.changelog.StorerStats stats;
            try (StorerQueue queue = new StorerQueue(log, TASK, qs, latch, (snapshot, requests) -> snapshot.close())) {
                t0 = System.nanoTime();
                for (List<W3Fixture.Msg> tx : txs) {
                    for (W3Fixture.Msg m : tx) {
                        queue.enqueue(m.message(), m.json());
                    }
                }
                latch.await();
                t1 = System.nanoTime();
                stats = queue.stats();
            }
            if (latch.stored != txs.size()) {
                throw new IllegalStateException("expected " + txs.size() + " acks, got " + latch.stored);
            }
            long rows = count(cluster, db);
            if (rows != 3L * txs.size() + 2) {
                throw new IllegalStateException("expected " + (3L * txs.size() + 2) + " rows, found " + rows);
            }
            return new GroupRun(t1 - t0, txs.size(), stats.groups(), stats.largestGroup());
        } finally {
            cluster.dropDatabase(db);
        }
    }

    // ------------------------------------------------------------------ helpers


    private PgChangeLog openLog(PgCluster cluster, String db, int batchSize) throws ChangeLogException {
        return openLog(cluster, db, batchSize, StorerSettings.DEFAULT_INSERT_MODE);
    }

    private PgChangeLog openLog(PgCluster cluster, String db, int batchSize, StorerSettings.InsertMode mode)
            throws ChangeLogException {
        PgChangeLog log = new PgChangeLog(StorerSettings.of(cluster.uri(db), "bench", 0)
                .withChangeLogBatchSize(batchSize).withStatementTimeoutMs(120_000).withInsertMode(mode));
        log.ensureReplicationConfig(new SubscriptionState(REPLICA_VERSION, List.of(), REPLICA_VERSION), false);
        log.assumeOwnership(TASK, "127.0.0.1:4849");
        return log;
    }

    private static long count(PgCluster cluster, String db) throws SQLException {
        try (Connection c = cluster.connect(db); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM \"bench_0/cdc\".\"changeLog\"")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Brings both sides of a comparison to the same starting line: a checkpoint, so that neither
     * pays for the other's (or the setup's) dirty buffers and WAL, and a full GC, so that neither
     * pays for garbage it did not make (the fixture and the previous measurement allocate tens of
     * MB each). Called right before every measured storer run and every measured COPY.
     */
    private static void quiesce(PgCluster cluster, String db) throws SQLException {
        try (Connection c = cluster.connect(db)) {
            quiesce(c);
        }
    }

    private static void quiesce(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
        }
        System.gc();
    }

    private static void resetStatements(PgCluster cluster, String db) throws SQLException {
        try (Connection c = cluster.connect(db); Statement s = c.createStatement()) {
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            s.execute("SELECT pg_stat_statements_reset()");
        }
    }

    /** Server execution time per statement kind for this database, from {@code pg_stat_statements}. */
    private static Map<String, double[]> serverTimes(PgCluster cluster, String db) throws SQLException {
        Map<String, double[]> out = new LinkedHashMap<>();
        try (Connection c = cluster.connect(db); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT query, calls, total_exec_time FROM pg_stat_statements"
                        + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
            while (rs.next()) {
                String q = rs.getString(1);
                String kind = q.contains("json_to_recordset") ? "insertBatch"
                        : q.startsWith("COPY") ? "copyBatch"
                        : q.startsWith("INSERT") ? "insertRow"
                        : q.equalsIgnoreCase("COMMIT") ? "commit"
                        : q.startsWith("UPDATE") ? "updateState" : "other";
                double[] acc = out.computeIfAbsent(kind, k -> new double[2]);
                acc[0] += rs.getLong(2);
                acc[1] += rs.getDouble(3);
            }
        }
        return out;
    }

    /** Accumulated timing breakdown over the repetitions of one case. */
    private static final class Profile {
        long wallNanos;
        long enqueueNanos;
        long backPressureEvents;
        final Map<String, double[]> server = new LinkedHashMap<>();
        final Map<String, Long> cpuNanos = new LinkedHashMap<>();

        void addCpu(CpuSample before, CpuSample after) {
            after.minus(before).forEach((k, v) -> cpuNanos.merge(k, v, Long::sum));
        }

        void add(Map<String, double[]> times) {
            times.forEach((k, v) -> {
                double[] acc = server.computeIfAbsent(k, x -> new double[2]);
                acc[0] += v[0];
                acc[1] += v[1];
            });
        }

        /** CPU (and GC/JIT wall) per repetition, leaving out threads that did not run. */
        Map<String, Object> cpuJson(int reps) {
            Map<String, Object> json = new LinkedHashMap<>();
            cpuNanos.forEach((k, v) -> {
                if (k.startsWith(CpuSample.FAULTS)) {
                    json.put("faultsPerRep." + k.substring(CpuSample.FAULTS.length()), v / reps);
                } else if (v > 0 || !k.startsWith("thread.")) {
                    json.put("cpuMsPerRep." + k, round(v / 1e6 / reps));
                }
            });
            return json;
        }

        Map<String, Object> toJson(int reps) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("wallMsPerRep", round(wallNanos / 1e6 / reps));
            json.put("handOverMsPerRep", round(enqueueNanos / 1e6 / reps));
            json.put("backPressureEvents", backPressureEvents);
            server.forEach((k, v) -> json.put("server." + k, Map.of("calls", (long) v[0] / reps,
                    "msPerRep", round(v[1] / reps))));
            json.putAll(cpuJson(reps));
            return json;
        }
    }

    /** Counts acks and releases when the given commit is durable. */
    private static final class Latch implements StorerListener {
        private final String last;
        private final CountDownLatch done = new CountDownLatch(1);
        private final AtomicReference<ChangeLogException> failure = new AtomicReference<>();
        volatile long stored;

        Latch(String last) {
            this.last = last;
        }

        @Override
        public void stored(String commitWatermark, ChangeSourceUpstream ack) {
            stored++;
            if (commitWatermark.equals(last)) {
                done.countDown();
            }
        }

        @Override
        public void statusAcked(ChangeSourceUpstream echo) {
        }

        @Override
        public void failed(ChangeLogException cause) {
            failure.set(cause);
            done.countDown();
        }

        void await() throws Exception {
            if (!done.await(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("storer did not finish within 30 minutes");
            }
            if (failure.get() != null) {
                throw failure.get();
            }
        }
    }

    private static String wm(long n) {
        return LexiVersion.encode(n);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static List<Double> rounded(List<Double> values) {
        return values.stream().map(StorerW3::round).toList();
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private void say(String format, Object... args) {
        ctx.out().println(String.format(Locale.ROOT, format, args));
        ctx.out().flush();
    }
}

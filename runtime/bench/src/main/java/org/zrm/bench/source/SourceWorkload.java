package org.zrm.bench.source;

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
import java.util.concurrent.ScheduledExecutorService;
import org.zrm.bench.BenchContext;
import org.zrm.bench.Result;
import org.zrm.bench.Workload;
import org.zrm.pgcluster.PgCluster;
import org.zrm.watermark.Lsn;

/**
 * {@code source-W1} / {@code source-W2}: the Postgres change source alone against the walsender
 * limit ({@code pg_recvlogical}), WORKLOADS.md W1 (1,000,000 rows in 4 transactions, rows/s) and W2
 * (100,000 single-row autocommit transactions, transactions/s).
 *
 * <p>One throwaway cluster and one load per run: the publication and every slot are created before
 * the load, so each measurement drains its own slot over the same WAL. Measurements run one after
 * the other, never concurrently (2 cores): ZRM and {@code pg_recvlogical} alternate for
 * {@value #REPS} rounds, and the best (shortest) drain of each side is reported, since slowdowns on
 * a shared machine only ever add time; medians are kept in the JSON. Then, not counted in the
 * ratio: drains whose consumer also encodes every message to JSON, and one such drain under a JFR
 * profile, which gives the per-stage percentages.
 */
public final class SourceWorkload implements Workload {

    private static final int REPS = 3;
    private static final int ENCODE_REPS = 2;
    private static final double TARGET = 0.9;
    private static final String PUB = "bench_pub";

    private final String name;
    private final boolean bulk;

    private SourceWorkload(String name, boolean bulk) {
        this.name = name;
        this.bulk = bulk;
    }

    /** W1: 1,000,000 rows in 4 transactions. */
    public static SourceWorkload w1() {
        return new SourceWorkload("source-W1", true);
    }

    /** W2: 100,000 single-row autocommit transactions. */
    public static SourceWorkload w2() {
        return new SourceWorkload("source-W2", false);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return bulk ? "pg change source alone vs pg_recvlogical, W1: 1M rows in 4 transactions (rows/s)"
                : "pg change source alone vs pg_recvlogical, W2: 100k single-row transactions (txn/s)";
    }

    @Override
    public List<Result> run(BenchContext context) throws Exception {
        RecvLogical.requireTool(context.pgBin(), name);
        int rows = bulk ? context.scaled(1_000_000) : context.scaled(100_000);
        int txns = bulk ? Math.min(4, rows) : rows;
        ScheduledExecutorService scheduler = ProcCpu.newSampler();
        try (PgCluster cluster = context.replicationCluster().start()) {
            say(context, "%s: cluster on port %d, data in %s; %d rows in %d transactions", name, cluster.port(),
                    context.workDir(), rows, txns);
            warmUp(context, cluster, scheduler);

            String db = cluster.createDatabase("source");
            List<String> zrmSlots = new ArrayList<>();
            List<String> recvSlots = new ArrayList<>();
            List<String> encodeSlots = new ArrayList<>();
            Map<String, String> startWatermarks = new LinkedHashMap<>();
            String loadSeconds;
            String endLsn;
            try (Connection c = cluster.connect(db)) {
                createTable(c);
                for (int r = 1; r <= REPS; r++) {
                    zrmSlots.add(createSlot(c, "zrm_" + r, startWatermarks));
                    recvSlots.add(createSlot(c, "recv_" + r, startWatermarks));
                }
                for (int r = 1; r <= ENCODE_REPS + 1; r++) {
                    encodeSlots.add(createSlot(c, "json_" + r, startWatermarks));
                }
                long t0 = System.nanoTime();
                if (bulk) {
                    loadBulk(c, rows, txns);
                } else {
                    loadSmall(c, rows);
                }
                loadSeconds = String.format(Locale.ROOT, "%.2f", (System.nanoTime() - t0) / 1e9);
                endLsn = query(c, "SELECT pg_current_wal_lsn()");
                say(context, "  loaded in %s s; end LSN %s", loadSeconds, endLsn);
            }

            ZrmDrain zrm = new ZrmDrain(cluster, db, PUB);
            RecvLogical recv = new RecvLogical(context.pgBin(), cluster, db, PUB);
            List<Double> zrmSeconds = new ArrayList<>();
            List<Double> recvSeconds = new ArrayList<>();
            List<Map<String, Object>> runs = new ArrayList<>();
            try (Connection control = cluster.connect(db)) {
                WalSenders walSenders = new WalSenders(control);
                for (int r = 0; r < REPS; r++) {
                    ZrmDrain.Run z = zrm.drain(zrmSlots.get(r), startWatermarks.get(zrmSlots.get(r)), endLsn, txns,
                            false, walSenders, scheduler, null);
                    check(z, rows, txns);
                    RecvLogical.Run p = recv.drain(recvSlots.get(r), endLsn, walSenders, scheduler);
                    zrmSeconds.add(z.seconds());
                    recvSeconds.add(p.seconds());
                    say(context, "  rep %d: zrm %.3f s = %s (walsender CPU %.2f s, JVM CPU %.2f s, first commit at"
                                    + " %.3f s); pg_recvlogical %.3f s = %s (walsender CPU %.2f s, client CPU %.2f s)",
                            r + 1, z.seconds(), rate(rows, txns, z.seconds()), z.walsenderCpu(), z.jvmCpu(),
                            z.firstMessageSeconds(), p.seconds(), rate(rows, txns, p.seconds()), p.walsenderCpu(),
                            p.clientCpu());
                    runs.add(runJson("zrm", r + 1, z));
                    runs.add(runJson("pg_recvlogical", r + 1, p));
                }
                List<Double> encodeSeconds = new ArrayList<>();
                long jsonChars = 0;
                for (int r = 0; r < ENCODE_REPS; r++) {
                    ZrmDrain.Run z = zrm.drain(encodeSlots.get(r), startWatermarks.get(encodeSlots.get(r)), endLsn,
                            txns, true, walSenders, scheduler, null);
                    check(z, rows, txns);
                    encodeSeconds.add(z.seconds());
                    jsonChars = z.jsonChars();
                    say(context, "  encode rep %d: zrm + JSON encode %.3f s = %s (%.1f MB of JSON; walsender CPU %.2f"
                                    + " s, JVM CPU %.2f s)", r + 1, z.seconds(), rate(rows, txns, z.seconds()),
                            z.jsonChars() / 1e6, z.walsenderCpu(), z.jvmCpu());
                    runs.add(runJson("zrm+json", r + 1, z));
                }
                StageProfile profile = new StageProfile();
                String profSlot = encodeSlots.get(ENCODE_REPS);
                ZrmDrain.Run prof = zrm.drain(profSlot, startWatermarks.get(profSlot), endLsn, txns, true, walSenders,
                        scheduler, profile);
                check(prof, rows, txns);
                say(context, "  profiled drain (zrm + JSON encode, JFR 10 ms samples): %.3f s = %s%n%s",
                        prof.seconds(), rate(rows, txns, prof.seconds()), profile.describe());
                runs.add(runJson("zrm+json profiled", 1, prof));

                double units = bulk ? rows : txns;
                double zrmBest = units / Collections.min(zrmSeconds);
                double recvBest = units / Collections.min(recvSeconds);
                double encodeBest = units / Collections.min(encodeSeconds);
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("rows", rows);
                details.put("transactions", txns);
                details.put("loadSeconds", Double.parseDouble(loadSeconds));
                details.put("endLsn", endLsn);
                details.put("reps", REPS);
                details.put("aggregate", "best of " + REPS + " (shortest drain) for each side; medians below");
                details.put("zrmMedian", units / median(zrmSeconds));
                details.put("limitMedian", units / median(recvSeconds));
                details.put("zrmWithJsonEncodeBest", encodeBest);
                details.put("zrmWithJsonEncodeRatio", encodeBest / recvBest);
                details.put("jsonMB", jsonChars / 1e6);
                details.put("measures", "zrm: PgChangeSource.openStream + StreamDrain (CopyData read, pgoutput parse,"
                        + " value conversion, ChangeMaker, Acker, bounded hand-off; messages discarded; commits acked),"
                        + " from opening the stream to confirmed_flush_lsn >= end LSN; limit: pg_recvlogical process"
                        + " start to exit at --endpos");
                details.put("limitCommand", String.join(" ", recv.command("<slot>", endLsn)));
                details.put("runs", runs);
                details.put("profile", profile.toJson());
                return List.of(new Result(name, zrmBest, recvBest, TARGET, bulk ? "rows/s" : "transactions/s",
                        details));
            }
        } finally {
            scheduler.shutdownNow();
        }
    }

    /** JIT warm-up on a separate database (same shapes, a tenth of the work): not reported. */
    private void warmUp(BenchContext context, PgCluster cluster, ScheduledExecutorService scheduler) throws Exception {
        String db = cluster.createDatabase("warm");
        Map<String, String> start = new LinkedHashMap<>();
        String end;
        try (Connection c = cluster.connect(db)) {
            createTable(c);
            String slot = createSlot(c, "warm", start);
            loadBulk(c, context.scaled(100_000), 2);
            loadSmall(c, context.scaled(10_000));
            end = query(c, "SELECT pg_current_wal_lsn()");
            try (Connection control = cluster.connect(db)) {
                long t0 = System.nanoTime();
                new ZrmDrain(cluster, db, PUB).drain(slot, start.get(slot), end, 2 + context.scaled(10_000), true,
                        new WalSenders(control), scheduler, null);
                say(context, "  warm-up drain: %.2f s", (System.nanoTime() - t0) / 1e9);
            }
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_drop_replication_slot('warm')");
            }
        }
        cluster.dropDatabase(db);
    }

    private static void createTable(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz DEFAULT now())");
            s.execute("CREATE PUBLICATION " + PUB + " FOR TABLE t");
        }
    }

    private static String createSlot(Connection c, String slot, Map<String, String> startWatermarks)
            throws SQLException {
        String lsn = query(c, "SELECT lsn FROM pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
        startWatermarks.put(slot, Lsn.parse(lsn).toWatermark());
        return slot;
    }

    /** W1: {@code txns} transactions of INSERT … SELECT over generate_series. */
    private static void loadBulk(Connection c, int rows, int txns) throws SQLException {
        long done = 0;
        long base = nextId(c);
        for (int i = 0; i < txns; i++) {
            long n = (long) rows * (i + 1) / txns - done;
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO t(id, a, b) SELECT g, g % 1000, md5(g::text) FROM generate_series("
                        + (base + done) + ", " + (base + done + n - 1) + ") g");
            }
            done += n;
        }
    }

    /** W2: single-row autocommit INSERTs over one connection, {@code synchronous_commit=off}. */
    private static void loadSmall(Connection c, int txns) throws SQLException {
        long base = nextId(c);
        try (Statement s = c.createStatement()) {
            s.execute("SET synchronous_commit = off");
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t(id, a, b) VALUES (?, ?, md5(?::text))")) {
            for (long id = base; id < base + txns; id++) {
                ps.setLong(1, id);
                ps.setInt(2, (int) (id % 1000));
                ps.setLong(3, id);
                ps.executeUpdate();
            }
        }
        try (Statement s = c.createStatement()) {
            s.execute("SET synchronous_commit = on");
        }
    }

    private static long nextId(Connection c) throws SQLException {
        return Long.parseLong(query(c, "SELECT coalesce(max(id), 0) + 1 FROM t"));
    }

    private static void check(ZrmDrain.Run z, int rows, int txns) {
        if (z.dataChanges() != rows || z.commits() != txns) {
            throw new IllegalStateException("drained " + z.dataChanges() + " changes in " + z.commits()
                    + " commits, expected " + rows + " in " + txns);
        }
    }

    private String rate(int rows, int txns, double seconds) {
        return bulk ? String.format(Locale.ROOT, "%.0f rows/s", rows / seconds)
                : String.format(Locale.ROOT, "%.0f txn/s", txns / seconds);
    }

    private static Map<String, Object> runJson(String what, int rep, ZrmDrain.Run z) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("what", what);
        m.put("rep", rep);
        m.put("seconds", z.seconds());
        m.put("firstCommitSeconds", z.firstMessageSeconds());
        m.put("messages", z.messages());
        m.put("walsenderCpuSeconds", z.walsenderCpu());
        m.put("jvmCpuSeconds", z.jvmCpu());
        return m;
    }

    private static Map<String, Object> runJson(String what, int rep, RecvLogical.Run p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("what", what);
        m.put("rep", rep);
        m.put("seconds", p.seconds());
        m.put("walsenderCpuSeconds", p.walsenderCpu());
        m.put("clientCpuSeconds", p.clientCpu());
        return m;
    }

    private static double median(List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static String query(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void say(BenchContext context, String format, Object... args) {
        context.out().println(String.format(Locale.ROOT, format, args));
        context.out().flush();
    }

}

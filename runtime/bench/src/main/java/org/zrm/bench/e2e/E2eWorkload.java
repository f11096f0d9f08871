package org.zrm.bench.e2e;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.zrm.bench.BenchContext;
import org.zrm.bench.Result;
import org.zrm.bench.Workload;
import org.zrm.bench.source.ProcCpu;
import org.zrm.bench.source.RecvLogical;
import org.zrm.bench.source.WalSenders;
import org.zrm.bench.storer.W3Upstream;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.LoopbackPorts;

/**
 * End-to-end benchmarks of the whole pipeline as deployed: the real runtime (launcher, Felix, the
 * Postgres change source, the storer, the change streamer and its WebSocket endpoint) in a child
 * process, and protocol-v6 WebSocket subscribers in this JVM (see {@link WsSubscriber}).
 *
 * <p><b>How a measured run starts cleanly.</b> Each measured run uses its own app id, hence its own
 * slot, replica and change log. The app is prepared first: the runtime is started once so that it
 * creates its slot and replica (initial sync of the still empty table) and stopped again. Then a
 * warm-up load and the measured load are written upstream while the runtime is down; the slot keeps
 * the WAL. The measured run starts the runtime again with a long start-up delay, so that it streams
 * only once the first serving subscriber connects (as zero-cache's replication manager). The clock
 * starts when the warm-up's last commit reaches a subscriber (see {@link #warmUp}) and stops when
 * every subscriber has received the measured load's last commit <b>and</b> the slot's
 * {@code confirmed_flush_lsn} has reached the end of the load, i.e. everything is stored and
 * acked upstream.
 *
 * <p><b>Limit.</b> {@code pg_recvlogical} drains a slot created before the same load (the walsender
 * limit of WORKLOADS.md), timed from process start to exit. Best of each side is reported, as for
 * the change-source benchmarks: on this shared 2-core machine interference only ever adds time.
 *
 * <p><b>Peer mode.</b> {@code e2e-W1} and {@code fanout-W4} accept {@code --peer zero-cache}: the same
 * cluster, loads, subscribers and clock with zero-cache's replication manager ({@link ZeroCachePeer}) in
 * place of the runtime. The figures are printed as {@code PEER} lines, never as ZRM's {@code RESULT}.
 */
public final class E2eWorkload implements Workload {

    private enum Kind { W1, W2, FANOUT, CATCHUP, LATENCY, BACKFILL, MEMORY, INITIAL_SYNC }

    private static final String PUB = "bench_pub";
    private static final int FANOUT_SUBSCRIBERS = 50;
    /** The change-streamer endpoint's default {@code send.maxUnackedChars}, the window ZRM applies. */
    private static final long MINIMAL_WRITER_MAX_UNACKED_CHARS = 16L << 20;
    private static final int REPS = 2;
    private static final long CATCHUP_TARGET = 100_000;
    /** catchup-W5 against COPY out of the same change-log rows (the performance issue's target). */
    private static final double CATCHUP_COPY_TARGET = 0.5;
    private static final double LATENCY_TARGET_P99_MS = 20;
    private static final double BACKFILL_RATE_TARGET = 0.5;
    private static final double BACKFILL_P99_FACTOR_TARGET = 2;
    /** The heap the memory workload bounds the runtime to (issue: fan-out performance, item 5). */
    private static final String MEMORY_HEAP = "-Xmx256m";
    private static final double MEMORY_TIME_FACTOR_TARGET = 1.5;
    /** W6: rows in each of the W3 fixture's four tables (issue: fan-out performance, item 3). */
    private static final int INITIAL_SYNC_ROWS_PER_TABLE = 200_000;
    private static final double INITIAL_SYNC_TARGET = 0.6;
    private static final String W3_PUB = "bench_w3";

    private final String name;
    private final Kind kind;

    private E2eWorkload(String name, Kind kind) {
        this.name = name;
        this.kind = kind;
    }

    public static E2eWorkload w1() {
        return new E2eWorkload("e2e-W1", Kind.W1);
    }

    public static E2eWorkload w2() {
        return new E2eWorkload("e2e-W2", Kind.W2);
    }

    public static E2eWorkload fanout() {
        return new E2eWorkload("fanout-W4", Kind.FANOUT);
    }

    public static E2eWorkload catchup() {
        return new E2eWorkload("catchup-W5", Kind.CATCHUP);
    }

    public static E2eWorkload latency() {
        return new E2eWorkload("latency", Kind.LATENCY);
    }

    public static E2eWorkload backfill() {
        return new E2eWorkload("backfill", Kind.BACKFILL);
    }

    public static E2eWorkload memory() {
        return new E2eWorkload("memory", Kind.MEMORY);
    }

    public static E2eWorkload initialSync() {
        return new E2eWorkload("initial-sync", Kind.INITIAL_SYNC);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<String> peers() {
        return kind == Kind.W1 || kind == Kind.FANOUT || kind == Kind.INITIAL_SYNC ? List.of(ZeroCachePeer.NAME)
                : List.of();
    }

    @Override
    public String description() {
        return switch (kind) {
            case W1 -> "end to end: 1,000,000 rows in 4 transactions, stored and acked, vs pg_recvlogical (target 0.5)";
            case W2 -> "end to end: 100,000 single-row transactions, stored and acked, vs pg_recvlogical (target 0.3)";
            case FANOUT -> "W1 to 50 WebSocket subscribers vs a minimal WebSocket writer serving the same frames to the"
                    + " same clients (target 0.7), server CPU per frame (target <= 1.5x the writer's)";
            case CATCHUP -> "a new subscriber catching up a change log holding W1 (target 100,000 changes/s, <= 64 MB buffered)";
            case LATENCY -> "W2 offered at 1,000 tx/s: commit upstream -> subscriber, p50/p99 (target p99 <= 20 ms)";
            case BACKFILL -> "a 1,000,000-row table joins the publication under 1,000 tx/s of W2: backfill rate vs COPY out"
                    + " (target 0.5), live p99 during vs before (target <= 2x and <= 20 ms), runtime peak heap";
            case MEMORY -> "one 1,000,000-row transaction through source, storer, streamer and the in-process replicator"
                    + " under " + MEMORY_HEAP + ": no OutOfMemoryError, time vs the same run unbounded (target <= 1.5x)";
            case INITIAL_SYNC -> "W6: the W3 fixture, 200,000 rows a table, synced to a new replica, start to ready, in MB/s"
                    + " vs COPY out of the same tables (target 0.6)";
        };
    }

    // ------------------------------------------------------------------ the run

    private BenchContext ctx;
    private PgCluster cluster;
    private String upstreamDb;
    /** The next row id a load uses, so that the warm-up and the measured load never collide. */
    private long nextId = 1;
    private String changeDb;
    /**
     * The cluster holding {@link #changeDb}: the upstream's, or with
     * {@code ZRM_BENCH_CHANGE_DB_CLUSTER=separate} a second one, so that the change log's WAL is not
     * in the stream the upstream's walsender decodes.
     */
    private PgCluster changeCluster;
    /** The peer measured in place of the runtime ({@code --peer}); {@code null} to measure ZRM. */
    private ZeroCachePeer peer;

    @Override
    public List<Result> run(BenchContext context) throws Exception {
        this.ctx = context;
        if (kind == Kind.W1 || kind == Kind.W2) {
            RecvLogical.requireTool(context.pgBin(), name);
        }
        if (context.peer() != null) {
            // Before the cluster starts: a missing installation fails at once, with the way to fix it.
            peer = ZeroCachePeer.fromEnvironment(System.getenv());
            say("%s: measuring peer %s %s (node %s) in place of the ZRM runtime", name, ZeroCachePeer.NAME,
                    peer.version(), peer.node());
        }
        ScheduledExecutorService scheduler = ProcCpu.newSampler();
        boolean separateChangeDb = "separate".equals(System.getenv("ZRM_BENCH_CHANGE_DB_CLUSTER"));
        try (PgCluster c = context.replicationCluster()
                .setting("max_replication_slots", "32")
                .setting("max_wal_senders", "32")
                .start();
             PgCluster cc = separateChangeDb ? context.replicationCluster().dataDir(context.workDir().resolve("pg-change"))
                     .start() : null) {
            this.cluster = c;
            this.changeCluster = cc != null ? cc : c;
            this.upstreamDb = c.createDatabase("upstream");
            this.changeDb = changeCluster.createDatabase("change");
            try (Connection conn = c.connect(upstreamDb); Statement s = conn.createStatement()) {
                s.execute("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz DEFAULT now())");
                s.execute("CREATE PUBLICATION " + PUB + " FOR TABLE t");
            }
            say("%s: cluster on port %d, work folder %s", name, c.port(), context.workDir());
            return switch (kind) {
                case W1 -> List.of(throughput(true, scheduler));
                case W2 -> List.of(throughput(false, scheduler));
                case FANOUT -> measureFanout();
                case CATCHUP -> measureCatchup();
                case LATENCY -> List.of(measureLatency());
                case BACKFILL -> measureBackfill();
                case MEMORY -> measureMemory();
                case INITIAL_SYNC -> measureInitialSync();
            };
        } finally {
            scheduler.shutdownNow();
        }
    }

    /** e2e-W1 / e2e-W2: one subscriber, against pg_recvlogical. */
    private Result throughput(boolean bulk, ScheduledExecutorService scheduler) throws Exception {
        int rows = bulk ? ctx.scaled(1_000_000) : ctx.scaled(100_000);
        int txns = bulk ? Math.min(4, rows) : rows;
        List<App> apps = new ArrayList<>();
        for (int r = 1; r <= REPS; r++) {
            apps.add(prepare("bench" + r));
        }
        int warmRows = warmUp(rows, bulk);
        List<String> recvSlots = new ArrayList<>();
        try (Connection conn = cluster.connect(upstreamDb); Statement s = conn.createStatement()) {
            for (int r = 1; r <= REPS; r++) {
                s.execute("SELECT pg_create_logical_replication_slot('recv_" + r + "', 'pgoutput')");
                recvSlots.add("recv_" + r);
            }
        }
        String endLsn = load(rows, txns, bulk);
        List<Double> zrm = new ArrayList<>();
        List<Double> limit = new ArrayList<>();
        String who = measuredName();
        List<Map<String, Object>> runs = new ArrayList<>();
        RecvLogical recv = new RecvLogical(ctx.pgBin(), cluster, upstreamDb, PUB);
        try (Connection control = cluster.connect(upstreamDb)) {
            WalSenders walSenders = new WalSenders(control);
            for (int r = 0; r < REPS; r++) {
                Measured m = measure(apps.get(r), endLsn, warmRows, rows, 1, null);
                zrm.add((bulk ? rows : txns) / m.seconds);
                say("  rep %d: %s %.3f s (%s)", r + 1, who, m.seconds, rate(bulk, rows, txns, m.seconds));
                runs.add(m.json(who, r + 1));
                RecvLogical.Run p = recv.drain(recvSlots.get(r), endLsn, walSenders, scheduler);
                limit.add((bulk ? rows : txns) / p.seconds());
                say("  rep %d: pg_recvlogical %.3f s (%s)", r + 1, p.seconds(), rate(bulk, rows, txns, p.seconds()));
                runs.add(Map.of("what", "pg_recvlogical", "rep", r + 1, "seconds", p.seconds()));
            }
        }
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("rows", rows);
        details.put("transactions", txns);
        details.put("runs", runs);
        details.put("reported", "best of " + REPS + " for each side");
        String unit = bulk ? "rows/s" : "txn/s";
        if (peer != null) {
            return Result.peer(name, ZeroCachePeer.NAME, "e2e", max(zrm), "limit", max(limit), unit, details);
        }
        return new Result(name, max(zrm), max(limit), bulk ? 0.5 : 0.3, unit, details);
    }

    /**
     * fanout-W4: W1 to 50 subscribers. The limit is the same 50 clients served the same frames by a
     * {@link MinimalFanoutWriter} on the same cores; the frames are captured from ZRM in this run
     * (a catch-up subscriber after the single-subscriber run). Also reported: server CPU per
     * delivered frame for both, and the old ratio against one subscriber (its 0.7 target retired:
     * on 2 cores it measured the clients, see docs/BENCHMARKS.md).
     */
    private List<Result> measureFanout() throws Exception {
        int rows = ctx.scaled(1_000_000);
        int txns = Math.min(4, rows);
        App single = prepare("single");
        App many = prepare("fanout");
        int warmRows = warmUp(rows, true);
        String endLsn = load(rows, txns, true);
        List<byte[]> frames = peer == null ? new ArrayList<>() : null;
        Measured one = measure(single, endLsn, warmRows, rows, 1, frames);
        say("  1 subscriber: %.3f s (%s)", one.seconds, rate(true, rows, txns, one.seconds));
        Measured fifty = measure(many, endLsn, warmRows, rows, FANOUT_SUBSCRIBERS, null);
        say("  %d subscribers: %.3f s (%s)%s", FANOUT_SUBSCRIBERS, fifty.seconds, rate(true, rows, txns, fifty.seconds),
                cpuPerFrame(fifty));
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("rows", rows);
        details.put("subscribers", FANOUT_SUBSCRIBERS);
        details.put("single", one.json(measuredName() + ", 1 subscriber", 1));
        details.put("fanout", fifty.json(measuredName() + ", " + FANOUT_SUBSCRIBERS + " subscribers", 1));
        if (peer != null) {
            details.put("limitIs", "the single-subscriber end-to-end rate in the same run");
            return List.of(Result.peer(name, ZeroCachePeer.NAME, "fan", rows / fifty.seconds, "single",
                    rows / one.seconds, "rows/s", details));
        }
        Measured minimal = measureMinimalWriter(frames, warmRows, rows, FANOUT_SUBSCRIBERS);
        say("  minimal writer, %d subscribers: %.3f s (%s)%s", FANOUT_SUBSCRIBERS, minimal.seconds,
                rate(true, rows, txns, minimal.seconds), cpuPerFrame(minimal));
        details.put("minimalWriter", minimal.json("minimal writer, " + FANOUT_SUBSCRIBERS + " subscribers", 1));
        details.put("limitIs", "the same frames to the same clients from a minimal writer (MinimalFanoutWriter), same run");
        double zrmCpu = fifty.measured().nanosPerFrame();
        double minimalCpu = minimal.measured().nanosPerFrame();
        double factor = zrmCpu / minimalCpu;
        double fromConnect = fifty.fromConnect().nanosPerFrame() / minimal.fromConnect().nanosPerFrame();
        return List.of(
                new Result(name, rows / fifty.seconds, rows / minimal.seconds, 0.7, "rows/s", details),
                Result.custom(name + "-cpu-per-frame", String.format(Locale.ROOT,
                        "zrm_us=%.3f minimal_us=%.3f factor=%.2f target_factor=1.5 (from the connect, warm-up"
                        + " included: zrm_us=%.3f minimal_us=%.3f factor=%.2f)", zrmCpu / 1e3, minimalCpu / 1e3,
                        factor, fifty.fromConnect().nanosPerFrame() / 1e3, minimal.fromConnect().nanosPerFrame() / 1e3,
                        fromConnect), factor <= 1.5, Map.of()),
                Result.custom(name + "-vs-single", String.format(Locale.ROOT,
                        "zrm=%.1f single=%.1f ratio=%.3f (retired target 0.7; no target)", rows / fifty.seconds,
                        rows / one.seconds, one.seconds / fifty.seconds), true, Map.of()));
    }

    private static String cpuPerFrame(Measured m) {
        CpuPerFrame all = m.fromConnect();
        return all.cpuNanos() < 0 ? "" : String.format(Locale.ROOT, "; server CPU %.2f s for %d frames = %.2f µs/frame"
                + " (after the warm-up: %.2f s for %d frames = %.2f µs/frame)", all.cpuNanos() / 1e9, all.frames(),
                all.nanosPerFrame() / 1e3, m.measured().cpuNanos() / 1e9, m.measured().frames(),
                m.measured().nanosPerFrame() / 1e3);
    }

    /** The fan-out limit: {@code frames} served by a {@link MinimalFanoutWriter}, timed as {@link #measure}. */
    private Measured measureMinimalWriter(List<byte[]> frames, int warmRows, int rows, int subscribers)
            throws Exception {
        try (MinimalFanoutWriter writer = new MinimalFanoutWriter(frames, MINIMAL_WRITER_MAX_UNACKED_CHARS)) {
            List<WsSubscriber> subs = new ArrayList<>();
            try {
                long cpu0 = writer.cpuNanos();
                subs.addAll(connectAll(writer.port(), "minimal-", subscribers, "-", "-"));
                long[] clock;
                CpuFrameSampler sampler = new CpuFrameSampler(writer::cpuNanos, () -> frames(subs), SAMPLES);
                try (sampler) {
                    clock = await(subs, warmRows, rows);
                }
                return new Measured((clock[1] - clock[0]) / 1e9, (clock[1] - clock[0]) / 1e9, subscribers, 0,
                        sinceConnect(sampler, cpu0), window(sampler, clock[0], true),
                        "minimal writer: " + writer.framesSent() + " frames written");
            } finally {
                subs.forEach(WsSubscriber::close);
            }
        }
    }

    /**
     * Waits for every subscriber to see the warm-up and then the measured load.
     *
     * @return {t0, lastDone}: when the warm-up's last commit reached the first subscriber, and when
     *     the measured load's last commit reached the last one
     */
    private static long[] await(List<WsSubscriber> subs, int warmRows, int rows) throws InterruptedException {
        long t0 = Long.MAX_VALUE;
        for (WsSubscriber s : subs) {
            t0 = Math.min(t0, s.awaitInserts(warmRows, 1_800_000));
        }
        long lastDone = 0;
        for (WsSubscriber s : subs) {
            lastDone = Math.max(lastDone, s.awaitInserts(warmRows + (long) rows, 1_800_000));
        }
        return new long[] {t0, lastDone};
    }

    private static long frames(List<WsSubscriber> subs) {
        return subs.stream().mapToLong(WsSubscriber::frames).sum();
    }

    /** catchup-W5: a change log holding W1, one new subscriber at the oldest watermark. */
    private List<Result> measureCatchup() throws Exception {
        int rows = ctx.scaled(1_000_000);
        int txns = Math.min(4, rows);
        App app = prepare("catchup");
        String endLsn = load(rows, txns, true);
        long bound = 64L << 20;
        try (RuntimeProcess rt = app.start(Map.of("changeStreamer.subscriberMaxBufferedBytes", Long.toString(bound)))) {
            // Fill the change log: a live subscriber takes the whole load through.
            try (WsSubscriber live = WsSubscriber.connect(rt.port(), "live", app.replicaVersion,
                    app.lastWatermark(), "serving", null)) {
                live.awaitInserts(rows, 600_000);
                awaitConfirmed(app, endLsn);
            }
            say("  change log holds %d rows of %d transactions; catching up a new subscriber from %s", rows, txns,
                    app.replicaVersion);
            // The process's first catch-up runs its read and framing paths for the first time, and
            // the JIT compiles them while it runs (C2 threads took about a quarter of the runtime's
            // CPU in it). Subscribers reconnect all the time in a running system, so the figure
            // that matters is the catch-up path compiled; the first one is printed beside it.
            long w0 = System.nanoTime();
            try (WsSubscriber warm = WsSubscriber.connect(rt.port(), "warm-up", app.replicaVersion,
                    app.replicaVersion, "serving", null)) {
                long warmDone = warm.awaitInserts(rows, 600_000);
                say("  warm-up: the process's first catch-up of the same %d changes took %.3f s (%.0f changes/s)",
                        rows, (warmDone - w0) / 1e9, rows / ((warmDone - w0) / 1e9));
            }
            BufferSampler sampler = new BufferSampler(rt);
            var benchAndPgAtStart = org.zrm.bench.storer.CpuSample.take();
            long runtimeCpuAtStart = rt.cpuNanos();
            long t0 = System.nanoTime();
            long done;
            try (WsSubscriber behind = WsSubscriber.connect(rt.port(), "behind", app.replicaVersion,
                    app.replicaVersion, "serving", null)) {
                sampler.start();
                done = behind.awaitInserts(rows, 600_000);
            } finally {
                sampler.stop();
            }
            double seconds = (done - t0) / 1e9;
            double rate = rows / seconds;
            // Where the cores went: the runtime (read, frame, send, read acks), PostgreSQL (the
            // catch-up query) and this process (the subscriber, which reads and acks every frame).
            var benchAndPg = org.zrm.bench.storer.CpuSample.take().minus(benchAndPgAtStart);
            double runtimeCpu = (rt.cpuNanos() - runtimeCpuAtStart) / 1e9;
            say("  caught up %d changes in %.3f s (%.0f changes/s); largest buffered sample %.1f MB (bound %d MB)",
                    rows, seconds, rate, sampler.max / 1e6, bound >> 20);
            say("  CPU during the catch-up (%d cores): runtime %.2f s, PostgreSQL %.2f s, benchmark client %.2f s",
                    Runtime.getRuntime().availableProcessors(), runtimeCpu,
                    benchAndPg.getOrDefault("postgres", 0L) / 1e9, benchAndPg.getOrDefault("jvm", 0L) / 1e9);
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("rows", rows);
            details.put("seconds", seconds);
            details.put("subscriberMaxBufferedBytes", bound);
            details.put("largestBufferedBytesSampled", sampler.max);
            details.put("limitIs", "the target rate, 100,000 changes/s (WORKLOADS.md); the subscriber is"
                    + " disconnected if it ever holds more than the bound, which would fail the run");
            return List.of(new Result(name, rate, CATCHUP_TARGET, 1, "changes/s", details),
                    catchupAgainstCopy(app, rows, seconds, details));
        }
    }

    /**
     * catchup-W5 as a ratio: the same change-log rows read with a plain {@code COPY (SELECT …
     * ORDER BY watermark, pos) TO STDOUT}, output discarded, best of 2 in the same run, against
     * the catch-up's rate (every change-log row, begin and commit included, counted as a change).
     */
    private Result catchupAgainstCopy(App app, int changes, double catchupSeconds, Map<String, Object> details)
            throws Exception {
        String table = app.cdcTable("changeLog");
        long logRows;
        try (Connection c = changeCluster.connect(changeDb); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            logRows = rs.getLong(1);
        }
        double copySeconds = bestCopyOutSeconds(changeDb, "COPY (SELECT watermark, pos, change, precommit FROM " + table
                + " ORDER BY watermark, pos) TO STDOUT");
        double zrm = logRows / catchupSeconds;
        double limit = logRows / copySeconds;
        say("  limit: COPY out of the change log's %d rows in %.3f s = %.0f rows/s (best of 2); the catch-up sent them"
                + " at %.0f rows/s (%d of them changes)", logRows, copySeconds, limit, zrm, changes);
        Map<String, Object> d = new LinkedHashMap<>(details);
        d.put("changeLogRows", logRows);
        d.put("copyOutSeconds", copySeconds);
        return Result.custom(name + "-vs-copy", String.format(Locale.ROOT,
                "zrm=%.1f limit=%.1f ratio=%.3f target=%.1f (rows/s of the change log)", zrm, limit, zrm / limit,
                CATCHUP_COPY_TARGET), zrm / limit >= CATCHUP_COPY_TARGET, d);
    }

    /** latency: single-row transactions offered at 1,000/s; commit returned upstream → commit frame received. */
    private Result measureLatency() throws Exception {
        int txns = ctx.scaled(20_000);
        App app = prepare("latency");
        long[] committed = new long[txns];
        long[] arrived = new long[txns];
        long base = 10_000_000L;
        try (RuntimeProcess rt = app.start(Map.of())) {
            try (WsSubscriber sub = WsSubscriber.connect(rt.port(), "latency", app.replicaVersion,
                    app.lastWatermark(), "serving", id -> {
                        int i = (int) (id - base);
                        if (i >= 0 && i < arrived.length) {
                            arrived[i] = System.nanoTime();
                        }
                    });
                 Connection c = cluster.connect(upstreamDb);
                 PreparedStatement ps = c.prepareStatement("INSERT INTO t(id, a, b) VALUES (?, ?, md5(?::text))")) {
                // synchronous_commit stays on here: with it off, a commit's WAL reaches the
                // walsender only when the WAL writer flushes it (up to wal_writer_delay later),
                // which would charge Postgres' flush schedule to the pipeline's latency.
                awaitStreaming(rt);
                long start = System.nanoTime();
                for (int i = 0; i < txns; i++) {
                    long due = start + i * 1_000_000L; // 1,000 tx/s, paced by the clock, not by the pipeline
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    ps.setLong(1, base + i);
                    ps.setInt(2, i % 1000);
                    ps.setLong(3, base + i);
                    ps.executeUpdate();
                    committed[i] = System.nanoTime();
                }
                double offered = txns / ((System.nanoTime() - start) / 1e9);
                sub.awaitInserts(txns, 120_000);
                // The first 10 % warm the JIT on both sides and are left out.
                int skip = txns / 10;
                double[] ms = new double[txns - skip];
                for (int i = skip; i < txns; i++) {
                    ms[i - skip] = (arrived[i] - committed[i]) / 1e6;
                }
                Arrays.sort(ms);
                double p50 = ms[(int) Math.floor(0.50 * (ms.length - 1))];
                double p99 = ms[(int) Math.floor(0.99 * (ms.length - 1))];
                double max = ms[ms.length - 1];
                say("  offered %.0f tx/s; commit -> subscriber p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d measured)",
                        offered, p50, p99, max, ms.length);
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("transactions", txns);
                details.put("offeredTxnPerSec", offered);
                details.put("p50Ms", p50);
                details.put("p99Ms", p99);
                details.put("maxMs", max);
                details.put("measured", ms.length);
                String line = String.format(Locale.ROOT, "p50_ms=%.2f p99_ms=%.2f target_p99_ms=%s", p50, p99,
                        trim(LATENCY_TARGET_P99_MS));
                return Result.custom("latency-W2", line, p99 <= LATENCY_TARGET_P99_MS, details);
            }
        }
    }

    /**
     * backfill: a table of {@code 1,000,000} rows (W1's shape) joins the publication while W2-style
     * single-row transactions are offered at 1,000/s. Three figures: the backfill's rate (rows from
     * the ALTER PUBLICATION's commit until {@code backfill-completed} reaches the subscriber) against
     * {@code COPY (SELECT …) TO STDOUT} of the same columns, binary as the backfill reads them, in
     * the same run; the live commit → subscriber p99 while the backfill runs against the p99 of the
     * same load just before it; and the runtime's heap, from its GC log. Beside them, as evidence:
     * the CPU the runtime, the server and this process used while the backfill ran, and the
     * ratio's ceiling, from the change DB's own ingest of the backfill's change-log rows measured
     * afterwards in the same run (see {@link #changeLogStore}).
     */
    private List<Result> measureBackfill() throws Exception {
        int rows = ctx.scaled(1_000_000);
        // A first, smaller backfill under the same live load warms the runtime's backfill path:
        // the JIT compiles it and recompiles the live path's methods that the backfill's messages
        // deoptimize, which took 1.8 of the runtime's 4.9 CPU-seconds when the measured backfill
        // was the process's first. Its own rate is printed too: what a fresh process's first
        // backfill sees.
        int warmRows = ctx.scaled(200_000);
        try (Connection c = cluster.connect(upstreamDb); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE big (id bigint PRIMARY KEY, a int, b text, c timestamptz DEFAULT now())");
            s.execute("INSERT INTO big(id, a, b) SELECT g, g % 1000, md5(g::text) FROM generate_series(1, " + rows + ") g");
            s.execute("CREATE TABLE warm (LIKE big INCLUDING ALL)");
            s.execute("INSERT INTO warm(id, a, b) SELECT g, g % 1000, md5(g::text) FROM generate_series(1, " + warmRows
                    + ") g");
            s.execute("VACUUM ANALYZE big");
            s.execute("VACUUM ANALYZE warm");
        }
        double copySeconds = bestCopyOutSeconds(upstreamDb, "COPY (SELECT id, a, b, c FROM big) TO STDOUT (FORMAT binary)");
        double limit = rows / copySeconds;
        say("  limit: COPY out of %d rows in %.2f s = %.0f rows/s (best of 2)", rows, copySeconds, limit);

        // Only the publication: zero-cache's default publication would sync the big table at once.
        App app = prepare("backfill", PUB);
        Path gcLog = app.dir.resolve("gc.log");
        app.javaOpts = "-Xlog:gc:file=" + gcLog;
        int baselineTxns = ctx.scaled(10_000);
        // at most 10 minutes of backfill at 1,000/s, and 2 of the warm-up
        int maxTxns = baselineTxns + ctx.scaled(720_000);
        long[] committed = new long[maxTxns];
        long[] arrived = new long[maxTxns];
        // Each live transaction's WAL position, to split its latency where the walsender passes it.
        long[] walPosition = new long[maxTxns];
        long[] walsenderPassed = new long[maxTxns];
        long base = 20_000_000L;
        int written;
        long alterCommitted;
        long completedAt;
        long storedAt;
        int firstDuring;
        int lastDuring;
        int warmDone = -1;
        int beforeEnd = Integer.MAX_VALUE;
        double warmSeconds = 0;
        long runtimeCpuAtAlter = 0;
        org.zrm.bench.storer.CpuSample benchAndPgAtAlter = null;
        long runtimeCpu;
        Map<String, Long> benchAndPgCpu;
        try (RuntimeProcess rt = app.start(Map.of())) {
            try (WsSubscriber sub = WsSubscriber.connect(rt.port(), "backfill", app.replicaVersion,
                    app.lastWatermark(), "serving", id -> {
                        int i = (int) (id - base);
                        if (i >= 0 && i < arrived.length) {
                            arrived[i] = System.nanoTime();
                        }
                    });
                 Connection c = cluster.connect(upstreamDb);
                 Connection ddl = cluster.connect(upstreamDb);
                 PreparedStatement ps = c.prepareStatement("INSERT INTO t(id, a, b) VALUES (?, ?, md5(?::text))"
                         + " RETURNING (pg_current_wal_insert_lsn() - '0/0')::int8");
                 SentLsnSampler walsender = new SentLsnSampler(cluster.connect(upstreamDb), app.slot(),
                         maxTxns * 2)) {
                awaitStreaming(rt);
                long start = System.nanoTime();
                alterCommitted = 0;
                firstDuring = -1;
                lastDuring = -1;
                int i = 0;
                long warmAlter = 0;
                for (; i < maxTxns; i++) {
                    if (i == 0) {
                        try (Statement st = ddl.createStatement()) {
                            st.execute("ALTER PUBLICATION " + PUB + " ADD TABLE warm");
                        }
                        warmAlter = System.nanoTime();
                    }
                    if (warmDone < 0 && sub.backfillsCompleted() >= 1) {
                        warmSeconds = (sub.awaitBackfillsCompleted(1, 1_000) - warmAlter) / 1e9;
                        warmDone = i;
                        beforeEnd = i + baselineTxns;
                        say("  warm-up: the runtime's first backfill, %d rows in %.2f s = %.0f rows/s (%.3f of the"
                                + " limit's rate)", warmRows, warmSeconds, warmRows / warmSeconds,
                                warmRows / warmSeconds / limit);
                    }
                    if (i == beforeEnd) {
                        try (Statement st = ddl.createStatement()) {
                            st.execute("ALTER PUBLICATION " + PUB + " ADD TABLE big");
                        }
                        alterCommitted = System.nanoTime();
                        runtimeCpuAtAlter = rt.cpuNanos();
                        benchAndPgAtAlter = org.zrm.bench.storer.CpuSample.take();
                        firstDuring = i;
                        say("  %d baseline transactions; ALTER PUBLICATION ... ADD TABLE big", baselineTxns);
                    }
                    if (firstDuring >= 0 && sub.backfillsCompleted() >= 2) {
                        lastDuring = i;
                        break;
                    }
                    long due = start + i * 1_000_000L;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    ps.setLong(1, base + i);
                    ps.setInt(2, i % 1000);
                    ps.setLong(3, base + i);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        walPosition[i] = rs.getLong(1);
                    }
                    committed[i] = System.nanoTime();
                }
                written = i;
                if (lastDuring < 0) {
                    throw new IllegalStateException(warmDone < 0
                            ? "the warm-up backfill did not complete while " + written + " live transactions were written"
                            : "the backfill did not complete while " + (written - firstDuring)
                                    + " live transactions were written");
                }
                completedAt = sub.awaitBackfillsCompleted(2, 1_000);
                // Where the cores went while the backfill ran: the runtime, the PostgreSQL server
                // (COPY out, the change log's ingest, the live load's commits) and this process
                // (the writer and the subscriber).
                benchAndPgCpu = org.zrm.bench.storer.CpuSample.take().minus(benchAndPgAtAlter);
                runtimeCpu = rt.cpuNanos() - runtimeCpuAtAlter;
                storedAt = awaitBackfillStored(app, "big", 120_000);
                sub.awaitInserts(written, 120_000);
                walsender.close();
                for (int k = 0; k < written; k++) {
                    walsenderPassed[k] = walsender.reachedAt(walPosition[k]);
                }
            }
        }
        double backfillSeconds = (completedAt - alterCommitted) / 1e9;
        double rate = rows / backfillSeconds;
        double storedSeconds = (storedAt - alterCommitted) / 1e9;
        say("  the change log held the backfill-completed %.2f s after the ALTER (%.2f s after the subscriber had it):"
                + " %.0f rows/s stored", storedSeconds, storedSeconds - backfillSeconds, rows / storedSeconds);
        double[] store = changeLogStore(app);
        int cores = Runtime.getRuntime().availableProcessors();
        double runtimeCpuSeconds = runtimeCpu / 1e9;
        double postgresCpuSeconds = benchAndPgCpu.getOrDefault("postgres", 0L) / 1e9;
        double clientCpuSeconds = benchAndPgCpu.getOrDefault("jvm", 0L) / 1e9;
        say("  CPU during the backfill (%.2f s wall, %d cores): runtime %.2f s, PostgreSQL %.2f s, benchmark client"
                + " %.2f s", backfillSeconds, cores, runtimeCpuSeconds, postgresCpuSeconds, clientCpuSeconds);
        // The server's COPY out and its ingest of the change-log rows each keep one core busy for
        // their time, and this process (the subscriber reading a million frames, the live writer)
        // runs on the same cores. The backfill needs all three, so it cannot end sooner than their
        // sum spread over every core, even if ZRM's own work cost nothing. (Until session 17 the
        // client was left out, and the ceiling claimed a ratio this machine cannot reach.)
        double floorSeconds = (copySeconds + store[0] + clientCpuSeconds) / cores;
        double ceiling = Math.min(1, copySeconds / floorSeconds);
        say("  store limit: the change DB ingests the backfill's %.1f MB of change-log rows (COPY FROM STDIN into a"
                + " copy of changeLog) in %.2f s (best of 2); floor (COPY out + ingest + this client's %.2f CPU-s)"
                + " / %d cores = %.2f s, so the ratio cannot exceed %.2f", store[1] / 1e6, store[0], clientCpuSeconds,
                cores, floorSeconds, ceiling);
        // The baseline after the warm-up, less its first 10 %, as in the latency benchmark.
        int beforeFrom = warmDone + baselineTxns / 10;
        double[] before = latencies(committed, arrived, beforeFrom, beforeEnd);
        double[] during = latencies(committed, arrived, firstDuring, lastDuring);
        double p99Before = percentile(before, 0.99);
        double p99During = percentile(during, 0.99);
        long[] heap = peakHeap(gcLog);
        long[] edge = serverEdges(committed, walsenderPassed, arrived, written);
        say("  live latency over the backfill (by commit time after the ALTER): %s",
                timeline(committed, arrived, committed, firstDuring, lastDuring, alterCommitted, 10));
        say("  where live latency goes, commit -> walsender past its WAL (as sampled: an upper bound) | -> subscriber,"
                + " p50/p99 ms: before %s; during %s", hops(committed, edge, arrived, beforeFrom, beforeEnd),
                hops(committed, edge, arrived, firstDuring, lastDuring));
        say("  the server's share over the backfill: %s", timeline(committed, edge, committed, firstDuring, lastDuring,
                alterCommitted, 10));
        say("  the runtime's and the client's share: %s", timeline(edge, arrived, committed, firstDuring, lastDuring,
                alterCommitted, 10));
        say("  backfill of %d rows in %.2f s = %.0f rows/s; live p99 %.2f ms before, %.2f ms during (%d transactions"
                + " during); heap peak %d MB, peak after GC %d MB", rows, backfillSeconds, rate, p99Before, p99During,
                during.length, heap[0], heap[1]);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("rows", rows);
        details.put("backfillSeconds", backfillSeconds);
        details.put("storedSeconds", storedSeconds);
        details.put("warmupRows", warmRows);
        details.put("warmupSeconds", warmSeconds);
        details.put("copyOutSeconds", copySeconds);
        details.put("changeLogIngestSeconds", store[0]);
        details.put("cpuRuntimeSeconds", runtimeCpuSeconds);
        details.put("cpuPostgresSeconds", postgresCpuSeconds);
        details.put("cpuBenchClientSeconds", clientCpuSeconds);
        details.put("changeLogBytes", (long) store[1]);
        details.put("floorSeconds", floorSeconds);
        details.put("ratioCeiling", ceiling);
        details.put("liveTransactionsDuring", during.length);
        details.put("p99BeforeMs", p99Before);
        details.put("p99DuringMs", p99During);
        details.put("maxDuringMs", during.length == 0 ? 0 : during[during.length - 1]);
        details.put("heapPeakMb", heap[0]);
        details.put("heapPeakAfterGcMb", heap[1]);
        double factor = p99Before <= 0 ? 0 : p99During / p99Before;
        String latencyLine = String.format(Locale.ROOT,
                "p99_before_ms=%.2f p99_during_ms=%.2f factor=%.2f target_factor=%s target_p99_ms=%s", p99Before,
                p99During, factor, trim(BACKFILL_P99_FACTOR_TARGET), trim(LATENCY_TARGET_P99_MS));
        String heapLine = String.format(Locale.ROOT, "peak_mb=%d peak_after_gc_mb=%d (no target)", heap[0], heap[1]);
        return List.of(
                new Result("backfill-rate", rate, limit, BACKFILL_RATE_TARGET, "rows/s", details),
                Result.custom("backfill-rate-ceiling", String.format(Locale.ROOT,
                        "ceiling=%.3f floor_s=%.2f copy_out_s=%.2f change_log_ingest_s=%.2f client_cpu_s=%.2f cores=%d target=%s reachable=%s (no target)",
                        ceiling, floorSeconds, copySeconds, store[0], clientCpuSeconds, cores, trim(BACKFILL_RATE_TARGET),
                        ceiling >= BACKFILL_RATE_TARGET ? "yes" : "no"), true, details),
                Result.custom("backfill-live-p99", latencyLine,
                        factor <= BACKFILL_P99_FACTOR_TARGET && p99During <= LATENCY_TARGET_P99_MS, details),
                Result.custom("backfill-heap", heapLine, true, details));
    }

    /**
     * memory: one transaction of {@code 1,000,000} rows (W1's shape) through the whole runtime,
     * the in-process replicator included, once with the JVM's default heap and once under
     * {@value #MEMORY_HEAP}, each on its own app (slot, change log, replica) reading the same WAL.
     * Both runs stream the same warm-up first; the clock runs from the warm-up's last commit at the
     * subscriber until the replica holds the big transaction. The bounded run must not end in an
     * {@code OutOfMemoryError} (the runtime exits on one, which fails the run at once), and may take
     * at most {@value #MEMORY_TIME_FACTOR_TARGET} times as long as the unbounded one.
     */
    /**
     * initial-sync (W6): the W3 fixture with {@value #INITIAL_SYNC_ROWS_PER_TABLE} rows in each
     * table, synced to a new replica by a fresh start of the measured product (ZRM, or zero-cache
     * with {@code --peer}). Timed from the start of its process until the change DB records the
     * replica version, i.e. the initial sync has finished and the replica file is in place; the
     * replica's row counts are checked. Best of {@value #REPS} apps, each with its own slot and
     * replica file.
     *
     * <p>The limit is {@code COPY (SELECT * FROM t) TO STDOUT} of the same four tables, output
     * discarded: one connection after the other, and four connections at once, the faster of each
     * one's best of 2. MB are the fixture's payload bytes (upstream's
     * {@code benchmarkFixturePayloadBytes}), the figure upstream's own benchmark reports. Also
     * printed: the same start on an empty table, the fixed cost of any start (JVM or node, the
     * bundles, the shard setup, the slot), and the rate without it.
     */
    private List<Result> measureInitialSync() throws Exception {
        int rowsPerTable = ctx.scaled(INITIAL_SYNC_ROWS_PER_TABLE);
        long loadStart = System.nanoTime();
        long payload;
        try (Connection c = cluster.connect(upstreamDb)) {
            payload = W3Upstream.create(c, W3_PUB, rowsPerTable);
        }
        double mb = payload / 1e6;
        say("  loaded %d rows into each of %s (%.1f MB of payload) in %.1f s", rowsPerTable, W3Upstream.TABLES, mb,
                (System.nanoTime() - loadStart) / 1e9);
        String who = measuredName();
        App empty = new App("isyncempty");
        empty.publications = PUB;
        double fixed = startToReady(empty, 0);
        say("  %s: start to ready on an empty table: %.3f s", who, fixed);
        List<Double> seconds = new ArrayList<>();
        for (int r = 1; r <= REPS; r++) {
            App app = new App("isync" + r);
            app.publications = W3_PUB;
            flushDirtyPages();
            double t = startToReady(app, rowsPerTable);
            seconds.add(t);
            say("  rep %d: %s start to ready %.3f s (%.1f MB/s; %s without the empty start)", r, who, t, mb / t,
                    t > fixed ? String.format(Locale.ROOT, "%.1f MB/s", mb / (t - fixed)) : "no figure");
        }
        double best = seconds.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        List<String> selects = W3Upstream.TABLES.stream().map(t -> "COPY (SELECT * FROM " + t + ") TO STDOUT").toList();
        double serial = bestCopyOutSeconds(upstreamDb, selects, false);
        double parallel = bestCopyOutSeconds(upstreamDb, selects, true);
        double limitSeconds = Math.min(serial, parallel);
        say("  limit: COPY out of the four tables %.3f s one after the other, %.3f s four at once (best of 2 each):"
                + " %.1f MB/s", serial, parallel, mb / limitSeconds);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("rowsPerTable", rowsPerTable);
        details.put("payloadBytes", payload);
        details.put("startToReadySeconds", seconds);
        details.put("emptyStartToReadySeconds", fixed);
        details.put("copyOutSerialSeconds", serial);
        details.put("copyOutParallelSeconds", parallel);
        details.put("reported", "best of " + REPS + ", start to ready; MB/s of payload");
        if (peer != null) {
            return List.of(Result.peer(name, ZeroCachePeer.NAME, "initial_sync", mb / best, "limit", mb / limitSeconds,
                    "MB/s", details));
        }
        return List.of(new Result(name, mb / best, mb / limitSeconds, INITIAL_SYNC_TARGET, "MB/s", details));
    }

    /**
     * Writes the page cache's dirty pages out before a rep (coreutils {@code sync}). Each rep
     * writes a 1.7 GB replica file; without this the next rep began while the kernel was still
     * writing the last one's out, and the two reps of one run differed by up to 1.5× for ZRM and
     * zero-cache alike (session 17), more than the products did.
     */
    private void flushDirtyPages() throws IOException, InterruptedException {
        Process sync = new ProcessBuilder("sync").inheritIO().start();
        if (!sync.waitFor(120, TimeUnit.SECONDS)) {
            sync.destroyForcibly();
            say("  (sync did not finish within 120 s; the rep starts anyway)");
        } else if (sync.exitValue() != 0) {
            say("  (sync exited with %d; the rep starts anyway)", sync.exitValue());
        }
    }

    /**
     * Starts the measured product for a new app, waits until its initial sync has finished and
     * stops it again.
     *
     * @param rowsPerTable rows each W3 table of the replica must hold afterwards; 0 for an app
     *     that publishes the empty table {@code t} and has nothing to check
     * @return seconds from the start of the process to the replica version in the change DB
     */
    private double startToReady(App app, int rowsPerTable) throws Exception {
        long t0 = System.nanoTime();
        double seconds;
        try (ChangeStreamerProcess p = app.startStreamer()) {
            app.replicaVersion = awaitReplicaVersion(p, app);
            seconds = (System.nanoTime() - t0) / 1e9;
        }
        if (rowsPerTable > 0) {
            Path replica = peer == null ? app.dir.resolve("state").resolve("zero.db") : app.dir.resolve("replica.db");
            try (Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:file:" + replica + "?mode=ro");
                    Statement s = c.createStatement()) {
                for (String table : W3Upstream.TABLES) {
                    try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
                        rs.next();
                        if (rs.getLong(1) != rowsPerTable) {
                            throw new IllegalStateException("the replica " + replica + " holds " + rs.getLong(1)
                                    + " rows of " + table + ", not " + rowsPerTable);
                        }
                    }
                }
            }
        }
        return seconds;
    }

    /**
     * Seconds of the faster of two runs of the COPY outs {@code sqls} on database {@code db},
     * output discarded: one connection after the other, or one connection each, all at once.
     */
    private double bestCopyOutSeconds(String db, List<String> sqls, boolean parallel) throws Exception {
        double best = Double.MAX_VALUE;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
                parallel ? sqls.size() : 1);
        try {
            for (int r = 0; r < 2; r++) {
                List<Connection> conns = new ArrayList<>();
                try {
                    for (int i = 0; i < (parallel ? sqls.size() : 1); i++) {
                        conns.add((db.equals(changeDb) ? changeCluster : cluster).connect(db));
                    }
                    long t0 = System.nanoTime();
                    List<java.util.concurrent.Future<?>> running = new ArrayList<>();
                    for (int i = 0; i < sqls.size(); i++) {
                        Connection c = conns.get(parallel ? i : 0);
                        String sql = sqls.get(i);
                        if (parallel) {
                            running.add(pool.submit(() -> copyOut(c, sql)));
                        } else {
                            copyOut(c, sql);
                        }
                    }
                    for (java.util.concurrent.Future<?> f : running) {
                        f.get();
                    }
                    best = Math.min(best, (System.nanoTime() - t0) / 1e9);
                } finally {
                    for (Connection c : conns) {
                        c.close();
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return best;
    }

    private static Void copyOut(Connection c, String sql) throws SQLException, IOException {
        c.unwrap(org.postgresql.PGConnection.class).getCopyAPI().copyOut(sql, java.io.OutputStream.nullOutputStream());
        return null;
    }

    private List<Result> measureMemory() throws Exception {
        int rows = ctx.scaled(1_000_000);
        App unbounded = prepare("memfree", null, true);
        App bounded = prepare("mem256", null, true);
        int warmRows = warmUp(rows, true);
        String endLsn = load(rows, 1, true);
        long lastId = nextId - 1;
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("rows", rows);
        details.put("transactions", 1);
        double[] free = memoryRun(unbounded, "", endLsn, warmRows, rows, lastId);
        say("  default heap: %.3f s; heap peak %.0f MB, peak after GC %.0f MB", free[0], free[1], free[2]);
        double[] small = memoryRun(bounded, MEMORY_HEAP, endLsn, warmRows, rows, lastId);
        say("  %s: %.3f s; heap peak %.0f MB, peak after GC %.0f MB", MEMORY_HEAP, small[0], small[1], small[2]);
        details.put("unboundedSeconds", free[0]);
        details.put("unboundedHeapPeakMb", free[1]);
        details.put("unboundedHeapPeakAfterGcMb", free[2]);
        details.put("boundedSeconds", small[0]);
        details.put("boundedHeap", MEMORY_HEAP);
        details.put("boundedHeapPeakMb", small[1]);
        details.put("boundedHeapPeakAfterGcMb", small[2]);
        double factor = small[0] / free[0];
        String line = String.format(Locale.ROOT, "bounded_s=%.3f unbounded_s=%.3f factor=%.2f target_factor=%s heap=%s"
                + " peak_after_gc_mb=%.0f oom=no", small[0], free[0], factor, trim(MEMORY_TIME_FACTOR_TARGET),
                MEMORY_HEAP.substring("-Xmx".length()), small[2]);
        return List.of(Result.custom("memory", line, factor <= MEMORY_TIME_FACTOR_TARGET, details));
    }

    /**
     * One run of the memory workload.
     *
     * @return seconds until the replica held row {@code lastId}, the heap peak and the peak after a
     *     collection in MB (from the GC log)
     */
    private double[] memoryRun(App app, String heap, String endLsn, int warmRows, int rows, long lastId)
            throws Exception {
        Path gcLog = app.dir.resolve("gc.log");
        app.javaOpts = (heap + " -XX:+ExitOnOutOfMemoryError -Xlog:gc:file=" + gcLog).strip();
        Path replica = app.dir.resolve("state").resolve("zero.db");
        try (RuntimeProcess rt = app.start(Map.of());
                WsSubscriber sub = WsSubscriber.connect(rt.port(), "memory", app.replicaVersion, app.lastWatermark(),
                        "serving", null)) {
            long t0 = sub.awaitInserts(warmRows, 600_000);
            try {
                sub.awaitInserts(warmRows + (long) rows, 600_000);
            } catch (IllegalStateException e) {
                String log = java.nio.file.Files.readString(rt.log());
                if (log.contains("OutOfMemoryError")) {
                    throw new IllegalStateException("the runtime ran out of memory under " + heap + "; see " + rt.log(), e);
                }
                throw e;
            }
            awaitConfirmed(app, endLsn);
            long t1 = awaitReplicaRow(replica, lastId, rt, 600_000);
            long[] peaks = peakHeap(gcLog);
            return new double[] {(t1 - t0) / 1e9, peaks[0], peaks[1]};
        }
    }

    /**
     * Waits until the replica file's {@code t} holds row {@code id}. The replicator applies an
     * upstream transaction as one SQLite transaction, so that row appears with the whole
     * transaction. Polled every 20 ms (another process's file; an indexed lookup), bounded.
     *
     * @return the {@link System#nanoTime()} at which it was seen
     */
    private static long awaitReplicaRow(Path replica, long id, RuntimeProcess rt, long timeoutMs) throws Exception {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        String url = "jdbc:sqlite:file:" + replica + "?mode=ro";
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            if (java.nio.file.Files.isRegularFile(replica)) {
                try (Connection c = java.sql.DriverManager.getConnection(url);
                        PreparedStatement ps = c.prepareStatement("SELECT 1 FROM t WHERE id = ?")) {
                    ps.setLong(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next()) {
                            return System.nanoTime();
                        }
                    }
                } catch (SQLException busyOrNotYet) {
                    // the replicator holds a lock, or has not created the table yet: try again,
                    // and report the last such error if the row never shows
                    last = busyOrNotYet;
                }
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("the replica " + replica + " did not receive row " + id + " within "
                + timeoutMs + " ms; see " + rt.log(), last);
    }

    /**
     * The change DB's own cost of what the measured backfill wrote: its {@code backfill} change-log
     * rows (the table {@code big}'s; the warm-up's are left out),
     * read back once, then loaded with {@code COPY … FROM STDIN} into a table made {@code LIKE} the
     * change log (indexes, TOAST and JSON validation included), best of 2.
     *
     * @return seconds, and the bytes loaded
     */
    private double[] changeLogStore(App app) throws SQLException, IOException {
        String table = app.cdcTable("changeLog");
        try (Connection c = changeCluster.connect(changeDb); Statement s = c.createStatement()) {
            org.postgresql.copy.CopyManager copy = c.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
            java.io.ByteArrayOutputStream rows = new java.io.ByteArrayOutputStream();
            copy.copyOut("COPY (SELECT watermark, pos, change, precommit FROM " + table
                    + " WHERE change->>'tag' = 'backfill' AND change->'relation'->>'name' = 'big') TO STDOUT", rows);
            byte[] data = rows.toByteArray();
            s.execute("CREATE TABLE bench_store_limit (LIKE " + table + " INCLUDING ALL)");
            double best = Double.MAX_VALUE;
            for (int r = 0; r < 2; r++) {
                s.execute("TRUNCATE bench_store_limit");
                long t0 = System.nanoTime();
                copy.copyIn("COPY bench_store_limit FROM STDIN", new java.io.ByteArrayInputStream(data));
                best = Math.min(best, (System.nanoTime() - t0) / 1e9);
            }
            s.execute("DROP TABLE bench_store_limit");
            return new double[] {best, data.length};
        }
    }

    /** Seconds of the faster of two COPY outs of {@code sql} on database {@code db}, output discarded. */
    private double bestCopyOutSeconds(String db, String sql) throws Exception {
        return bestCopyOutSeconds(db, List.of(sql), false);
    }

    /** Sorted commit → arrival latencies in ms of transactions {@code from} (inclusive) to {@code to}. */
    private static double[] latencies(long[] committed, long[] arrived, int from, int to) {
        double[] ms = new double[Math.max(0, to - from)];
        for (int i = from; i < to; i++) {
            ms[i - from] = (arrived[i] - committed[i]) / 1e6;
        }
        Arrays.sort(ms);
        return ms;
    }

    /**
     * Where each live transaction crossed the server's edge: when the walsender was first seen past
     * its WAL ({@link SentLsnSampler}), clamped to [commit, arrival]; a transaction the sampler
     * never saw passing (the sampling period) counts its whole latency on the runtime's side.
     */
    private static long[] serverEdges(long[] committed, long[] passed, long[] arrived, int to) {
        long[] edge = new long[to];
        for (int i = 0; i < to; i++) {
            edge[i] = passed[i] < 0 ? committed[i] : Math.min(arrived[i], Math.max(committed[i], passed[i]));
        }
        return edge;
    }

    /**
     * A live transaction's latency split at the server's edge ({@link #serverEdges}): the server's
     * share before it (WAL flush, decoding), the runtime's and the client's after it, each as
     * p50/p99 over transactions {@code from} to {@code to}.
     */
    private static String hops(long[] committed, long[] edge, long[] arrived, int from, int to) {
        double[] server = latencies(committed, edge, from, to);
        double[] downstream = latencies(edge, arrived, from, to);
        return String.format(Locale.ROOT, "%.1f/%.1f | %.1f/%.1f", percentile(server, 0.5), percentile(server, 0.99),
                percentile(downstream, 0.5), percentile(downstream, 0.99));
    }

    /**
     * Where in time a p99 comes from: the spans {@code start[i]} → {@code end[i]} of transactions
     * {@code from} to {@code to}, split into {@code slices} equal spans of commit time after
     * {@code t0}, each as {@code +start_ms p99/max (count)}. A p99 over a few seconds is set by its
     * longest stall, and this shows whether that is one stall (at the start, at the end) or a steady
     * delay.
     */
    private static String timeline(long[] start, long[] end, long[] committed, int from, int to, long t0, int slices) {
        if (to <= from) {
            return "(no transactions)";
        }
        long span = Math.max(1, committed[to - 1] - t0);
        List<List<Double>> bySlice = new ArrayList<>();
        for (int k = 0; k < slices; k++) {
            bySlice.add(new ArrayList<>());
        }
        for (int i = from; i < to; i++) {
            int k = (int) Math.min(slices - 1, Math.max(0, (committed[i] - t0) * slices / span));
            bySlice.get(k).add((end[i] - start[i]) / 1e6);
        }
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < slices; k++) {
            double[] ms = bySlice.get(k).stream().mapToDouble(Double::doubleValue).sorted().toArray();
            b.append(String.format(Locale.ROOT, "%s+%dms %.0f/%.0f (%d)", k == 0 ? "" : ", ", span * k / slices / 1_000_000,
                    percentile(ms, 0.99), ms.length == 0 ? 0 : ms[ms.length - 1], ms.length));
        }
        return b.toString();
    }

    private static double percentile(double[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.floor(p * (sorted.length - 1))];
    }

    /**
     * The runtime's heap in MB from its unified GC log ({@code -Xlog:gc}): the largest occupancy
     * before any collection, and the largest after one (what stays live).
     */
    private static long[] peakHeap(Path gcLog) throws IOException {
        java.util.regex.Pattern p = java.util.regex.Pattern.compile("(\\d+)M->(\\d+)M\\(\\d+M\\)");
        long peak = 0;
        long peakAfter = 0;
        if (java.nio.file.Files.isRegularFile(gcLog)) {
            for (String line : java.nio.file.Files.readAllLines(gcLog)) {
                java.util.regex.Matcher m = p.matcher(line);
                if (m.find()) {
                    peak = Math.max(peak, Long.parseLong(m.group(1)));
                    peakAfter = Math.max(peakAfter, Long.parseLong(m.group(2)));
                }
            }
        }
        return new long[] {peak, peakAfter};
    }

    // ------------------------------------------------------------------ apps

    /** One app id: its own slot, replica and change log, prepared before the load. */
    private final class App {
        final String id;
        final Path dir;
        final int zeroPort;
        String replicaVersion;
        /** Extra JVM options of the runtime, e.g. a GC log; {@code null} for none. */
        String javaOpts;
        /** {@code ZERO_APP_PUBLICATIONS}; {@code null} for zero-cache's default (every table of public). */
        String publications;
        /** Whether the in-process replicator runs (it keeps {@code state/zero.db} up to date). */
        boolean replicator;

        App(String id) throws IOException {
            this.id = id;
            this.dir = ctx.workDir().resolve(id);
            this.zeroPort = freeZeroPorts();
        }

        RuntimeProcess start(Map<String, String> streamerOverrides) throws IOException, InterruptedException {
            Map<String, String> env = new LinkedHashMap<>();
            env.put("ZERO_UPSTREAM_DB", cluster.uri(upstreamDb));
            env.put("ZERO_CHANGE_DB", changeCluster.uri(changeDb));
            env.put("ZERO_APP_ID", id);
            if (publications != null) {
                env.put("ZERO_APP_PUBLICATIONS", publications);
            }
            // No streaming before the first serving subscriber: the clock starts at its connect.
            env.put("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "3600000");
            // For profiling the runtime, e.g. ZRM_BENCH_RUNTIME_JAVA_OPTS=-XX:StartFlightRecording=...
            String opts = System.getenv("ZRM_BENCH_RUNTIME_JAVA_OPTS");
            String all = ((opts == null ? "" : opts) + " " + (javaOpts == null ? "" : javaOpts)).strip();
            if (!all.isEmpty()) {
                env.put("ZRM_JAVA_OPTS", all);
            }
            Map<String, String> streamer = new LinkedHashMap<>(streamerOverrides);
            Map<String, Map<String, String>> overrides = new LinkedHashMap<>();
            overrides.put("org.zrm.changestreamer", streamer);
            // The backup-mode replicator is not part of most workloads (source, storer, streamer,
            // subscriber); without its configuration it stays inactive.
            if (!replicator) {
                overrides.put("org.zrm.replicator", null);
            }
            return RuntimeProcess.start(ctx.home(), dir, env, zeroPort, overrides);
        }

        /** The change streamer measured: the runtime with its shipped configuration, or the peer. */
        ChangeStreamerProcess startStreamer() throws IOException, InterruptedException {
            if (peer == null) {
                return start(Map.of());
            }
            return peer.start(dir, cluster.uri(upstreamDb), changeCluster.uri(changeDb), id, zeroPort, publications);
        }

        /** Whether a walsender serves the app's slot, i.e. the streamer is streaming. */
        boolean slotActive() throws SQLException {
            try (Connection c = cluster.connect(upstreamDb); PreparedStatement ps = c.prepareStatement(
                    "SELECT active FROM pg_replication_slots WHERE slot_name = ?")) {
                ps.setString(1, slot());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getBoolean(1);
                }
            }
        }

        /** @return the quoted name of one of this app's change-DB tables, e.g. {@code changeLog} */
        String cdcTable(String name) {
            return "\"" + id + "_0/cdc\".\"" + name + "\"";
        }

        String lastWatermark() throws SQLException {
            return queryChange("SELECT \"lastWatermark\" FROM " + cdcTable("replicationState"));
        }

        String slot() throws SQLException {
            try (Connection c = cluster.connect(upstreamDb); PreparedStatement ps = c.prepareStatement(
                    "SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE ? ORDER BY slot_name DESC")) {
                ps.setString(1, id + "\\_0\\_%");
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("no replication slot for app " + id);
                    }
                    return rs.getString(1);
                }
            }
        }
    }

    /** Starts the runtime once so that it syncs the (empty) table and creates its slot, then stops it. */
    private App prepare(String appId) throws Exception {
        return prepare(appId, null);
    }

    /** {@link #prepare(String)} with {@code ZERO_APP_PUBLICATIONS}. */
    private App prepare(String appId, String publications) throws Exception {
        return prepare(appId, publications, false);
    }

    /** {@link #prepare(String, String)}, with the in-process replicator if {@code replicator}. */
    private App prepare(String appId, String publications, boolean replicator) throws Exception {
        App app = new App(appId);
        app.publications = publications;
        app.replicator = replicator;
        long t0 = System.nanoTime();
        try (ChangeStreamerProcess rt = app.startStreamer()) {
            app.replicaVersion = awaitReplicaVersion(rt, app);
        }
        say("  prepared app %s (replica version %s, slot %s) in %.1f s", appId, app.replicaVersion, app.slot(),
                (System.nanoTime() - t0) / 1e9);
        return app;
    }

    /**
     * The change log's replication config appears once initial sync is done; polled every 50 ms
     * (an external process; initial-sync times it), bounded at 3 minutes.
     */
    private String awaitReplicaVersion(ChangeStreamerProcess rt, App app) throws Exception {
        long deadline = System.nanoTime() + 180_000_000_000L;
        String sql = "SELECT \"replicaVersion\" FROM " + app.cdcTable("replicationConfig");
        while (System.nanoTime() < deadline) {
            try {
                String v = queryChange(sql);
                if (v != null) {
                    return v;
                }
            } catch (SQLException notYet) {
                // schema not created yet
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("app " + app.id + " did not finish initial sync; see " + rt.log());
    }

    /** One CPU-per-frame figure: CPU the server used while the subscribers received {@code frames}. */
    private record CpuPerFrame(long cpuNanos, long frames) {

        /** Not known: a peer, whose CPU is not sampled. */
        static final CpuPerFrame UNKNOWN = new CpuPerFrame(-1, 0);

        double nanosPerFrame() {
            return frames == 0 ? 0 : (double) cpuNanos / frames;
        }
    }

    /** Samples kept by a {@link CpuFrameSampler}: an hour of them, longer than any run's timeouts. */
    private static final int SAMPLES = (int) (3_600_000 / CpuFrameSampler.PERIOD_MILLIS);

    /**
     * The CPU per frame from the connect, warm-up included: the CPU used since {@code cpu0} (-1 if
     * not known, a peer), over every frame received.
     */
    private static CpuPerFrame sinceConnect(CpuFrameSampler sampler, long cpu0) {
        long[] to = sampler.last();
        return new CpuPerFrame(cpu0 < 0 ? -1 : to[0] - cpu0, to[1]);
    }

    /** The CPU per frame from {@code t0} (the warm-up's end) to the sampler's last sample. */
    private static CpuPerFrame window(CpuFrameSampler sampler, long t0, boolean known) {
        if (!known) {
            return CpuPerFrame.UNKNOWN;
        }
        long[] from = sampler.at(t0);
        long[] to = sampler.last();
        return new CpuPerFrame(to[0] - from[0], to[1] - from[1]);
    }

    /**
     * @param fromConnect CPU the server used from the subscribers' connecting to the end (-1 where
     *     it is not known, a peer), and the text frames the subscribers received in that time, all
     *     of them
     * @param measured the CPU per frame over the measured window only, from the warm-up's end, as
     *     {@code seconds} is timed (see {@link CpuFrameSampler}): the figure the target is checked on
     */
    private record Measured(double seconds, double subscribersDoneSeconds, int subscribers, int reconnects,
            CpuPerFrame fromConnect, CpuPerFrame measured, Object streamer) {

        Map<String, Object> json(String what, int rep) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("what", what);
            m.put("rep", rep);
            m.put("seconds", seconds);
            m.put("lastSubscriberDoneSeconds", subscribersDoneSeconds);
            m.put("subscribers", subscribers);
            m.put("reconnects", reconnects);
            m.put("serverCpuSeconds", fromConnect.cpuNanos() / 1e9);
            m.put("framesReceived", fromConnect.frames());
            m.put("measuredServerCpuSeconds", measured.cpuNanos() / 1e9);
            m.put("measuredFramesReceived", measured.frames());
            m.put("streamerStatusAfter", streamer);
            return m;
        }
    }

    /**
     * Connects {@code n} serving subscribers named {@code prefix + i} at once, a thread each, as
     * view-syncers restarting together do. One after another they took about half a second
     * (session 20), while the stream, which starts with the first serving subscriber, ran ahead:
     * the last few then began in catch-up behind the bulk load, from the change log, and a run
     * measured their catch-up rather than the fan-out.
     *
     * @return the subscribers in name order; none if one failed to connect (the others are closed)
     */
    private static List<WsSubscriber> connectAll(int port, String prefix, int n, String replicaVersion,
            String watermark) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<WsSubscriber>> connecting = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String name = prefix + i;
                connecting.add(pool.submit(() -> WsSubscriber.connect(port, name, replicaVersion, watermark,
                        "serving", null)));
            }
            List<WsSubscriber> subs = new ArrayList<>();
            Exception failure = null;
            for (Future<WsSubscriber> f : connecting) {
                try {
                    subs.add(f.get());
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause() instanceof Exception cause ? cause : e;
                    }
                }
            }
            if (failure != null) {
                for (WsSubscriber sub : subs) {
                    sub.close();
                }
                throw failure;
            }
            return subs;
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Starts the app's change streamer, connects {@code subscribers} at its last watermark, and times
     * the drain. With {@code capture} non-null, a further subscriber then reads the same stream again
     * from the change log and its frames' messages are appended to {@code capture}.
     */
    private Measured measure(App app, String endLsn, int warmRows, int rows, int subscribers, List<byte[]> capture)
            throws Exception {
        try (ChangeStreamerProcess rt = app.startStreamer()) {
            String from = app.lastWatermark();
            List<WsSubscriber> subs = new ArrayList<>();
            try {
                assertNotStreaming(rt, app);
                LongSupplier serverCpu = rt instanceof RuntimeProcess p ? p::cpuNanos : () -> -1;
                long cpu0 = serverCpu.getAsLong();
                long connected = System.nanoTime();
                subs.addAll(connectAll(rt.port(), "bench-", subscribers, app.replicaVersion, from));
                long[] clock;
                long t1;
                CpuFrameSampler sampler = new CpuFrameSampler(serverCpu, () -> frames(subs), SAMPLES);
                try (sampler) {
                    // The clock starts when the warm-up's last commit reaches the first subscriber.
                    clock = await(subs, warmRows, rows);
                    awaitConfirmed(app, endLsn);
                    t1 = System.nanoTime();
                }
                Object streamer = rt.statusSummary();
                int reconnects = subs.stream().mapToInt(WsSubscriber::reconnects).sum();
                say("    streamer after the run: %s", streamer);
                say("    warm-up of %d rows streamed in %.3f s after connecting", warmRows, (clock[0] - connected) / 1e9);
                if (reconnects > 0) {
                    say("    %d reconnect(s) of subscribers the slow-subscriber bound disconnected (they resumed"
                            + " from the change log)", reconnects);
                }
                Measured m = new Measured((t1 - clock[0]) / 1e9, (clock[1] - clock[0]) / 1e9, subscribers, reconnects,
                        sinceConnect(sampler, cpu0), window(sampler, clock[0], cpu0 >= 0), streamer);
                if (capture != null) {
                    try (WsSubscriber c = WsSubscriber.connectCapturing(rt.port(), "capture", app.replicaVersion, from,
                            capture)) {
                        c.awaitInserts(warmRows + (long) rows, 1_800_000);
                    }
                    say("    captured the stream's %d frames for the minimal writer", capture.size());
                }
                return m;
            } finally {
                subs.forEach(WsSubscriber::close);
            }
        }
    }

    /** The clock must start with the stream: nothing may stream before the first subscriber connects. */
    private void assertNotStreaming(ChangeStreamerProcess p, App app) throws Exception {
        if (p instanceof RuntimeProcess rt) {
            String state = streamerState(rt);
            if ("streaming".equals(state)) {
                throw new IllegalStateException("the runtime streams before any subscriber connected;"
                        + " the start-up delay was not applied (state " + state + ")");
            }
        } else if (app.slotActive()) {
            throw new IllegalStateException(measuredName() + " streams (its slot " + app.slot() + " is active) before"
                    + " any subscriber connected; the start-up delay was not applied; see " + p.log());
        }
    }

    private void awaitConfirmed(App app, String endLsn) throws Exception {
        try (Connection control = cluster.connect(upstreamDb)) {
            if (!new WalSenders(control).awaitConfirmed(app.slot(), endLsn, 600_000)) {
                throw new IllegalStateException("slot of app " + app.id + " did not confirm " + endLsn);
            }
        }
    }

    /**
     * Waits until the change streamer reports {@code streaming} (the latency run must not count
     * the stream's start-up); polled every 20 ms, bounded at one minute.
     */
    private void awaitStreaming(RuntimeProcess rt) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline) {
            if ("streaming".equals(streamerState(rt))) {
                return;
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("the change streamer did not start streaming; see " + rt.log());
    }

    private static String streamerState(RuntimeProcess rt) throws Exception {
        var state = streamerSection(rt).path("state");
        return state.isTextual() ? state.asText() : null;
    }

    /** The change streamer's section of {@code /status}. */
    private static com.fasterxml.jackson.databind.JsonNode streamerSection(RuntimeProcess rt) throws Exception {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(rt.status()).path("sections")
                .path("changestreamer");
    }

    /**
     * Samples the largest {@code zrm_changestreamer_subscriber_buffered_bytes} of any subscriber in
     * {@code /metrics} every 250 ms.
     */
    private static final class BufferSampler {
        private final RuntimeProcess rt;
        private volatile boolean running;
        private volatile long max;
        private Thread thread;

        BufferSampler(RuntimeProcess rt) {
            this.rt = rt;
        }

        void start() {
            running = true;
            thread = new Thread(() -> {
                while (running) {
                    try {
                        max = Math.max(max, largestBufferedBytes(rt.metrics()));
                        // /metrics, not /status: /status walks every bundle and component for
                        // the operator's page, and sampled at 4 Hz it was 8 % of the runtime's
                        // CPU during a catch-up. Not faster either: the bound itself is enforced
                        // by the server (a subscriber above it is disconnected and fails the run).
                        Thread.sleep(250);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // a failed sample is skipped; the run itself reports real failures
                    }
                }
            }, "bench-buffer-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        /** @return the largest value of the subscribers' buffered-bytes gauge, 0 without subscribers */
        static long largestBufferedBytes(String prometheusText) {
            long largest = 0;
            for (String line : prometheusText.split("\n")) {
                if (line.startsWith("zrm_changestreamer_subscriber_buffered_bytes{")) {
                    String value = line.substring(line.lastIndexOf(' ') + 1);
                    largest = Math.max(largest, (long) Double.parseDouble(value));
                }
            }
            return largest;
        }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(5_000);
        }
    }

    // ------------------------------------------------------------------ load and helpers

    /**
     * The warm-up load written before the measured one: a fresh runtime JVM spends its first
     * seconds compiling (JIT) on the same 2 cores as the walsender, which {@code pg_recvlogical}
     * (native code) never pays. The measured runtime streams this load first and the clock starts
     * when its last commit reaches the subscriber, so the figure is the pipeline's streaming rate;
     * the {@code pg_recvlogical} slots are created after the warm-up, so they drain only the
     * measured load. Half the measured rows, in two transactions (bulk) or single-row transactions
     * (small): a fresh runtime spends some 15 s of CPU in its JIT compilers on these machines, so a
     * shorter warm-up would still charge compilation to the measured load.
     */
    private int warmUp(int rows, boolean bulk) throws SQLException {
        int warmRows = Math.max(1, rows / 2);
        load(warmRows, bulk ? Math.min(2, warmRows) : warmRows, bulk);
        return warmRows;
    }

    /** Writes the workload upstream and returns the WAL position after it. */
    private String load(int rows, int txns, boolean bulk) throws SQLException {
        long t0 = System.nanoTime();
        long base = nextId;
        nextId += rows;
        try (Connection c = cluster.connect(upstreamDb); Statement s = c.createStatement()) {
            if (bulk) {
                long done = 0;
                for (int i = 0; i < txns; i++) {
                    long n = (long) rows * (i + 1) / txns - done;
                    s.execute("INSERT INTO t(id, a, b) SELECT g, g % 1000, md5(g::text) FROM generate_series("
                            + (base + done) + ", " + (base + done + n - 1) + ") g");
                    done += n;
                }
            } else {
                s.execute("SET synchronous_commit = off");
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO t(id, a, b) VALUES (?, ?, md5(?::text))")) {
                    for (long id = base; id < base + txns; id++) {
                        ps.setLong(1, id);
                        ps.setInt(2, (int) (id % 1000));
                        ps.setLong(3, id);
                        ps.executeUpdate();
                    }
                }
                s.execute("SET synchronous_commit = on");
            }
            try (ResultSet rs = s.executeQuery("SELECT pg_current_wal_lsn()")) {
                rs.next();
                String lsn = rs.getString(1);
                say("  loaded %d rows in %d transactions in %.1f s; end LSN %s", rows, txns,
                        (System.nanoTime() - t0) / 1e9, lsn);
                return lsn;
            }
        }
    }

    /**
     * Waits until the app's change log holds the {@code backfill-completed} of {@code table}: the
     * storer writes after forwarding, so it may still be storing the backfill when the subscriber
     * has it all. Polls every 20 ms (no signal crosses the process boundary), bounded by
     * {@code timeoutMs}.
     *
     * @return the {@link System#nanoTime()} at which it was seen
     */
    private long awaitBackfillStored(App app, String table, long timeoutMs) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        try (Connection c = changeCluster.connect(changeDb);
             PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + app.cdcTable("changeLog")
                     + " WHERE change->>'tag' = 'backfill-completed' AND change->'relation'->>'name' = ?")) {
            ps.setString(1, table);
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return System.nanoTime();
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the change log did not hold the backfill-completed of " + table
                            + " within " + timeoutMs + " ms");
                }
                Thread.sleep(20);
            }
        }
    }

    private String queryChange(String sql) throws SQLException {
        try (Connection c = changeCluster.connect(changeDb); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /**
     * {@code ZERO_PORT} and the two ports ZRM derives from it, below the kernel's ephemeral range:
     * a port found free with {@code new ServerSocket(0)} is one any outgoing connection (the COPY
     * workers', this process's) can take before the runtime binds it, and a W6 run lost its
     * runtime's HTTP port that way (session 17).
     */
    private static int freeZeroPorts() throws IOException {
        return LoopbackPorts.freeRun(3);
    }

    /** Who is measured, in progress lines and the JSON file. */
    private String measuredName() {
        return peer == null ? "zrm" : ZeroCachePeer.NAME;
    }

    private static String rate(boolean bulk, int rows, int txns, double seconds) {
        return bulk ? String.format(Locale.ROOT, "%.0f rows/s", rows / seconds)
                : String.format(Locale.ROOT, "%.0f txn/s", txns / seconds);
    }

    private static double max(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    private void say(String format, Object... args) {
        ctx.out().println(String.format(Locale.ROOT, format, args));
        ctx.out().flush();
    }

}

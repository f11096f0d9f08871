import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.zrm.watermark.Watermarks;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Frame;

/**
 * What the zero-cache compatibility checks share: their inputs, the throwaway cluster, the
 * {@code COMPAT} step lines, waiting and asserting, Postgres and {@code pg_dump} helpers, reading
 * and copying SQLite replica files, a zero-cache process, a ZRM runtime process and a
 * change-streamer subscriber.
 *
 * <p>A check extends this class, implements {@link #checks()} and calls {@link #runAndExit()} from
 * its {@code main}. The scripts compile this file together with the check ({@code lib.sh}); it
 * may only use what both class paths hold (the API, {@code org.zrm.pgcluster}, pgjdbc, jackson).
 *
 * <p>Inputs (system properties): {@code zero.dir} (folder holding {@code node_modules/@rocicorp/zero}),
 * {@code node.bin} (folder holding Node 22's {@code node}), {@code work.dir} (scratch folder for
 * logs, dumps and replica files), {@code zero.port} (zero-cache's {@code ZERO_PORT}; its
 * change-streamer listens on the next port), {@code zrm.home} (the project folder; only needed by
 * {@link ZrmRuntime}).
 */
abstract class CompatSupport {

    static final String APP = "zero";
    static final int SHARD_NUM = 0;
    static final Duration WAIT = Duration.ofSeconds(90);
    static final ObjectMapper JSON = new ObjectMapper();

    final Path zeroDir;
    final Path nodeBin;
    final Path work;
    final int zeroPort;
    final ProtocolCodec codec = new ProtocolCodec();
    private final List<String> failures = new ArrayList<>();
    PgCluster cluster;

    CompatSupport() {
        this.zeroDir = Path.of(required("zero.dir"));
        this.nodeBin = Path.of(required("node.bin"));
        this.work = Path.of(required("work.dir"));
        this.zeroPort = Integer.parseInt(System.getProperty("zero.port", "14848"));
    }

    private static String required(String name) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("system property " + name + " is required");
        }
        return v;
    }

    /** The check's scenarios, run as {@link #step}s against {@link #cluster}. */
    abstract void checks() throws Exception;

    /** Runs {@link #checks()} on a fresh cluster, prints the summary line and exits 0 or 1. */
    final void runAndExit() throws Exception {
        Files.createDirectories(work);
        try (PgCluster pg = PgCluster.builder().start()) {
            cluster = pg;
            System.out.println("COMPAT-INFO postgres on 127.0.0.1:" + pg.port() + ", work dir " + work);
            checks();
            if (!failures.isEmpty()) {
                System.out.println("COMPAT-INFO zero-cache and ZRM logs are in " + work);
            }
        }
        int failed = failures.size();
        System.out.println(failed == 0 ? "COMPAT all ok" : "COMPAT " + failed + " check(s) FAILED");
        System.exit(failed == 0 ? 0 : 1);
    }

    // ------------------------------------------------------------------ steps, waiting, asserting

    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    /** Runs one check and prints its {@code COMPAT <name> ok|FAIL} line; true if it passed. */
    final boolean step(String name, Body body) {
        long start = System.nanoTime();
        try {
            body.run();
            System.out.printf("COMPAT %s ok (%d ms)%n", name, (System.nanoTime() - start) / 1_000_000);
            return true;
        } catch (Throwable t) {
            String why = t instanceof CheckFailed ? t.getMessage() : t.toString();
            System.out.println("COMPAT " + name + " FAIL " + why.replace('\n', ' '));
            if (!(t instanceof CheckFailed)) {
                t.printStackTrace(System.out);
            }
            failures.add(name);
            return false;
        }
    }

    @FunctionalInterface
    interface Query<T> {
        T get() throws Exception;
    }

    static <T> T query(Query<T> q) {
        try {
            return q.get();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /**
     * Polls with backoff: zero-cache is an external process that offers no signal for "stored" or
     * "applied", so bounded retry is the only option.
     */
    static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        awaitTrue(condition, what, WAIT);
    }

    /** {@link #awaitTrue(BooleanSupplier, String)} with its own deadline. */
    static void awaitTrue(BooleanSupplier condition, String what, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        long sleep = 50;
        while (true) {
            RuntimeException last = null;
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                throw new CheckFailed("timed out after " + wait.toSeconds() + " s waiting for " + what
                        + (last == null ? "" : " (last error: " + last + ")"));
            }
            Thread.sleep(sleep);
            sleep = Math.min(1000, sleep * 2);
        }
    }

    static void expect(boolean ok, String why) {
        if (!ok) {
            throw new CheckFailed(why);
        }
    }

    /** A failed expectation: its message is the whole {@code FAIL} reason, without a stack trace. */
    static final class CheckFailed extends RuntimeException {
        CheckFailed(String message) {
            super(message);
        }
    }

    /** A minimal line diff (LCS), {@code -} for lines only in {@code a}, {@code +} for lines only in {@code b}. */
    static String diff(String a, String b) {
        String[] x = a.split("\n");
        String[] y = b.split("\n");
        int[][] l = new int[x.length + 1][y.length + 1];
        for (int i = x.length - 1; i >= 0; i--) {
            for (int j = y.length - 1; j >= 0; j--) {
                l[i][j] = x[i].equals(y[j]) ? l[i + 1][j + 1] + 1 : Math.max(l[i + 1][j], l[i][j + 1]);
            }
        }
        StringBuilder out = new StringBuilder();
        int i = 0;
        int j = 0;
        while (i < x.length || j < y.length) {
            if (i < x.length && j < y.length && x[i].equals(y[j])) {
                i++;
                j++;
            } else if (j < y.length && (i == x.length || l[i][j + 1] >= l[i + 1][j])) {
                out.append("+ ").append(y[j++]).append('\n');
            } else {
                out.append("- ").append(x[i++]).append('\n');
            }
        }
        return out.toString();
    }

    // ------------------------------------------------------------------ Postgres helpers

    final void exec(String db, String... sqls) throws SQLException {
        try (Connection c = cluster.connect(db); Statement s = c.createStatement()) {
            for (String sql : sqls) {
                s.execute(sql);
            }
        }
    }

    /** Runs {@code sqls} in one transaction: one upstream commit, one replicated transaction. */
    final void execTx(String db, String... sqls) throws SQLException {
        try (Connection c = cluster.connect(db)) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                for (String sql : sqls) {
                    s.execute(sql);
                }
            }
            c.commit();
        }
    }

    /** The first column of the first row, or null when there is none. */
    final String scalar(String db, String sql) throws SQLException {
        List<String> v = strings(db, sql);
        return v.isEmpty() ? null : v.get(0);
    }

    /** The first column of every row. */
    final List<String> strings(String db, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = cluster.connect(db); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /** Every row, each column as text (null stays null). */
    final List<List<String>> pgRows(String db, String sql) throws SQLException {
        List<List<String>> out = new ArrayList<>();
        try (Connection c = cluster.connect(db); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> row = new ArrayList<>(n);
                for (int i = 1; i <= n; i++) {
                    row.add(rs.getString(i));
                }
                out.add(row);
            }
        }
        return out;
    }

    /**
     * {@code pg_dump --schema-only} of {@code db} without owners and privileges, restricted by
     * {@code schemaSelection} ({@code -n}/{@code -N} options), with comments and session settings
     * removed so that two dumps compare by catalog content.
     */
    final String normalizedSchemaDump(String db, String... schemaSelection) throws IOException, InterruptedException {
        Path bin = Path.of(System.getProperty("pg.bin", "/usr/lib/postgresql/15/bin"));
        List<String> cmd = new ArrayList<>(List.of(bin.resolve("pg_dump").toString(), "-h", "127.0.0.1", "-p",
                String.valueOf(cluster.port()), "-U", "postgres", "--schema-only", "--no-owner", "--no-privileges"));
        cmd.addAll(List.of(schemaSelection));
        cmd.add(db);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new CheckFailed("pg_dump " + db + " failed: " + out);
        }
        StringBuilder sb = new StringBuilder();
        for (String line : out.split("\n")) {
            // Comments, session settings and pg_dump's per-run \restrict key are not catalog content.
            if (line.isBlank() || line.startsWith("--") || line.startsWith("SET ") || line.startsWith("\\restrict")
                    || line.startsWith("\\unrestrict") || line.startsWith("SELECT pg_catalog.set_config")) {
                continue;
            }
            sb.append(line).append('\n');
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ SQLite replica files

    /**
     * Every row of {@code sql} on a replica file, each column as text ({@code null} stays null;
     * integers exactly, also beyond 2^53), read with zero-cache's own SQLite
     * ({@code @rocicorp/zero-sqlite3}, read-only): a replica zero-cache serves is in {@code wal2}
     * journal mode, which stock SQLite cannot open, and ZRM's replica is read while ZRM writes it.
     */
    final List<List<String>> replicaQuery(Path file, String sql) throws IOException, InterruptedException {
        String out = zeroSqliteScript(file, sql, "const db = new D(process.argv[1], {readonly: true, fileMustExist: true});"
                + "const st = db.prepare(process.argv[2]).raw().safeIntegers(true);"
                + "for (const r of st.all()) console.log(JSON.stringify(r.map(v => typeof v === 'bigint' ? v.toString()"
                + " : v === null || typeof v === 'string' ? v : String(v))));");
        List<List<String>> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            List<String> row = new ArrayList<>();
            for (JsonNode v : JSON.readTree(line)) {
                row.add(v.isNull() ? null : v.asText());
            }
            rows.add(row);
        }
        return rows;
    }

    /** The replica's {@code _zero.replicationState.stateVersion}: the watermark of its last applied commit. */
    final String replicaStateVersion(Path file) throws IOException, InterruptedException {
        List<List<String>> rows = replicaQuery(file, "SELECT stateVersion FROM \"_zero.replicationState\"");
        expect(rows.size() == 1, "replica " + file + " has " + rows.size() + " replicationState rows");
        return rows.get(0).get(0);
    }

    /**
     * Copies a replica file that another process may be writing with SQLite's online backup
     * (a consistent snapshot of one committed state, WAL content included), as litestream would.
     */
    final void replicaBackup(Path from, Path to) throws IOException, InterruptedException {
        Files.deleteIfExists(to);
        zeroSqliteScript(from, to.toString(), "const db = new D(process.argv[1], {readonly: true, fileMustExist: true});"
                + "db.backup(process.argv[2]).then(() => db.close(), e => { console.error(e); process.exit(1); });");
    }

    private String zeroSqliteScript(Path file, String arg, String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(nodeBin.resolve("node").toString(), "-e",
                "const D = require('@rocicorp/zero-sqlite3');" + script, file.toString(), arg)
                .directory(zeroDir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new CheckFailed("zero-sqlite3 on " + file + " failed: " + out);
        }
        return out;
    }

    // ------------------------------------------------------------------ zero-cache process

    /**
     * Log lines every check counts as a problem: error level, resets, clearing of tables. Checks
     * add their own (see {@link ZeroCache#assertNoLogLines}).
     */
    static boolean commonProblem(String line) {
        return line.contains("\"level\":\"ERROR\"") || line.contains("Clearing tables")
                || line.contains("AutoResetSignal") || line.contains("Cannot reset change db");
    }

    /**
     * One run of zero-cache (a replication manager unless {@code extraEnv} adds sync workers) on
     * upstream {@code db} of the cluster, logging JSON lines to {@code zero-cache-<label>.log}.
     */
    final class ZeroCache {
        /** Set by {@link #crash()}: the log's report of that kill is expected. */
        private volatile boolean killedOnPurpose;
        final String label;
        final Path logFile;
        private final String db;
        private final Path replicaFile;
        private final Map<String, String> extraEnv;
        private Process process;

        ZeroCache(String label, String db, Path replicaFile) {
            this(label, db, replicaFile, Map.of());
        }

        ZeroCache(String label, String db, Path replicaFile, Map<String, String> extraEnv) {
            this.label = label;
            this.db = db;
            this.replicaFile = replicaFile;
            this.extraEnv = extraEnv;
            this.logFile = work.resolve("zero-cache-" + label + ".log");
        }

        /** Starts a replication manager and waits until it streams from upstream and stores. */
        void start() throws Exception {
            start(log -> log.contains("started replication stream@") && log.contains("\"message\":\"starting storer\""),
                    "to start streaming");
        }

        /**
         * Starts zero-cache and waits until its whole log satisfies {@code ready} (e.g. a view-syncer's
         * {@code "zero-cache ready"}), failing early if the process exits.
         */
        void start(Predicate<String> ready, String what) throws Exception {
            ProcessBuilder pb = new ProcessBuilder(nodeBin.resolve("node").toString(),
                    "node_modules/@rocicorp/zero/out/zero/src/cli.js").directory(zeroDir.toFile())
                    .redirectErrorStream(true).redirectOutput(logFile.toFile());
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("ZERO_"));
            env.put("PATH", nodeBin + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
            env.put("ZERO_UPSTREAM_DB", cluster.uri(db));
            env.put("ZERO_REPLICA_FILE", replicaFile.toString());
            env.put("ZERO_NUM_SYNC_WORKERS", "0");
            env.put("ZERO_ADMIN_PASSWORD", "compat-check");
            env.put("ZERO_PORT", String.valueOf(zeroPort));
            env.put("ZERO_APP_ID", APP);
            env.put("ZERO_SHARD_NUM", String.valueOf(SHARD_NUM));
            env.put("ZERO_LOG_FORMAT", "json");
            // Otherwise the change streamer waits 15 s for a load balancer before taking over.
            env.put("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "0");
            env.putAll(extraEnv);
            process = pb.start();
            Runtime.getRuntime().addShutdownHook(new Thread(this::kill));
            awaitTrue(() -> {
                if (!process.isAlive()) {
                    throw new CheckFailed("zero-cache " + label + " exited with " + process.exitValue() + "; see "
                            + logFile);
                }
                return ready.test(log());
            }, "zero-cache " + label + " " + what + " (log " + logFile + ")");
        }

        String taskID() {
            for (String line : log().split("\n")) {
                int i = line.indexOf("runtime env: taskID=");
                if (i >= 0) {
                    return line.substring(i + "runtime env: taskID=".length(), line.indexOf(',', i));
                }
            }
            throw new CheckFailed("no taskID in " + logFile);
        }

        boolean ranInitialSync() {
            return log().contains("Created replication slot") || log().contains("Copying ");
        }

        String log() {
            try {
                return Files.exists(logFile) ? Files.readString(logFile) : "";
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Log lines containing {@code needle}, each cut to its message and at most {@code width} characters of it. */
        List<String> linesMatching(String needle, int width) {
            List<String> out = new ArrayList<>();
            for (String line : log().split("\n")) {
                if (line.contains(needle)) {
                    int m = line.indexOf("\"message\":");
                    out.add(m >= 0 ? line.substring(m + 10, Math.min(line.length(), m + 10 + width)) : line);
                }
            }
            return out;
        }

        /** Fails if any log line is a {@code problem}, quoting each (cut at 400 characters). */
        void assertNoLogLines(Predicate<String> problem) {
            List<String> bad = new ArrayList<>();
            for (String line : log().split("\n")) {
                // The process manager's report of a kill this check made on purpose is not a problem.
                if (killedOnPurpose && line.contains("killed with (SIGKILL)")) {
                    continue;
                }
                if (problem.test(line)) {
                    bad.add(line.length() > 400 ? line.substring(0, 400) + "..." : line);
                }
            }
            expect(bad.isEmpty(), "zero-cache " + label + " logged problems: " + bad);
        }

        /** SIGTERM (zero-cache drains and exits), then a forced kill if it hangs. */
        void stop() throws InterruptedException {
            if (process == null || !process.isAlive()) {
                return;
            }
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                kill();
                throw new CheckFailed("zero-cache " + label + " did not stop within 60 s after SIGTERM");
            }
            expect(process.exitValue() == 0, "zero-cache " + label + " exited with " + process.exitValue() + "; see "
                    + logFile);
        }

        /** SIGKILL, as a crash: nothing is drained or flushed. */
        void crash() {
            killedOnPurpose = true;
            kill();
        }

        private void kill() {
            if (process != null && process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
    }

    // ------------------------------------------------------------------ replica comparison

    /**
     * Two replicas hold the same schema ({@code sqlite_master} of the data tables and their
     * indexes, {@code pragma table_xinfo}), column and table metadata and rows. Each side's own
     * replica version is written as {@code <replicaVersion>}, in defaults and row versions, and
     * its shard's tables ({@code zero_<n>.clients}, {@code zero_<n>.mutations}) as {@code zero_N.*}.
     */
    final void sameReplica(Path a, int shardA, Path b, int shardB, String whatA, String whatB) throws Exception {
        List<String> sa = replicaSnapshot(a, shardA);
        List<String> sb = replicaSnapshot(b, shardB);
        Files.write(work.resolve(a.getFileName() + ".snapshot"), sa);
        Files.write(work.resolve(b.getFileName() + ".snapshot"), sb);
        String d = diff(String.join("\n", sa), String.join("\n", sb));
        System.out.println("COMPAT-INFO replicas " + a.getFileName() + " (" + whatA + ") vs " + b.getFileName() + " ("
                + whatB + "), " + sa.size() + " lines: " + (d.isEmpty() ? "identical" : "diff:\n" + d));
        expect(d.isEmpty(), "replicas differ (- " + whatA + ", + " + whatB + ")");
    }

    final List<String> replicaSnapshot(Path file, int shard) throws Exception {
        String version = replicaQuery(file, "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0).get(0);
        List<String> out = new ArrayList<>();
        for (List<String> r : replicaQuery(file, "SELECT type, name, tbl_name, sql FROM sqlite_master"
                + " WHERE tbl_name NOT LIKE '\\_zero.%' ESCAPE '\\' AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                + " ORDER BY type DESC, name")) {
            out.add("schema " + r);
        }
        List<String> tables = new ArrayList<>();
        for (List<String> r : replicaQuery(file, "SELECT name FROM sqlite_master WHERE type = 'table'"
                + " AND name NOT LIKE '\\_zero.%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")) {
            tables.add(r.get(0));
        }
        for (String t : tables) {
            List<String> cols = new ArrayList<>();
            for (List<String> c : replicaQuery(file, "SELECT cid, name, type, \"notnull\", dflt_value, pk, hidden"
                    + " FROM pragma_table_xinfo('" + t.replace("'", "''") + "')")) {
                out.add("column " + t + " " + c);
                cols.add("quote(\"" + c.get(1) + "\")");
            }
            for (List<String> row : replicaQuery(file, "SELECT " + String.join(" || '|' || ", cols) + " FROM \""
                    + t + "\" ORDER BY 1")) {
                out.add("row " + t + " " + row.get(0));
            }
        }
        for (List<String> r : replicaQuery(file, "SELECT * FROM \"_zero.column_metadata\" ORDER BY table_name,"
                + " column_name")) {
            out.add("column_metadata " + r);
        }
        for (List<String> r : replicaQuery(file, "SELECT \"schema\", \"table\", upstreamMetadata FROM"
                + " \"_zero.tableMetadata\" ORDER BY 1, 2")) {
            out.add("tableMetadata " + r);
        }
        String shardSchema = "zero_" + shard + ".";
        return out.stream().map(l -> l.replace(version, "<replicaVersion>").replace(shardSchema, "zero_N.")).sorted()
                .toList();
    }

    /** Waits until the replica file has applied the commit at {@code watermark}. */
    final void awaitReplicaAt(Path file, String watermark) throws Exception {
        awaitTrue(() -> query(() -> Files.exists(file) && !Watermarks.isAfter(watermark, replicaStateVersion(file))),
                file.getFileName() + " to reach " + watermark);
    }

    /** Waits until the runtime's change streamer streams and its replicator replicates. */
    static void awaitStreaming(ZrmRuntime zrm) throws Exception {
        awaitTrue(() -> query(() -> zrm.section("changestreamer").path("state").asText().equals("streaming")
                && zrm.section("replicator").path("phase").asText().equals("REPLICATING")),
                "ZRM runtime " + zrm.label + " to stream and replicate (log " + zrm.logFile + ")");
    }

    // ------------------------------------------------------------------ ZRM runtime process

    /**
     * A free port {@code p} on 127.0.0.1 whose next two ports are free too: a runtime's
     * {@code ZERO_PORT}, its change streamer ({@code p + 1}) and litestream port ({@code p + 2}).
     */
    static int freePortTriple() throws IOException {
        // Below Linux's ephemeral range (32768-60999): a port the kernel hands out for ServerSocket(0)
        // can be taken by any outgoing connection (zero-cache's, Postgres clients') before the
        // runtime binds it, which made a runtime fail to start now and then.
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 200; attempt++) {
            int p = random.nextInt(20_000, 32_000);
            if (bindable(p) && bindable(p + 1) && bindable(p + 2)) {
                return p;
            }
        }
        throw new CheckFailed("no three consecutive free ports on 127.0.0.1");
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;   // taken: the caller tries another port
        }
    }

    /**
     * The real ZRM runtime, started the way users start it: {@code java -jar
     * runtime/launcher/target/zrm-launcher.jar run} with {@code ZERO_*} variables, its own
     * configuration, state and deploy folders under {@code <work>/zrm-<label>/}, output in
     * {@code zrm-runtime-<label>.log}. The configuration folder is seeded from {@code runtime/conf}
     * with per-PID overrides (the launcher leaves a non-empty folder alone).
     */
    final class ZrmRuntime {
        final String label;
        final Path dir;
        final Path logFile;
        final int port;
        private final Map<String, String> env;
        private Process process;

        /**
         * @param env {@code ZERO_*} variables ({@code ZERO_UPSTREAM_DB} at least: without it the
         *     launcher starts an embedded PostgreSQL)
         * @param cfg per PID: {@code null} removes the shipped {@code <pid>.cfg} (its component stays
         *     unconfigured), otherwise properties that replace the shipped lines or are appended
         */
        ZrmRuntime(String label, Map<String, String> env, Map<String, Map<String, String>> cfg) throws IOException {
            this.label = label;
            this.dir = work.resolve("zrm-" + label);
            this.logFile = work.resolve("zrm-runtime-" + label + ".log");
            this.port = freePortTriple();
            this.env = env;
            Path conf = dir.resolve("conf");
            Files.createDirectories(conf);
            Files.createDirectories(dir.resolve("state"));
            Files.createDirectories(dir.resolve("deploy"));
            try (var shipped = Files.newDirectoryStream(zrmHome().resolve("runtime/conf"), "*.cfg")) {
                for (Path f : shipped) {
                    Files.copy(f, conf.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            for (Map.Entry<String, Map<String, String>> e : cfg.entrySet()) {
                Path file = conf.resolve(e.getKey() + ".cfg");
                if (e.getValue() == null) {
                    Files.delete(file);
                } else {
                    Files.writeString(file, withProperties(Files.readString(file), e.getValue()));
                }
            }
        }

        /** {@code text} with each {@code key = value} line replaced, or appended when absent. */
        private static String withProperties(String text, Map<String, String> props) {
            StringBuilder out = new StringBuilder();
            List<String> seen = new ArrayList<>();
            for (String line : text.split("\n")) {
                String key = line.contains("=") && !line.strip().startsWith("#") ? line.substring(0, line.indexOf('='))
                        .strip() : null;
                if (key != null && props.containsKey(key)) {
                    out.append(key).append(" = ").append(props.get(key)).append('\n');
                    seen.add(key);
                } else {
                    out.append(line).append('\n');
                }
            }
            props.forEach((k, v) -> {
                if (!seen.contains(k)) {
                    out.append(k).append(" = ").append(v).append('\n');
                }
            });
            return out.toString();
        }

        Path stateDir() {
            return dir.resolve("state");
        }

        /** Starts the launcher and waits until the runtime answers {@code GET /status}. */
        void start() throws Exception {
            Path launcher = zrmHome().resolve("runtime/launcher/target/zrm-launcher.jar");
            expect(Files.isRegularFile(launcher), launcher + " is missing; build the project (mvn -B -ntp -o install"
                    + " -DskipTests)");
            ProcessBuilder pb = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx64m",
                    "-jar", launcher.toString(), "run").directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(logFile.toFile());
            Map<String, String> e = pb.environment();
            e.keySet().removeIf(k -> k.startsWith("ZERO_") || k.startsWith("ZRM_"));
            e.put("ZRM_HOME", zrmHome().toString());
            e.put("ZRM_CONFIG_DIR", dir.resolve("conf").toString());
            e.put("ZRM_STATE_DIR", stateDir().toString());
            e.put("ZRM_DEPLOY_DIR", dir.resolve("deploy").toString());
            // Two shared cores: a small heap keeps the runtime modest; the checks move little data.
            e.put("ZRM_JAVA_OPTS", "-Xmx512m");
            e.put("ZERO_PORT", String.valueOf(port));
            // Test traffic stays on the loopback interface.
            e.put("ZRM_BIND_ADDRESS", "127.0.0.1");
            e.put("ZERO_APP_ID", APP);
            e.put("ZERO_SHARD_NUM", String.valueOf(SHARD_NUM));
            // Otherwise the change streamer waits 15 s for a load balancer before taking over.
            e.put("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "0");
            e.putAll(env);
            process = pb.start();
            Runtime.getRuntime().addShutdownHook(new Thread(this::kill));
            awaitTrue(() -> {
                if (!process.isAlive()) {
                    throw new CheckFailed("ZRM runtime " + label + " exited with " + process.exitValue() + "; see "
                            + logFile);
                }
                return query(this::status) != null;
            }, "ZRM runtime " + label + " to answer GET /status on 127.0.0.1:" + (port + 1) + " (log " + logFile + ")");
        }

        /** {@code GET /status} on the change-streamer port as JSON, or null while it does not answer yet. */
        JsonNode status() throws IOException, InterruptedException {
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + (port + 1) + "/status"))
                    .timeout(Duration.ofSeconds(5)).build();
            try {
                HttpResponse<String> r = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
                return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
            } catch (ConnectException notYet) {
                return null;   // Felix has not started Jetty yet
            }
        }

        /** One {@code sections} entry of {@code /status} ({@code changestreamer}, {@code replicator}, ...). */
        JsonNode section(String name) throws IOException, InterruptedException {
            JsonNode s = status();
            return s == null ? JSON.missingNode() : s.path("sections").path(name);
        }

        String log() {
            try {
                return Files.exists(logFile) ? Files.readString(logFile) : "";
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The runtime's log lines at {@code level} (logback's {@code HH:mm:ss.SSS LEVEL [thread] ...}). */
        List<String> linesAt(String level) {
            List<String> out = new ArrayList<>();
            for (String line : log().split("\n")) {
                if (line.matches("^\\d\\d:\\d\\d:\\d\\d\\.\\d+ " + level + " .*")) {
                    out.add(line.length() > 400 ? line.substring(0, 400) + "..." : line);
                }
            }
            return out;
        }

        /** SIGTERM to the launcher, which stops the runtime within its grace period; then a forced kill. */
        void stop() throws InterruptedException {
            if (process == null || !process.isAlive()) {
                return;
            }
            process.destroy();
            if (!process.waitFor(90, TimeUnit.SECONDS)) {
                kill();
                throw new CheckFailed("ZRM runtime " + label + " did not stop within 90 s after SIGTERM");
            }
        }

        private void kill() {
            if (process != null) {
                // The launcher's child can outlive a forcibly killed launcher; never leave it running.
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** The project folder ({@code zrm.home}, set by {@code lib.sh}). */
    static Path zrmHome() {
        return Path.of(required("zrm.home"));
    }

    // ------------------------------------------------------------------ change-streamer subscriber

    /** A protocol-v6 subscriber of zero-cache's change-streamer over java.net.http's WebSocket that acks every frame. */
    static final class Subscriber implements WebSocket.Listener, AutoCloseable {
        private final BlockingQueue<String> frames = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();
        private final ProtocolCodec codec = new ProtocolCodec();
        private WebSocket ws;
        private volatile String closed;
        private int received;
        /**
         * The acks sent so far: java.net.http allows one outstanding send, a second one fails its
         * future, and zero-cache ends the stream on the next ack when one is missing.
         */
        private CompletableFuture<WebSocket> sends;

        private void ack(long id) {
            String text = "{\"ack\":" + id + "}";
            sends = sends == null ? ws.sendText(text, true) : sends.thenCompose(w -> w.sendText(text, true));
        }

        int received() {
            return received;
        }

        static Subscriber open(int port, String replicaVersion, String watermark) throws Exception {
            Subscriber s = new Subscriber();
            String q = "id=zrm-compat-subscriber&replicaVersion=" + enc(replicaVersion) + "&watermark=" + enc(watermark)
                    + "&initial=true&mode=serving";
            s.ws = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + "/replication/v6/changes?" + q), s)
                    .get(30, TimeUnit.SECONDS);
            return s;
        }

        private static String enc(String s) {
            return URLEncoder.encode(s, StandardCharsets.UTF_8);
        }

        /** Messages of the transaction committing at {@code watermark}, begin to commit, as received. */
        List<String> untilCommit(String watermark) throws Exception {
            List<String> txn = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                String frame = frames.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (frame == null) {
                    throw new CheckFailed("no commit at " + watermark + " from zero-cache's change-streamer"
                            + (closed == null ? "" : " (closed: " + closed + ")") + "; received " + txn);
                }
                Frame f = codec.decodeFrame(frame);
                received++;
                ack(f.id());
                String msg = f.msg();
                if (msg.startsWith("[\"begin\"")) {
                    txn.clear();
                }
                if (msg.startsWith("[\"begin\"") || msg.startsWith("[\"data\"") || msg.startsWith("[\"commit\"")) {
                    txn.add(msg);
                }
                if (msg.startsWith("[\"commit\"") && msg.endsWith("{\"watermark\":\"" + watermark + "\"}]")) {
                    return txn;
                }
            }
        }

        /**
         * Every begin, data and commit message received up to and including the commit at
         * {@code watermark}, as received (a catch-up from the change log followed by live ones).
         */
        List<String> allUntilCommit(String watermark) throws Exception {
            List<String> out = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                String frame = frames.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (frame == null) {
                    throw new CheckFailed("no commit at " + watermark + " from the change-streamer"
                            + (closed == null ? "" : " (closed: " + closed + ")") + "; received " + out.size()
                            + " messages, the last " + out.subList(Math.max(0, out.size() - 3), out.size()));
                }
                Frame f = codec.decodeFrame(frame);
                received++;
                ack(f.id());
                String msg = f.msg();
                if (msg.startsWith("[\"begin\"") || msg.startsWith("[\"data\"") || msg.startsWith("[\"commit\"")) {
                    out.add(msg);
                }
                if (msg.startsWith("[\"commit\"") && msg.endsWith("{\"watermark\":\"" + watermark + "\"}]")) {
                    return out;
                }
            }
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                frames.add(partial.toString());
                partial.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closed = statusCode + " " + reason;
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closed = "error " + error;
        }

        @Override
        public void close() {
            if (ws != null) {
                ws.abort();
            }
        }
    }
}

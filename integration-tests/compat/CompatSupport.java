import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Frame;

/**
 * What the zero-cache compatibility checks share: their inputs, the throwaway cluster, the
 * {@code COMPAT} step lines, waiting and asserting, Postgres and {@code pg_dump} helpers, a
 * zero-cache process and a change-streamer subscriber.
 *
 * <p>A check extends this class, implements {@link #checks()} and calls {@link #runAndExit()} from
 * its {@code main}. The scripts compile this file together with the check ({@code lib.sh}); it
 * may only use what both class paths hold (the API, {@code org.zrm.pgcluster}, pgjdbc, jackson).
 *
 * <p>Inputs (system properties): {@code zero.dir} (folder holding {@code node_modules/@rocicorp/zero}),
 * {@code node.bin} (folder holding Node 22's {@code node}), {@code work.dir} (scratch folder for
 * logs, dumps and replica files), {@code zero.port} (zero-cache's {@code ZERO_PORT}; its
 * change-streamer listens on the next port).
 */
abstract class CompatSupport {

    static final String APP = "zero";
    static final int SHARD_NUM = 0;
    static final Duration WAIT = Duration.ofSeconds(90);

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
        long deadline = System.nanoTime() + WAIT.toNanos();
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
                throw new CheckFailed("timed out after " + WAIT.toSeconds() + " s waiting for " + what
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

        void start() throws Exception {
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
                return log().contains("started replication stream@") && log().contains("\"message\":\"starting storer\"");
            }, "zero-cache " + label + " to start streaming (log " + logFile + ")");
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

        private void kill() {
            if (process != null && process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
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
                ws.sendText("{\"ack\":" + f.id() + "}", true);
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

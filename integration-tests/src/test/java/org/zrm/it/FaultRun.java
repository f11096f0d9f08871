package org.zrm.it;

import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TcpProxy;

/**
 * One run of the fault suite: a database of its own on the suite's cluster, the real runtime
 * (launcher and exported zrm.jar) in a child process on it, the write load ({@link FaultLoad})
 * and two reconnecting subscribers ({@link FaultSubscriber}): one from the start of the history,
 * one that joins mid-load. A test injects its fault between {@link #start} and {@link #finish};
 * {@code finish} stops the load, lets everything catch up (bounded), checks the invariant
 * ({@link FaultInvariant}) and adds the run's row to the suite's table.
 */
final class FaultRun implements AutoCloseable {

    /** Bound of every catch-up wait after the fault. */
    static final Duration CATCH_UP = Duration.ofSeconds(90);

    private final PgDatabase db;
    private final PgDatabase changeDb;
    private final Path dir;
    private final Map<String, String> env;
    private final int zeroPort;
    private final List<FaultSubscriber> subscribers = new ArrayList<>();
    private LauncherProcess runtime;
    private FaultLoad load;
    private String replicaVersion;
    private long faultEndNanos;
    private long firstSeqAfterFault;

    private FaultRun(PgDatabase db, PgDatabase changeDb, Path dir, Map<String, String> env) throws IOException {
        this.db = db;
        this.changeDb = changeDb;
        this.dir = dir;
        this.env = env;
        this.zeroPort = LauncherProcess.freePort();
    }

    /**
     * Creates the database and its tables, starts the runtime, waits until it streams, then
     * starts the first subscriber and the load, and the second subscriber once the load runs.
     *
     * @param upstreamUri the URI the runtime uses for upstream (the database's own, or a proxy's)
     * @param changeUri the URI the runtime uses for the change DB, which is {@code db}
     */
    static FaultRun start(PgDatabase db, String upstreamUri, String changeUri, Map<String, String> extraEnv) throws Exception {
        return start(db, upstreamUri, db, changeUri, extraEnv);
    }

    /**
     * As {@link #start(PgDatabase, String, String, Map)}, with the change log in a database of its own.
     *
     * @param changeDb the change database the invariant reads the change log from
     * @param changeUri the URI the runtime uses for it (its own, or a proxy's)
     */
    static FaultRun start(PgDatabase db, String upstreamUri, PgDatabase changeDb, String changeUri,
            Map<String, String> extraEnv) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            for (String sql : FaultLoad.SCHEMA.split(";")) {
                s.execute(sql);
            }
        }
        Map<String, String> env = new HashMap<>(Map.of("ZERO_UPSTREAM_DB", upstreamUri, "ZERO_CHANGE_DB", changeUri,
                "ZERO_APP_PUBLICATIONS", "fault_pub", "ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "0"));
        env.putAll(extraEnv);
        FaultRun run = new FaultRun(db, changeDb, Files.createTempDirectory("zrm-it-fault-"), Map.copyOf(env));
        try {
            run.startRuntime();
            run.replicaVersion = run.runtime.awaitStatus("streaming", null, FaultRun::streaming)
                    .path("sections").path("changestreamer").path("replicaVersion").asText();
            run.subscribers.add(new FaultSubscriber("fault-from-start", run.runtime.port(), run.replicaVersion,
                    run.replicaVersion, 0));
            run.load = new FaultLoad(db::connect);
            run.load.awaitProgress(50);
            String joinAt = FaultInvariant.lastCommitWatermark(changeDb::connect, run.replicaVersion);
            run.subscribers.add(new FaultSubscriber("fault-mid-load", run.runtime.port(), run.replicaVersion, joinAt,
                    FaultInvariant.seqAt(changeDb::connect, joinAt)));
            run.load.awaitProgress(100);
        } catch (Throwable t) {
            run.close();
            throw t;
        }
        return run;
    }

    private static boolean streaming(com.fasterxml.jackson.databind.JsonNode s) {
        return "streaming".equals(s.path("sections").path("changestreamer").path("state").asText())
                && s.path("sections").path("changestreamer").hasNonNull("replicaVersion")
                && "REPLICATING".equals(s.path("sections").path("replicator").path("phase").asText());
    }

    private void startRuntime() throws IOException {
        runtime = LauncherProcess.start(dir, zeroPort, env);
    }

    LauncherProcess runtime() {
        return runtime;
    }

    FaultLoad load() {
        return load;
    }

    PgDatabase db() {
        return db;
    }

    /** The replica file: {@code ZERO_REPLICA_FILE} when the test set it (absolute), else the state folder's. */
    Path replica() {
        Path state = dir.resolve("state");
        return state.resolve(env.getOrDefault("ZERO_REPLICA_FILE", "zero.db"));
    }

    String replicaVersion() {
        return replicaVersion;
    }

    /** @return the reconnects of the run's subscribers so far, together */
    int subscriberReconnects() {
        return subscribers.stream().mapToInt(FaultSubscriber::reconnects).sum();
    }

    /** kill -9 of the runtime, then a start on the same folders. */
    void killAndRestartRuntime() throws Exception {
        runtime.killHard();
        runtime.close();
        startRuntime();
    }

    /**
     * SIGSTOP of the runtime for {@code pause}, then SIGCONT: the fault is the passing of time,
     * past which the walsender must time the runtime out.
     */
    void pauseRuntime(Duration pause) throws Exception {
        runtime.signal("STOP");
        try {
            TimeUnit.MILLISECONDS.sleep(pause.toMillis());
        } finally {
            runtime.signal("CONT");
        }
    }

    /** {@code proxy} forwards nothing either way for {@code silence}, then heals. */
    static void silence(TcpProxy proxy, Duration silence) throws InterruptedException {
        proxy.blackhole();
        try {
            TimeUnit.MILLISECONDS.sleep(silence.toMillis());
        } finally {
            proxy.heal();
        }
    }

    /** Marks the end of the fault: the recovery time runs from here. */
    void faultEnded() {
        faultEndNanos = System.nanoTime();
        firstSeqAfterFault = load.attempted() + 1;
    }

    /**
     * Waits until a transaction begun after the fault ended is in the change log.
     *
     * @return the time from the fault's end until then
     */
    Duration awaitRecovery() throws Exception {
        long deadline = faultEndNanos + CATCH_UP.toNanos();
        while (FaultInvariant.maxLoggedSeq(changeDb::connect) < firstSeqAfterFault) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no recovery within " + CATCH_UP + ": change log at transaction "
                        + FaultInvariant.maxLoggedSeq(changeDb::connect) + ", writer at " + load.attempted() + logTail());
            }
            TimeUnit.MILLISECONDS.sleep(50); // another process writes the change log; nothing to wait on
        }
        return Duration.ofNanos(System.nanoTime() - faultEndNanos);
    }

    /**
     * Stops the load, waits until the change log, the subscribers and the replica caught up, checks
     * the whole history, appends the table row and fails the test on any problem.
     */
    void finish(String fault, Duration recovery) throws Exception {
        load.close();
        List<String> waits = FaultInvariant.awaitCaughtUp(db::connect, changeDb::connect, subscribers, replicaVersion,
                CATCH_UP);
        FaultInvariant.Outcome o = FaultInvariant.check(db::connect, changeDb::connect, FaultInvariant.Db.sqlite(replica()), load.acked(),
                subscribers);
        List<String> problems = new ArrayList<>(waits);
        problems.addAll(o.problems());
        StringBuilder reconnects = new StringBuilder();
        for (FaultSubscriber s : subscribers) {
            reconnects.append(reconnects.length() == 0 ? "" : ", ").append(s.name()).append(' ').append(s.reconnects());
        }
        String row = "| " + fault + " | " + o.committed() + " | " + o.lost() + " | " + o.duplicated() + " | "
                + (recovery == null ? "n/a" : String.format("%.1f s", recovery.toMillis() / 1000.0)) + " | "
                + reconnects + " | " + (problems.isEmpty() ? "ok" : "FAILED") + " |";
        appendRow(row);
        System.out.println("FaultSuite: " + row);
        assertTrue(fault + ": " + String.join("\n", problems) + logTail(), problems.isEmpty());
    }

    static synchronized void appendRow(String row) throws IOException {
        Path table = Path.of(System.getProperty("zrm.it.target", "target")).resolve("fault-suite.md");
        Files.createDirectories(table.getParent());
        if (!Files.exists(table)) {
            Files.writeString(table, "| fault | transactions | lost | duplicated | recovery | subscriber reconnects | result |\n"
                    + "|---|---|---|---|---|---|---|\n", StandardCharsets.UTF_8);
        }
        Files.writeString(table, row + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    }

    /** Removes the table of an earlier run of the suite. */
    static void resetTable() throws IOException {
        Files.deleteIfExists(Path.of(System.getProperty("zrm.it.target", "target")).resolve("fault-suite.md"));
    }

    String logTail() {
        try {
            String log = runtime.log();
            return "\nruntime log (tail):\n" + log.substring(Math.max(0, log.length() - 6000));
        } catch (IOException e) {
            return "\n(runtime log unreadable: " + e + ")";
        }
    }

    /**
     * {@code pg_ctl restart -m mode} of the cluster, as its OS user; returns once the server
     * accepts connections again (pg_ctl -w, bounded by -t).
     */
    static void restartPostgres(PgCluster cluster, String mode) throws Exception {
        List<String> cmd = new ArrayList<>();
        cluster.osUser().ifPresent(u -> cmd.addAll(List.of("runuser", "-u", u, "--")));
        cmd.addAll(List.of(cluster.binDir().resolve("pg_ctl").toString(), "restart", "-D", cluster.dataDir().toString(),
                "-m", mode, "-w", "-t", "60", "-l", cluster.logFile().toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        // pg_ctl's output is read after exit: it is a few lines, far below the pipe's buffer.
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("pg_ctl restart -m " + mode + " did not finish within 90 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError(cmd + " failed: " + out);
        }
    }

    @Override
    public void close() throws Exception {
        List<Throwable> errors = new ArrayList<>();
        for (FaultSubscriber s : subscribers) {
            try {
                s.close();
            } catch (Throwable t) {
                errors.add(t);
            }
        }
        if (load != null) {
            try {
                load.close();
            } catch (Throwable t) {
                // already reported by finish() when the run got that far
                errors.add(t);
            }
        }
        if (runtime != null) {
            runtime.close();
        }
        db.close();
        if (changeDb != db) {
            changeDb.close();
        }
        // The test's own assertion (in finish) already failed for these; they are shown, not lost.
        errors.forEach(e -> System.out.println("FaultSuite: while closing: " + e));
    }
}

package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TcpProxy;
import org.zrm.testing.TestPostgres;

/**
 * The fault suite (issue 16): each test runs the real runtime under a continuous write load
 * ({@link FaultRun}), injects one fault, and checks the whole history ({@link FaultInvariant}):
 * every committed transaction in the change log exactly once and in commit order, the replica
 * equal to upstream, every subscriber given each transaction exactly once across its reconnects.
 * Each test adds a row to {@code target/fault-suite.md}.
 *
 * <p>The suite has a cluster of its own, because it restarts it and because it needs a short
 * {@code wal_sender_timeout}.
 */
public class FaultSuiteIT {

    /** Short, so that a fault that outlasts it stays within the suite's time budget. */
    static final Duration WAL_SENDER_TIMEOUT = Duration.ofSeconds(4);
    /** The storer's statement timeout in the change-DB fault; the outage lasts three times as long. */
    static final Duration CHANGE_STATEMENT_TIMEOUT = Duration.ofSeconds(2);

    private static PgCluster cluster;

    @BeforeClass
    public static void startCluster() throws Exception {
        FaultRun.resetTable();
        cluster = TestPostgres.clusterBuilder().walSenderTimeout(WAL_SENDER_TIMEOUT).start();
    }

    @AfterClass
    public static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static FaultRun start(String name) throws Exception {
        PgDatabase db = PgDatabase.create(cluster, name);
        return FaultRun.start(db, db.uri(), db.uri(), Map.of());
    }

    @Test
    public void killNineOfTheRuntimeThenARestart() throws Exception {
        try (FaultRun run = start("zrm_fault_kill")) {
            run.load().awaitProgress(150);
            run.killAndRestartRuntime();
            run.faultEnded();
            Duration recovery = run.awaitRecovery();
            run.load().awaitProgress(150);
            run.finish("kill -9 of the runtime mid-load, then a restart", recovery);
        }
    }

    @Test
    public void fastRestartOfUpstream() throws Exception {
        upstreamRestart("fast");
    }

    @Test
    public void immediateRestartOfUpstream() throws Exception {
        upstreamRestart("immediate");
    }

    private void upstreamRestart(String mode) throws Exception {
        try (FaultRun run = start("zrm_fault_pg_" + mode)) {
            run.load().awaitProgress(150);
            FaultRun.restartPostgres(cluster, mode);
            run.faultEnded();
            Duration recovery = run.awaitRecovery();
            run.load().awaitProgress(150);
            run.finish("`pg_ctl restart -m " + mode + "` of upstream (also the change DB)", recovery);
        }
    }

    @Test
    public void runtimeStoppedPastTheWalSenderTimeout() throws Exception {
        try (FaultRun run = start("zrm_fault_sigstop")) {
            run.load().awaitProgress(150);
            run.pauseRuntime(WAL_SENDER_TIMEOUT.multipliedBy(2));
            run.faultEnded();
            Duration recovery = run.awaitRecovery();
            run.load().awaitProgress(150);
            run.finish("runtime SIGSTOPped for 2 x wal_sender_timeout (" + WAL_SENDER_TIMEOUT.toSeconds()
                    + " s), then SIGCONT", recovery);
        }
    }

    @Test
    public void changeDbUnreachablePastTheStatementTimeout() throws Exception {
        // The change log in a database of its own, reached through a proxy; upstream is direct.
        PgDatabase upstream = PgDatabase.create(cluster, "zrm_fault_cdb_up");
        PgDatabase change = PgDatabase.create(cluster, "zrm_fault_cdb_log");
        long outageMs = CHANGE_STATEMENT_TIMEOUT.multipliedBy(3).toMillis();
        try (TcpProxy proxy = new TcpProxy(cluster.port());
                FaultRun run = FaultRun.start(upstream, upstream.uri(), change, change.uriVia(proxy.port()),
                        Map.of("ZERO_CHANGE_STATEMENT_TIMEOUT_MS", Long.toString(CHANGE_STATEMENT_TIMEOUT.toMillis())))) {
            run.load().awaitProgress(150);
            // First silence (statements hang; even the driver's cancel request is swallowed), then
            // a host that is gone (connections reset and refused): upstream commits throughout.
            proxy.blackhole();
            long stored;
            try {
                TimeUnit.MILLISECONDS.sleep(500);
                stored = FaultInvariant.maxLoggedSeq(change::connect);
                TimeUnit.MILLISECONDS.sleep(outageMs);
                proxy.refuse();
                TimeUnit.MILLISECONDS.sleep(outageMs);
                assertEquals("the change log grew through a proxy that forwards nothing", stored,
                        FaultInvariant.maxLoggedSeq(change::connect));
            } finally {
                proxy.heal();
            }
            run.faultEnded();
            Duration recovery = run.awaitRecovery();
            run.load().awaitProgress(150);
            run.finish("change DB unreachable, " + outageMs / 1000 + " s silent then " + outageMs / 1000
                    + " s refusing (statement timeout " + CHANGE_STATEMENT_TIMEOUT.toSeconds() + " s), while upstream commits",
                    recovery);
        }
    }

    @Test
    public void upstreamTrafficDroppedPastTheWalSenderTimeout() throws Exception {
        // Upstream (the replication stream and the source's other connections) through a proxy
        // that stops forwarding both ways; the load writes upstream directly, so WAL keeps growing.
        PgDatabase db = PgDatabase.create(cluster, "zrm_fault_blackhole");
        try (TcpProxy proxy = new TcpProxy(cluster.port());
                FaultRun run = FaultRun.start(db, db.uriVia(proxy.port()), db.uri(), Map.of())) {
            run.load().awaitProgress(150);
            FaultRun.silence(proxy, WAL_SENDER_TIMEOUT.multipliedBy(2));
            run.faultEnded();
            Duration recovery = run.awaitRecovery();
            run.load().awaitProgress(150);
            run.finish("upstream traffic silently dropped both ways for 2 x wal_sender_timeout ("
                    + WAL_SENDER_TIMEOUT.toSeconds() + " s), then healed", recovery);
        }
    }

    @Test
    public void aSubscriberThatStopsReadingIsClosedAtItsByteBound() throws Exception {
        PgDatabase db = PgDatabase.create(cluster, "zrm_fault_stalled");
        long bound = 131_072; // the smallest the streamer accepts, so the bound is reached in seconds
        try (FaultRun run = FaultRun.start(db, db.uri(), db.uri(),
                Map.of("ZRM_SUBSCRIBER_MAX_BUFFERED_BYTES", Long.toString(bound)))) {
            run.load().awaitProgress(150);
            String id = "fault-stalled";
            String from = FaultInvariant.lastCommitWatermark(db::connect, run.replicaVersion());
            long closedAfterMs;
            try (StalledSubscriber stalled = StalledSubscriber.connect(ChangesClient.changesUri(
                    Integer.toString(run.runtime().port()), 6, ChangesClient.query(id, run.replicaVersion(), from)))) {
                run.runtime().awaitStatus("the stalled subscriber registered", null, s -> subscriber(s, id) != null);
                long start = System.nanoTime();
                run.runtime().awaitStatus("the stalled subscriber disconnected at its byte bound", null,
                        s -> subscriber(s, id) == null);
                closedAfterMs = (System.nanoTime() - start) / 1_000_000;
                // The others keep their pace meanwhile and after: the load commits and they stay connected.
                run.load().awaitProgress(150);
            }
            run.faultEnded();
            Duration recovery = run.awaitRecovery();
            run.load().awaitProgress(150);
            assertEquals("the other subscribers had to reconnect", 0, run.subscriberReconnects());
            String log = run.runtime().log();
            assertTrue(run.logTail(), log.lines().anyMatch(l -> l.contains("subscriber " + id + " disconnected")
                    && l.contains("more than changeStreamer.subscriberMaxBufferedBytes=" + bound)));
            run.finish("a subscriber stops reading: disconnected at its " + bound / 1024 + " KiB bound after "
                    + String.format("%.1f s", closedAfterMs / 1000.0) + ", the others stay connected", recovery);
        }
    }

    @Test
    public void theReplicaFilesystemFillsUpThenHasSpaceAgain() throws Exception {
        Path mount = Files.createTempDirectory("zrm-it-fault-fs-");
        boolean mounted = false;
        PgDatabase db = PgDatabase.create(cluster, "zrm_fault_fullfs");
        try {
            mounted = mountTmpfs(mount, "24m");
            Path replica = mount.resolve("zero.db");
            try (FaultRun run = FaultRun.start(db, db.uri(), db.uri(), Map.of("ZERO_REPLICA_FILE", replica.toString()))) {
                run.load().awaitProgress(150);
                String full = "the replica's filesystem is full (" + mount;
                Path filler = mount.resolve("filler");
                fill(filler);
                try {
                    // Upstream and the change log go on; the replica cannot take a page more.
                    run.load().awaitProgress(300);
                    awaitLog(run, full);
                    run.load().awaitProgress(300);
                    // Nothing acknowledged past what the replica holds: the replicator's ack follows
                    // its SQLite COMMIT, and the change streamer may purge only up to that ack.
                    String applied = replicaStateVersion(replica);
                    com.fasterxml.jackson.databind.JsonNode status = run.runtime().awaitStatus("status", null, st -> true);
                    for (com.fasterxml.jackson.databind.JsonNode sub : status.path("sections").path("changestreamer")
                            .path("subscribers")) {
                        if (sub.path("id").asText().contains("backup-replicator") && sub.hasNonNull("acked")) {
                            assertTrue(sub + " acked past the replica's stateVersion " + applied,
                                    sub.path("acked").asText().compareTo(applied) <= 0);
                        }
                    }
                    assertEquals("one ERROR line for the full filesystem" + run.logTail(), 1,
                            errorLines(run.runtime().log(), full).size());
                } finally {
                    Files.delete(filler);
                }
                run.faultEnded();
                Duration recovery = run.awaitRecovery();
                run.load().awaitProgress(150);
                awaitLine(run, "space is back on the replica's filesystem");
                run.finish("the replica's filesystem full (24 MiB tmpfs) under load, then space again", recovery);
            }
        } finally {
            if (mounted) {
                umount(mount);
            }
            Files.deleteIfExists(mount);
        }
    }

    /** tmpfs needs root (CAP_SYS_ADMIN); .ci/run runs as root. */
    private static boolean mountTmpfs(Path dir, String size) throws Exception {
        org.junit.Assume.assumeTrue("the full-filesystem fault mounts a tmpfs and needs root; this JVM runs as "
                + System.getProperty("user.name"), "root".equals(System.getProperty("user.name")));
        run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0777", "tmpfs", dir.toString());
        return true;
    }

    private static void umount(Path dir) throws Exception {
        run("umount", "-l", dir.toString());
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not finish within 30 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", cmd) + " failed: " + out);
        }
    }

    /** Writes zeros until the filesystem refuses more. */
    private static void fill(Path filler) throws IOException {
        byte[] block = new byte[64 * 1024];
        try (java.io.OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(block);
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) {
                throw e;
            }
        }
    }

    private static void awaitLog(FaultRun run, String text) throws Exception {
        long deadline = System.nanoTime() + FaultRun.CATCH_UP.toNanos();
        // The runtime is another process; its log is the signal.
        while (errorLines(run.runtime().log(), text).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no ERROR line with '" + text + "' within " + FaultRun.CATCH_UP + run.logTail());
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    private static void awaitLine(FaultRun run, String text) throws Exception {
        long deadline = System.nanoTime() + FaultRun.CATCH_UP.toNanos();
        while (!run.runtime().log().contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no line with '" + text + "' within " + FaultRun.CATCH_UP + run.logTail());
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    /** The replica's {@code _zero.replicationState} stateVersion, read without writing (the disk is full). */
    private static String replicaStateVersion(Path replica) throws Exception {
        java.util.Properties readOnly = new java.util.Properties();
        readOnly.setProperty("open_mode", "1"); // SQLITE_OPEN_READONLY
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + replica, readOnly);
                java.sql.Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT stateVersion FROM \"_zero.replicationState\"")) {
            assertTrue("no replicationState row", rs.next());
            return rs.getString(1);
        }
    }

    private static java.util.List<String> errorLines(String log, String text) {
        return log.lines().filter(l -> l.contains(" ERROR ") && l.contains(text)).toList();
    }

    private static com.fasterxml.jackson.databind.JsonNode subscriber(com.fasterxml.jackson.databind.JsonNode status,
            String id) {
        for (com.fasterxml.jackson.databind.JsonNode s : status.path("sections").path("changestreamer").path("subscribers")) {
            if (id.equals(s.path("id").asText())) {
                return s;
            }
        }
        return null;
    }
}

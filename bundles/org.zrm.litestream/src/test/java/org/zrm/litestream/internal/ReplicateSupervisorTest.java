package org.zrm.litestream.internal;

import org.zrm.testing.backup.LitestreamBinary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor with the real litestream v0.3.13 and a {@code file://} destination: it waits for
 * the replicator's preparation, backs up while writes flow, restarts a killed child, and stops it
 * with SIGTERM when the backup URL is removed.
 */
class ReplicateSupervisorTest {

    static final Duration WAIT = Duration.ofSeconds(60);
    static Path litestream;

    @TempDir
    Path dir;
    ReplicateSupervisor supervisor;

    @BeforeAll
    static void binary() throws Exception {
        litestream = LitestreamBinary.locate();
    }

    @AfterEach
    void close() throws InterruptedException {
        if (supervisor != null) {
            supervisor.close();
            assertTrue(supervisor.awaitClosed(Duration.ofSeconds(30)));
            assertEquals(ReplicateSupervisor.State.STOPPED, supervisor.state());
        }
    }

    private Map<String, Object> config(Path replica, Path dest) {
        Map<String, Object> m = new HashMap<>();
        m.put("litestream.backupURL", "file://" + dest);
        m.put("litestream.executable", litestream.toString());
        m.put("replica.file", replica.toString());
        m.put("litestream.port", freePort());
        m.put("litestream.incrementalBackupIntervalMinutes", 0.02); // 1.2 s
        m.put("litestream.logLevel", "info");
        m.put("litestream.restartInitialMs", 200L);
        m.put("litestream.snapshotProbeIntervalMs", 300L);
        return m;
    }

    private static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private ReplicateSupervisor start(Map<String, Object> config) {
        supervisor = new ReplicateSupervisor(System.getenv(), Clock.systemUTC());
        supervisor.apply(LitestreamSettings.of(Configs.of(config)));
        supervisor.start();
        return supervisor;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50); // test-side observation of another process; there is no signal to wait on
        }
    }

    /** Restores the destination into a new file with the real litestream and counts its rows; -1 while nothing restores. */
    private int restoredRows(Path dest, Path replica) throws Exception {
        Path out = Files.createTempDirectory(dir, "restore").resolve("copy.db");
        Process p = new ProcessBuilder(litestream.toString(), "restore", "-o", out.toString(), "file://" + dest)
                .redirectErrorStream(true).redirectOutput(dir.resolve("restore.log").toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return p.exitValue() == 0 ? TestReplica.count(out) : -1;
    }

    @Test
    void waitsForThePreparedReplicaThenBacksUpWhileWritesFlow() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path dest = dir.resolve("dest");
        start(config(replica, dest));
        await("waiting for the replica", () -> supervisor.state() == ReplicateSupervisor.State.WAITING_FOR_REPLICA);
        assertEquals(-1, supervisor.pid());
        assertTrue(supervisor.healthy());
        try (TestReplica r = TestReplica.create(replica, "01")) {
            await("running", () -> supervisor.state() == ReplicateSupervisor.State.RUNNING);
            assertTrue(Files.exists(dir.resolve("zero.db-litestream.yml")), "generated config.yml");
            await("first snapshot", supervisor::firstSnapshot);
            assertTrue(supervisor.ready());
            for (int i = 1; i <= 50; i++) {
                r.write(i, String.format("%02x", i + 1));
            }
            await("50 rows in the backup", () -> {
                try {
                    return restoredRows(dest, replica) == 50;
                } catch (Exception e) {
                    return false;
                }
            });
            Map<String, Object> status = supervisor.status();
            assertEquals("RUNNING", status.get("state"));
            assertEquals(supervisor.pid(), status.get("pid"));
            assertEquals(0L, status.get("restarts"));
            assertNull(status.get("lastExit"));
        }
    }

    @Test
    void aKilledChildIsRestartedAndKeepsBackingUp() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path dest = dir.resolve("dest");
        try (TestReplica r = TestReplica.create(replica, "01")) {
            start(config(replica, dest));
            await("running", () -> supervisor.state() == ReplicateSupervisor.State.RUNNING);
            long first = supervisor.pid();
            ProcessHandle.of(first).orElseThrow().destroyForcibly(); // SIGKILL, as an OOM killer would
            await("restarted", () -> supervisor.restarts() == 1
                    && supervisor.state() == ReplicateSupervisor.State.RUNNING && supervisor.pid() != -1);
            assertNotEquals(first, supervisor.pid());
            @SuppressWarnings("unchecked")
            Map<String, Object> exit = (Map<String, Object>) supervisor.status().get("lastExit");
            assertEquals(137, exit.get("code"));
            assertEquals("signal 9 (SIGKILL)", exit.get("description"));
            for (int i = 1; i <= 20; i++) {
                r.write(i, String.format("%02x", i + 1));
            }
            await("20 rows backed up by the restarted child", () -> {
                try {
                    return restoredRows(dest, replica) == 20;
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }

    @Test
    void removingTheBackupURLStopsTheChildWithSigterm() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path dest = dir.resolve("dest");
        try (TestReplica r = TestReplica.create(replica, "01")) {
            Map<String, Object> c = config(replica, dest);
            start(c);
            await("running", () -> supervisor.state() == ReplicateSupervisor.State.RUNNING);
            ProcessHandle child = ProcessHandle.of(supervisor.pid()).orElseThrow();
            c.put("litestream.backupURL", "");
            supervisor.apply(LitestreamSettings.of(Configs.of(c)));
            await("disabled", () -> supervisor.state() == ReplicateSupervisor.State.DISABLED);
            assertTrue(child.onExit().get(10, TimeUnit.SECONDS) != null && !child.isAlive());
            @SuppressWarnings("unchecked")
            Map<String, Object> exit = (Map<String, Object>) supervisor.status().get("lastExit");
            // litestream traps SIGTERM and exits 0 after its shut-down; no SIGKILL was needed (137).
            // Under load it was once seen to end by SIGPIPE (141) during that shut-down instead;
            // unexplained so far (its output pipes are read until EOF), noted for investigation.
            assertTrue(List.of(0, 141, 143).contains(exit.get("code")), String.valueOf(exit));
            assertEquals(0L, supervisor.restarts(), "a stop is not a death");
            assertTrue(supervisor.ready(), "no backup configured: ready");
        }
    }

    @Test
    void aChildIgnoringSigtermGetsSigkillAfterTheBound() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path stubborn = dir.resolve("stubborn.sh");
        Files.writeString(stubborn, "#!/bin/sh\n[ \"$1\" = replicate ] || exit 0\ntrap '' TERM\nwhile :; do sleep 1; done\n");
        Files.setPosixFilePermissions(stubborn, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        try (TestReplica r = TestReplica.create(replica, "01")) {
            Map<String, Object> c = config(replica, dir.resolve("dest"));
            c.put("litestream.executable", stubborn.toString());
            c.put("litestream.stopTimeoutMs", 500L);
            start(c);
            await("running", () -> supervisor.state() == ReplicateSupervisor.State.RUNNING);
            ProcessHandle child = ProcessHandle.of(supervisor.pid()).orElseThrow();
            supervisor.close();
            assertTrue(supervisor.awaitClosed(Duration.ofSeconds(10)));
            assertTrue(!child.isAlive());
            @SuppressWarnings("unchecked")
            Map<String, Object> exit = (Map<String, Object>) supervisor.status().get("lastExit");
            assertEquals(137, exit.get("code"));
            supervisor = null;
        }
    }

    @Test
    void invalidConfigurationIsUnhealthyAndRunsNothing() throws Exception {
        supervisor = new ReplicateSupervisor(System.getenv(), Clock.systemUTC());
        supervisor.invalid("invalid configuration of org.zrm.litestream: litestream.backupURL ftp://x has an unknown"
                + " scheme 'ftp'");
        supervisor.start();
        await("invalid", () -> supervisor.state() == ReplicateSupervisor.State.INVALID_CONFIG);
        assertTrue(!supervisor.healthy());
        assertTrue(((String) supervisor.status().get("error")).contains("unknown scheme 'ftp'"));
        assertEquals(-1, supervisor.pid());
    }
}

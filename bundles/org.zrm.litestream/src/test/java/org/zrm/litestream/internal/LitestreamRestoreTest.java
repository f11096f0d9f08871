package org.zrm.litestream.internal;

import org.zrm.testing.backup.LitestreamBinary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restore with the real litestream v0.3.13: node A's replica is backed up by the supervisor,
 * deleted, and restored with upstream's command line; the result is checked against the change
 * log's constraints and folded out of WAL mode.
 */
class LitestreamRestoreTest {

    static Path litestream;

    @TempDir
    Path dir;

    @BeforeAll
    static void binary() throws Exception {
        litestream = LitestreamBinary.locate();
    }

    private Map<String, Object> config(Path replica, Path dest) {
        Map<String, Object> m = new HashMap<>();
        m.put("litestream.backupURL", "file://" + dest);
        m.put("litestream.executable", litestream.toString());
        m.put("replica.file", replica.toString());
        m.put("litestream.port", freePort());
        m.put("litestream.incrementalBackupIntervalMinutes", 0.02);
        m.put("litestream.snapshotProbeIntervalMs", 300L);
        m.put("litestream.restoreParallelism", 4);
        return m;
    }

    private static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Node A: a replica at version "01", 30 transactions, backed up; then stopped and deleted. */
    private void backUpAndDelete(Path replica, Path dest) throws Exception {
        ReplicateSupervisor a = new ReplicateSupervisor(System.getenv(), Clock.systemUTC());
        try (TestReplica r = TestReplica.create(replica, "01")) {
            a.apply(LitestreamSettings.of(Configs.of(config(replica, dest))));
            a.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!a.firstSnapshot()) {
                assertTrue(System.nanoTime() < deadline, "no snapshot within 60 s: " + a.status());
                Thread.sleep(50); // observing another process
            }
            for (int i = 1; i <= 30; i++) {
                r.write(i, String.format("%02x", i + 1)); // stateVersion ends at "1f"
            }
            // Let one sync interval (1.2 s) pass after the last write, then stop: SIGTERM syncs once more.
            Thread.sleep(2500);
        } finally {
            a.close();
            assertTrue(a.awaitClosed(Duration.ofSeconds(30)));
        }
        for (String suffix : new String[] {"", "-wal", "-shm"}) {
            Files.deleteIfExists(replica.resolveSibling(replica.getFileName() + suffix));
        }
    }

    private LitestreamRestore restorer(Path replica, Path dest) {
        return new LitestreamRestore(LitestreamSettings.of(Configs.of(config(replica, dest))), System.getenv(), 3,
                Duration.ofMillis(100), new CountDownLatch(1));
    }

    @Test
    void restoresKeepingReplicaVersionAndWatermarkThenFoldsTheWal() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path dest = dir.resolve("dest");
        backUpAndDelete(replica, dest);
        List<LitestreamRestore.Progress> progress = new ArrayList<>();
        LitestreamRestore.Result r = restorer(replica, dest).restore(
                new LitestreamRestore.Constraints("01", "05"), progress::add);
        assertEquals(LitestreamRestore.Outcome.RESTORED, r.outcome(), r.reason());
        assertEquals("01", r.state().orElseThrow().replicaVersion());
        assertEquals("1f", r.state().orElseThrow().stateVersion());
        assertEquals(30, TestReplica.count(replica));
        assertTrue(r.bytes() > 0);
        byte[] header = new byte[20];
        try (InputStream in = Files.newInputStream(replica)) {
            in.readNBytes(header, 0, 20);
        }
        assertEquals(1, header[18], "rollback journal after the fold: the replicator's switch to WAL comes next");
        assertFalse(Files.exists(dir.resolve("zero.db.tmp-wal")), "litestream's leftovers removed");
        // Readiness waits for that switch.
        assertTrue(ReplicaReadiness.check(replica).contains("WAL mode"));
        TestReplica.openWriter(replica).close();
        assertEquals(null, ReplicaReadiness.check(replica));
    }

    @Test
    void aReplicaTheChangeLogCannotServeIsDeleted() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path dest = dir.resolve("dest");
        backUpAndDelete(replica, dest);
        LitestreamRestore.Result older = restorer(replica, dest).restore(
                new LitestreamRestore.Constraints("01", "2a"), p -> { });
        assertEquals(LitestreamRestore.Outcome.UNUSABLE, older.outcome());
        assertTrue(older.reason().contains("older than the change log's oldest entry 2a"), older.reason());
        assertFalse(Files.exists(replica));
        LitestreamRestore.Result otherLineage = restorer(replica, dest).restore(
                new LitestreamRestore.Constraints("02", "00"), p -> { });
        assertEquals(LitestreamRestore.Outcome.UNUSABLE, otherLineage.outcome());
        assertTrue(otherLineage.reason().contains("replicaVersion 01 is not the change log's 02"));
        assertFalse(Files.exists(replica));
    }

    @Test
    void noBackupMeansInitialSync() throws Exception {
        Path replica = dir.resolve("zero.db");
        Path dest = dir.resolve("empty-dest");
        LitestreamRestore.Result known = restorer(replica, dest).restore(
                new LitestreamRestore.Constraints("01", "05"), p -> { });
        assertEquals(LitestreamRestore.Outcome.NO_BACKUP, known.outcome());
        // Without constraints it waits for a backup, as upstream: here 3 attempts, 100 ms apart.
        long t0 = System.nanoTime();
        LitestreamRestore.Result unknown = restorer(replica, dest).restore(null, p -> { });
        assertEquals(LitestreamRestore.Outcome.NO_BACKUP, unknown.outcome());
        assertTrue(unknown.reason().endsWith("after 3 attempts"), unknown.reason());
        assertTrue(System.nanoTime() - t0 >= Duration.ofMillis(200).toNanos());
        assertFalse(Files.exists(replica));
    }

    @Test
    void anExistingReplicaIsNotTouched() throws Exception {
        Path replica = dir.resolve("zero.db");
        TestReplica.create(replica, "01").close();
        LitestreamRestore.Result r = restorer(replica, dir.resolve("dest")).restore(null, p -> { });
        assertEquals(LitestreamRestore.Outcome.EXISTS, r.outcome());
    }
}

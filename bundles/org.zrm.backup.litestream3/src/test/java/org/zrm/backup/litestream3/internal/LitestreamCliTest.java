package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zero's {@code commands.test.ts} ({@code getLastBackupTime}) with a fake {@code #!/bin/sh}
 * litestream branching on {@code $1}, plus the port's cases: parallel listings, death by signal,
 * a missing executable, the environment, abort on stop, and output bounds.
 */
class LitestreamCliTest {

    static final String URL = "s3://fake-bucket/backup";

    @TempDir
    Path dir;

    LitestreamCli cli(String sh, Duration timeout) throws IOException {
        return cli(sh, timeout, Map.of());
    }

    LitestreamCli cli(String sh, Duration timeout, Map<String, String> inherited) throws IOException {
        Path executable = dir.resolve("fake-litestream");
        Files.writeString(executable, "#!/bin/sh\n" + sh + "\n");
        Files.setPosixFilePermissions(executable, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> base = new HashMap<>(System.getenv());
        base.putAll(inherited);
        String replica = dir.resolve("replica.db").toString();
        return new LitestreamCli(executable, replica, URL,
                LitestreamCli.environment(base, replica, URL, "./config.yml", 4850, "", ""), timeout);
    }

    @Test
    void returnsTheMostRecentCreatedTimeAcrossSnapshotsAndWal() throws Exception {
        LitestreamCli cli = cli("""
                if [ "$1" = "snapshots" ]; then
                  echo "replica generation index size created"
                  echo "s3 gen 0 100 2025-04-24T00:00:00Z"
                else
                  echo "replica generation index offset size created"
                  echo "s3 gen 1 0 100 2025-04-24T00:05:00Z"
                  echo "s3 gen 2 0 100 2025-04-24T00:10:00Z"
                fi""", LitestreamCli.DEFAULT_LIST_TIMEOUT);
        assertEquals(Instant.parse("2025-04-24T00:10:00Z"), cli.lastBackupTime(new StopSignal()));
    }

    @Test
    void rejectsWhenNothingIsListedAtTheDestination() throws Exception {
        LitestreamCli cli = cli("exit 0", LitestreamCli.DEFAULT_LIST_TIMEOUT);
        BackupListingException e = assertThrows(BackupListingException.class, () -> cli.lastBackupTime(new StopSignal()));
        assertEquals("no snapshots or WAL segments listed at s3://fake-bucket/backup", e.getMessage());
    }

    @Test
    void rejectsWhenTheLitestreamProcessExitsNonZero() throws Exception {
        LitestreamCli cli = cli("echo 'cannot load config' >&2; exit 1", LitestreamCli.DEFAULT_LIST_TIMEOUT);
        BackupListingException e = assertThrows(BackupListingException.class, () -> cli.lastBackupTime(new StopSignal()));
        assertTrue(e.getMessage().matches("litestream (snapshots|wal) exited with code 1"), e.getMessage());
    }

    @Test
    void rejectsAndKillsTheProcessWhenListingTimesOut() throws Exception {
        // The shell and its sleep both record their pids; both must be gone after the timeout.
        LitestreamCli cli = cli("sleep 30 & echo $! > \"" + dir + "/$1.child\"; echo $$ > \"" + dir + "/$1.pid\"; wait",
                Duration.ofMillis(500));
        BackupListingException e = assertThrows(BackupListingException.class, () -> cli.lastBackupTime(new StopSignal()));
        assertTrue(e.getMessage().matches("timed out listing backup state \\(litestream (snapshots|wal)\\)"),
                e.getMessage());
        for (String cmd : List.of("snapshots", "wal")) {
            for (String suffix : List.of(".pid", ".child")) {
                Path f = dir.resolve(cmd + suffix);
                if (Files.exists(f)) {
                    long pid = Long.parseLong(Files.readString(f).strip());
                    assertTrue(awaitGone(pid), cmd + suffix + " " + pid + " was killed");
                }
            }
        }
        assertTrue(Files.exists(dir.resolve("snapshots.pid")), "the fake ran");
    }

    @Test
    void runsBothListingsInParallel() throws Exception {
        // Each listing waits until the other has started: run one after the other, they would
        // both time out.
        LitestreamCli cli = cli("""
                touch "%1$s/$1.started"
                other=wal; [ "$1" = "wal" ] && other=snapshots
                while [ ! -f "%1$s/$other.started" ]; do sleep 0.05; done
                echo "s3 gen 0 100 2025-04-24T00:00:0${#1}Z"
                """.formatted(dir), Duration.ofSeconds(20));
        // ${#1} is the length of $1: snapshots -> :09, wal -> :03
        assertEquals(Instant.parse("2025-04-24T00:00:09Z"), cli.lastBackupTime(new StopSignal()));
    }

    @Test
    void rejectsWhenTheProcessIsKilledBySignal() throws Exception {
        LitestreamCli cli = cli("kill -9 $$", LitestreamCli.DEFAULT_LIST_TIMEOUT);
        BackupListingException e = assertThrows(BackupListingException.class, () -> cli.lastBackupTime(new StopSignal()));
        assertEquals("litestream snapshots killed with SIGKILL", e.getMessage());
    }

    @Test
    void rejectsWhenTheExecutableCannotRun() {
        LitestreamCli cli = new LitestreamCli(dir.resolve("missing-litestream"), "replica.db", URL, Map.of(),
                LitestreamCli.DEFAULT_LIST_TIMEOUT);
        BackupListingException e = assertThrows(BackupListingException.class, () -> cli.lastBackupTime(new StopSignal()));
        assertTrue(e.getMessage().startsWith("unable to run litestream snapshots"), e.getMessage());
        assertTrue(e.getMessage().contains("missing-litestream"), e.getMessage());
    }

    @Test
    void listsWithTheEnvironmentOfLitestreamReplicate() throws Exception {
        Path envFile = dir.resolve("env");
        LitestreamCli cli = cli("""
                {
                  echo "args=$1 $2"
                  echo "LITESTREAM_CONFIG=$LITESTREAM_CONFIG"
                  echo "LITESTREAM_PORT=$LITESTREAM_PORT"
                  echo "ZERO_REPLICA_FILE=$ZERO_REPLICA_FILE"
                  echo "ZERO_LITESTREAM_BACKUP_URL=$ZERO_LITESTREAM_BACKUP_URL"
                  echo "ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES=$ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES"
                  echo "ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES=$ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES"
                  echo "ZERO_LITESTREAM_ENDPOINT=${ZERO_LITESTREAM_ENDPOINT-unset}"
                  echo "INHERITED=$ZRM_TEST_INHERITED"
                } > "%s.$1"
                echo "s3 gen 0 100 2025-04-24T00:00:00Z"
                """.formatted(envFile), LitestreamCli.DEFAULT_LIST_TIMEOUT,
                Map.of("ZRM_TEST_INHERITED", "yes", "ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES", "1"));
        cli.lastBackupTime(new StopSignal());
        String replica = dir.resolve("replica.db").toString();
        for (String cmd : List.of("snapshots", "wal")) {
            List<String> lines = Files.readAllLines(Path.of(envFile + "." + cmd));
            assertEquals(List.of("args=" + cmd + " " + replica, "LITESTREAM_CONFIG=./config.yml", "LITESTREAM_PORT=4850",
                    "ZERO_REPLICA_FILE=" + replica, "ZERO_LITESTREAM_BACKUP_URL=" + URL,
                    "ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES=1", // inherited values win over defaults
                    "ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES=715",
                    "ZERO_LITESTREAM_ENDPOINT=" + (System.getenv("ZERO_LITESTREAM_ENDPOINT") == null
                            ? "unset" : System.getenv("ZERO_LITESTREAM_ENDPOINT")),
                    "INHERITED=yes"), lines);
        }
    }

    @Test
    void environmentSetsEndpointAndRegionOnlyWhenConfigured() {
        Map<String, String> env = LitestreamCli.environment(Map.of("LITESTREAM_CONFIG", "/etc/inherited.yml"),
                "r.db", URL, "", 4999, "https://s3.example", "us-east-2");
        assertEquals("/etc/inherited.yml", env.get("LITESTREAM_CONFIG"));
        assertEquals("https://s3.example", env.get("ZERO_LITESTREAM_ENDPOINT"));
        assertEquals("us-east-2", env.get("ZERO_LITESTREAM_REGION"));
        assertEquals("4999", env.get("LITESTREAM_PORT"));
        assertFalse(LitestreamCli.environment(Map.of(), "r.db", URL, "c.yml", 1, "", "")
                .containsKey("ZERO_LITESTREAM_REGION"));
    }

    @Test
    void stopAbortsTheListings() throws Exception {
        LitestreamCli cli = cli("touch \"" + dir + "/$1.started\"; exec sleep 30", Duration.ofSeconds(60));
        StopSignal signal = new StopSignal();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                cli.lastBackupTime(signal);
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        t.start();
        awaitFile(dir.resolve("snapshots.started"));
        awaitFile(dir.resolve("wal.started"));
        signal.stop();
        t.join(10_000);
        assertFalse(t.isAlive(), "the listing ended when stopped, long before its timeout");
        assertTrue(outcome.get() instanceof BackupListingException, String.valueOf(outcome.get()));
        assertEquals("litestream snapshots killed with SIGKILL", outcome.get().getMessage());
    }

    @Test
    void skipsUnexpectedAndOverlongLines() throws Exception {
        LitestreamCli cli = cli("""
                echo "replica generation index size created"
                echo "garbage garbage"
                awk 'BEGIN { s = ""; for (i = 0; i < 10000; i++) s = s "x"; print "s3 gen 0 " s " 2025-04-24T09:00:00Z" }'
                printf 's3 gen 1 100 2025-04-24T00:00:00Z'
                """, LitestreamCli.DEFAULT_LIST_TIMEOUT);
        // The overlong line is cut, so its (later) time is not trusted; the last line has no newline.
        assertEquals(Instant.parse("2025-04-24T00:00:00Z"), cli.lastBackupTime(new StopSignal()));
    }

    @Test
    void largeListingsAreParsedWhileStreaming() throws Exception {
        LitestreamCli cli = cli("""
                awk 'BEGIN { for (i = 0; i < 200000; i++) printf "s3 1862f44967b3863f %d 0 100 2025-04-24T00:00:00Z\\n", i;
                             print "s3 1862f44967b3863f x 0 100 2025-04-24T01:00:00Z" }'
                """, LitestreamCli.DEFAULT_LIST_TIMEOUT);
        assertEquals(Instant.parse("2025-04-24T01:00:00Z"), cli.lastBackupTime(new StopSignal()));
    }

    /**
     * Whether a process ended within 10 s. Another process's state can only be observed, not
     * awaited, and a killed grandchild may linger as a zombie under an init that does not reap,
     * so this re-reads /proc with a bounded backoff.
     */
    static boolean awaitGone(long pid) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long pause = 10;
        while (System.nanoTime() < deadline) {
            if (!running(pid)) {
                return true;
            }
            Thread.sleep(pause);
            pause = Math.min(pause * 2, 500);
        }
        return !running(pid);
    }

    static boolean running(long pid) throws IOException {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        String s;
        try {
            s = Files.readString(stat);
        } catch (java.nio.file.NoSuchFileException e) {
            return false;
        }
        char state = s.charAt(s.lastIndexOf(')') + 2);
        return state != 'Z' && state != 'X';
    }

    /** Waits (bounded, with backoff) for a file a child process creates. */
    static void awaitFile(Path f) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long pause = 10;
        while (!Files.exists(f)) {
            assertTrue(System.nanoTime() < deadline, f + " appeared");
            Thread.sleep(pause);
            pause = Math.min(pause * 2, 200);
        }
    }
}

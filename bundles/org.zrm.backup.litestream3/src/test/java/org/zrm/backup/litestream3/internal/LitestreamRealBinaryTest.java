package org.zrm.backup.litestream3.internal;

import org.zrm.testing.backup.LitestreamBinary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.testing.backup.ManualClock;
import org.zrm.testing.backup.RecordingMonitorContext;

/**
 * The verification path against the real litestream v0.3.13 and a {@code file://} destination:
 * {@code litestream replicate} backs up a WAL-mode replica once, then {@link LitestreamCli} lists
 * it with {@code snapshots} and {@code wal}. Upstream v0.3.13 exports no
 * {@code litestream_replica_progress}, so the monitor case serves that gauge from a fake /metrics
 * (spec §8.3).
 */
class LitestreamRealBinaryTest {

    static final Duration SNAPSHOT_WAIT = Duration.ofSeconds(60);
    static final long WRITE_TIME_MS = 1_745_452_800_000L;

    @TempDir
    static Path dir;

    static Path litestream;
    static Path replica;
    static Path config;
    static String destURL;
    static Path dest;

    @BeforeAll
    static void backUpOnce() throws Exception {
        litestream = LitestreamBinary.locate();
        replica = dir.resolve("zero.db");
        TestReplica.create(replica, "0a", WRITE_TIME_MS);
        try (Connection c = TestReplica.open(replica); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE issues (id TEXT PRIMARY KEY, title TEXT)");
            st.execute("INSERT INTO issues VALUES ('1', 'one'), ('2', 'two')");
        }
        dest = dir.resolve("dest");
        destURL = dest.toUri().toString().replaceFirst("^file:/+", "file:///");
        config = dir.resolve("litestream.yml");
        // The same placeholders as zero-cache's config.yml, so the listing's environment is what
        // selects the database and the destination.
        Files.writeString(config, """
                dbs:
                  - path: ${ZERO_REPLICA_FILE}
                    replicas:
                      - url: ${ZERO_LITESTREAM_BACKUP_URL}
                        sync-interval: 1s
                """);
        Path log = dir.resolve("replicate.log");
        ProcessBuilder pb = new ProcessBuilder(litestream.toString(), "replicate").redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().clear();
        pb.environment().putAll(environment(destURL));
        Process replicate = pb.start();
        try {
            awaitSnapshot(replicate, log);
        } finally {
            replicate.destroy(); // SIGTERM: litestream shuts down cleanly
            if (!replicate.waitFor(15, TimeUnit.SECONDS)) {
                replicate.destroyForcibly();
                replicate.waitFor(15, TimeUnit.SECONDS);
            }
        }
    }

    static Map<String, String> environment(String url) {
        return LitestreamCli.environment(System.getenv(), replica.toString(), url, config.toString(), 4850, "", "");
    }

    /**
     * Waits for the first {@code generations/<gen>/snapshots/*.snapshot.lz4}. The writer is another
     * process and the directories below {@code dest} do not exist yet, so a WatchService would need
     * re-registering at every level as they appear; a bounded re-check with backoff is simpler and
     * equally correct.
     */
    static void awaitSnapshot(Process replicate, Path log) throws Exception {
        long deadline = System.nanoTime() + SNAPSHOT_WAIT.toNanos();
        long pause = 20;
        while (backupFiles(".snapshot.lz4").isEmpty()) {
            if (!replicate.isAlive()) {
                throw new IllegalStateException("litestream replicate exited with " + replicate.exitValue() + ": "
                        + Files.readString(log));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no snapshot at " + dest + " after " + SNAPSHOT_WAIT.toSeconds() + " s: "
                        + Files.readString(log));
            }
            Thread.sleep(pause);
            pause = Math.min(pause * 2, 500);
        }
    }

    static List<Path> backupFiles(String suffix) throws IOException {
        if (!Files.isDirectory(dest)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dest)) {
            return files.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
        }
    }

    /** What the v0.3 file client lists as {@code created}: the newest mtime, to the second. */
    static Instant newestCreated() throws IOException {
        Instant newest = Instant.MIN;
        for (String suffix : List.of(".snapshot.lz4", ".wal.lz4")) {
            for (Path p : backupFiles(suffix)) {
                Instant t = Files.getLastModifiedTime(p).toInstant().truncatedTo(ChronoUnit.SECONDS);
                newest = t.isAfter(newest) ? t : newest;
            }
        }
        return newest;
    }

    LitestreamCli cli(String url) {
        return new LitestreamCli(litestream, replica.toString(), url, environment(url), Duration.ofSeconds(30));
    }

    @Test
    void verifierReturnsTheNewestCreatedTimeAtTheDestination() throws Exception {
        Instant expected = newestCreated();
        assertTrue(expected.isAfter(Instant.MIN), "a backup exists");
        assertEquals(expected, cli(destURL).lastBackupTime(new StopSignal()));
    }

    @Test
    void listingAnEmptyDestinationRejectsWithUpstreamsText() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        String emptyURL = empty.toUri().toString().replaceFirst("^file:/+", "file:///");
        BackupListingException e = assertThrows(BackupListingException.class,
                () -> cli(emptyURL).lastBackupTime(new StopSignal()));
        assertEquals("no snapshots or WAL segments listed at " + emptyURL, e.getMessage());
    }

    @Test
    void aMissingConfigurationFileMakesTheListingFail() {
        LitestreamCli cli = new LitestreamCli(litestream, replica.toString(), destURL,
                LitestreamCli.environment(System.getenv(), replica.toString(), destURL,
                        dir.resolve("missing.yml").toString(), 4850, "", ""), Duration.ofSeconds(30));
        BackupListingException e = assertThrows(BackupListingException.class, () -> cli.lastBackupTime(new StopSignal()));
        assertTrue(e.getMessage().matches("litestream (snapshots|wal) exited with code 1"), e.getMessage());
    }

    @Test
    void monitorPurgesWhatTheRealBackupConfirmsAndBlocksWhatItDoesNot() throws Exception {
        Instant uploaded = newestCreated();
        try (FakeMetricsServer metrics = new FakeMetricsServer()) {
            // litestream (the rocicorp fork) would stamp the progress gauge when it uploaded 0a.
            metrics.setBody("# TYPE litestream_replica_progress gauge\n"
                    + "litestream_replica_progress{db=\"" + replica + "\",name=\"file\",watermark=\"0a\"} "
                    + uploaded.getEpochSecond() + "\n");
            ManualClock clock = new ManualClock(uploaded);
            RecordingMonitorContext ctx = new RecordingMonitorContext(Duration.ofSeconds(30));
            Litestream3Monitor monitor = new Litestream3Monitor(new Litestream3Settings(destURL, metrics.url(), replica,
                    Duration.ofHours(1), Duration.ofMinutes(15), Duration.ofSeconds(10), 1 << 20), cli(destURL), clock);
            monitor.start(ctx);
            try {
                monitor.check();
                assertEquals(Duration.ofMillis(Math.max(0, WRITE_TIME_MS - uploaded.toEpochMilli())), ctx.lastBackupLag());
                clock.advance(Duration.ofSeconds(30));
                monitor.check();
                assertEquals(List.of("0a"), ctx.scheduled());

                // A claim 5 minutes past the last real upload: blocked as stale, not purged.
                metrics.setBody("# TYPE litestream_replica_progress gauge\n"
                        + "litestream_replica_progress{name=\"file\",watermark=\"0b\"} "
                        + uploaded.plus(Duration.ofMinutes(5)).getEpochSecond() + "\n");
                clock.advance(Duration.ofMinutes(5)); // 0b is observed and already past the 30 s delay
                monitor.check();
                assertEquals(List.of("0a"), ctx.scheduled());
                assertEquals(1, ctx.purgeBlockedCount("backup-stale"));
                assertEquals(MonitorActivation.iso(uploaded), monitor.status().get("lastVerifiedUploadTime"));
            } finally {
                monitor.stop();
            }
        }
    }
}

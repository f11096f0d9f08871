package org.zrm.it;

import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

/**
 * The change log is purged on what the real litestream v0.3.13 really backed up. ZRM runs
 * {@code litestream replicate}; the litestream3 monitor reads {@code litestream_replica_progress}
 * from a bridge (stock v0.3.13 does not export it, spec §8.3) that restores the backup at every
 * scrape and claims the restored copy's {@code stateVersion}, at the time it first appeared there;
 * the monitor verifies against the destination with the real {@code litestream snapshots}/{@code wal}.
 * A DELETE trigger records every purged row: none may be at or above a watermark the backup held
 * when the row was deleted, also after the litestream child was killed and restarted.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class LitestreamPurgeIT {

    private static final String AUDIT = "it_audit.purged";

    @Inject
    private BundleContext context;

    /** What the bridge claimed: watermark and the time it was first seen in the backup. */
    record Claim(String watermark, Instant seen) {
    }

    private final List<Claim> claims = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<String, Instant> firstSeen = new ConcurrentHashMap<>();

    @Configuration
    public Option[] config() throws IOException {
        return LitestreamBackupIT.options(Files.createTempDirectory("zrm-it-litestream-purge-"));
    }

    @Test
    public void purgesOnlyBelowWhatTheBackupHolds() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        pipeline.awaitStreaming();
        pipeline.awaitStatus("litestream running", s ->
                "RUNNING".equals(s.path("sections").path("litestream").path("state").asText()));
        pipeline.exec("CREATE SCHEMA IF NOT EXISTS it_audit",
                "CREATE TABLE IF NOT EXISTS " + AUDIT + " (watermark text NOT NULL,"
                        + " deleted_at timestamptz NOT NULL DEFAULT clock_timestamp())",
                "CREATE OR REPLACE FUNCTION it_audit.record_purge() RETURNS trigger LANGUAGE plpgsql AS"
                        + " $$ BEGIN INSERT INTO " + AUDIT + " (watermark) VALUES (OLD.watermark); RETURN OLD; END $$",
                "CREATE TRIGGER it_record_purge AFTER DELETE ON " + Pipeline.CDC + ".\"changeLog\""
                        + " FOR EACH ROW EXECUTE FUNCTION it_audit.record_purge()");
        HttpServer bridge = bridge();
        AtomicBoolean writing = new AtomicBoolean(true);
        Thread writer = new Thread(() -> {
            for (int i = 1; writing.get(); i++) {
                try {
                    pipeline.exec("INSERT INTO it_backup VALUES (" + i + ")");
                    TimeUnit.MILLISECONDS.sleep(100);
                } catch (Exception e) {
                    return;
                }
            }
        }, "it-writer");
        writer.setDaemon(true);
        writer.start();
        try {
            Path conf = Path.of(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR));
            writeCfg(conf, "org.zrm.backup.litestream3.cfg", "replica.file = "
                    + context.getProperty(ZrmRuntimeOptions.REPLICA_FILE) + "\n"
                    + "litestream.backupURL = file://" + context.getProperty(LitestreamBackupIT.BACKUP_DIR) + "\n"
                    + "litestream.metricsURL = http://127.0.0.1:" + bridge.getAddress().getPort() + "/metrics\n"
                    + "litestream.executable = " + context.getProperty(LitestreamBackupIT.LITESTREAM) + "\n"
                    + "litestream.checkIntervalMs = 500\n");
            writeCfg(conf, "org.zrm.backup.cfg", "strategy = litestream3\nexitOnFatal = false\nminCleanupDelayMs = 1000\n");
            pipeline.awaitStatus("litestream3 active", s ->
                    "litestream3".equals(s.path("sections").path("backup").path("active").asText()));
            long purged = awaitPurged(pipeline, 1);
            assertPurgedBelowClaims(pipeline);

            // Kill the child: it is restarted, and purging goes on only on what reaches the backup.
            long pid = pipeline.status().path("sections").path("litestream").path("pid").asLong();
            ProcessHandle.of(pid).orElseThrow().destroyForcibly();
            pipeline.awaitStatus("litestream restarted", s -> {
                JsonNode l = s.path("sections").path("litestream");
                return l.path("restarts").asLong() == 1 && "RUNNING".equals(l.path("state").asText());
            });
            awaitPurged(pipeline, purged + 1);
            assertPurgedBelowClaims(pipeline);
            JsonNode status = pipeline.status();
            assertTrue(status.toString(), status.path("healthy").asBoolean());
        } finally {
            writing.set(false);
            writer.join(10_000);
            bridge.stop(0);
        }
    }

    /** Serves the progress gauge for what a restore of the backup shows now. */
    private HttpServer bridge() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics", exchange -> {
            String body = "";
            try {
                String w = LitestreamBackupIT.restoredQuery(context,
                        "SELECT stateVersion FROM \"_zero.replicationState\"");
                if (w != null) {
                    Instant seen = firstSeen.computeIfAbsent(w, k -> Instant.now());
                    claims.add(new Claim(w, seen));
                    body = LitestreamStandIns.progress(w, seen.toEpochMilli() / 1000.0);
                }
            } catch (Exception e) {
                body = "";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                exchange.getResponseBody().write(bytes);
            }
            exchange.close();
        });
        server.start();
        return server;
    }

    private static long awaitPurged(Pipeline pipeline, long atLeast) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            long n = Long.parseLong(pipeline.queryStrings("SELECT count(*) FROM " + AUDIT).get(0));
            if (n >= atLeast) {
                return n;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("fewer than " + atLeast + " change-log rows purged; /status: "
                        + pipeline.status().path("sections").path("backup"));
            }
            TimeUnit.MILLISECONDS.sleep(200); // the purge is observable only in Postgres
        }
    }

    /** Each purged row is below a watermark the backup held (as restored) before the row was deleted. */
    private void assertPurgedBelowClaims(Pipeline pipeline) throws Exception {
        List<String> rows = pipeline.queryStrings("SELECT watermark || ' ' || extract(epoch FROM deleted_at)::text FROM "
                + AUDIT);
        for (String row : rows) {
            String[] parts = row.split(" ");
            String w = parts[0];
            double deletedAt = Double.parseDouble(parts[1]);
            boolean covered = claims.stream().anyMatch(c -> c.seen().toEpochMilli() / 1000.0 <= deletedAt
                    && w.compareTo(c.watermark()) < 0);
            assertTrue("purged " + w + " at " + deletedAt + " was not below anything the backup held by then: "
                    + claims.stream().map(Claim::watermark).distinct().toList(), covered);
        }
    }

    private static void writeCfg(Path dir, String name, String text) throws IOException {
        Path tmp = dir.resolve(name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}

package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/**
 * Swapping the backup monitor live while upstream writes run: replica → litestream3 → vfs →
 * replica by editing {@code org.zrm.backup.cfg} in the watched folder, plus uninstalling the vfs
 * monitor's bundle and dropping its jar into the deploy folder again.
 *
 * <p>The backups are stand-ins the test controls, so that it knows which watermark each monitor
 * can confirm: a Prometheus endpoint publishing {@code litestream_replica_progress} and a
 * {@code litestream} script listing one fresh snapshot (litestream3), and a VFS reader child
 * speaking the reader protocol with a watermark from a file (vfs). A DELETE trigger on the change
 * log records every purged row with the time it was deleted. Throughout, the test asserts:
 * <ul>
 *   <li>no purged row is at or above the watermark the backup of the monitor active at that time
 *       had reached;</li>
 *   <li>no subscriber is dropped (the in-process replicator and a WebSocket subscriber stay
 *       connected; the streamer counts no dropped subscriber);</li>
 *   <li>purging resumes after each swap, and stays paused while the selected monitor's bundle is
 *       missing.</li>
 * </ul>
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class BackupSwapIT {

    private static final String AUDIT = "it_audit.purged";

    @Inject
    private BundleContext context;

    private Pipeline pipeline;
    private Path configDir;
    private Path work;
    private final AtomicBoolean writing = new AtomicBoolean(true);
    private final AtomicLong written = new AtomicLong();
    private final AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    private Thread writer;
    private HttpServer metrics;
    private volatile String metricsBody = "";
    /** One row per phase: the phase, when it began (database clock), and the backup's watermark bound. */
    private final List<Phase> phases = new ArrayList<>();

    private record Phase(String name, String since, String bound) {}

    @Configuration
    public Option[] config() throws IOException {
        Path dir = Files.createTempDirectory("zrm-it-backup-");
        Option[] options = ZrmRuntimeOptions.streamingOptions(dir,
                "CREATE TABLE it_swap (id int8 PRIMARY KEY, label text)");
        Path conf = dir.resolve("conf");
        String replica = Files.readString(conf.resolve("org.zrm.backup.replica.cfg"))
                .lines().filter(l -> l.startsWith("replica.file")).findFirst().orElseThrow();
        // Short cycles so that each phase purges within seconds.
        Files.writeString(conf.resolve("org.zrm.changestreamer.cfg"), "changeStreamer.cleanupDelayMs = 300\n",
                java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(conf.resolve("org.zrm.backup.cfg"),
                "strategy = replica\nexitOnFatal = false\nminCleanupDelayMs = 1000\n");
        Files.writeString(conf.resolve("org.zrm.backup.replica.cfg"), replica + "\n"
                + "replica.monitor.initialDelayMs = 200\nreplica.monitor.intervalMs = 300\n");
        return options;
    }

    @Before
    public void start() throws Exception {
        pipeline = new Pipeline(context);
        configDir = Path.of(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR));
        work = Files.createTempDirectory("zrm-it-backup-fakes-");
        pipeline.awaitStreaming();
        pipeline.exec("CREATE SCHEMA IF NOT EXISTS it_audit",
                "CREATE TABLE IF NOT EXISTS " + AUDIT + " (watermark text NOT NULL,"
                        + " deleted_at timestamptz NOT NULL DEFAULT clock_timestamp())",
                "CREATE OR REPLACE FUNCTION it_audit.record_purge() RETURNS trigger LANGUAGE plpgsql AS"
                        + " $$ BEGIN INSERT INTO " + AUDIT + " (watermark) VALUES (OLD.watermark); RETURN OLD; END $$",
                "DROP TRIGGER IF EXISTS it_record_purge ON " + Pipeline.CDC + ".\"changeLog\"",
                "CREATE TRIGGER it_record_purge AFTER DELETE ON " + Pipeline.CDC + ".\"changeLog\""
                        + " FOR EACH ROW EXECUTE FUNCTION it_audit.record_purge()");
        writer = new Thread(this::writeContinuously, "it-upstream-writer");
        writer.setDaemon(true);
        writer.start();
    }

    @After
    public void stop() throws Exception {
        writing.set(false);
        if (writer != null) {
            writer.join(10_000);
        }
        if (metrics != null) {
            metrics.stop(0);
        }
    }

    /** One small upstream transaction every 20 ms: the stream never stops during the swaps. */
    private void writeContinuously() {
        try (Connection c = pipeline.upstream(); Statement s = c.createStatement()) {
            while (writing.get()) {
                long id = written.incrementAndGet();
                s.execute("INSERT INTO it_swap VALUES (" + id + ", 'row " + id + "')");
                TimeUnit.MILLISECONDS.sleep(20); // a steady offered load, not a wait for a condition
            }
        } catch (Exception e) {
            writerFailure.set(e);
        }
    }

    @Test
    public void swapsLiveWithoutPurgingPastTheActiveBackupOrDroppingSubscribers() throws Exception {
        String replicaVersion = pipeline.awaitStreaming();
        ChangesClient ws = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-backup-ws", replicaVersion, pipeline.lastStoredWatermark())));
        assertEquals("status", ws.awaitFirstFrame().type());
        Set<String> subscribersBefore = subscriberIds();
        assertTrue(subscribersBefore.toString(), subscribersBefore.contains("it-backup-ws"));

        // Phase 1: replica. It confirms the replica file's stateVersion, which only grows.
        beginPhase("replica", null);
        awaitPurgeIn("replica");

        // Phase 2: litestream3, whose backup stays at the replica's version of now.
        String l3Backup = pipeline.replicaStateVersion();
        startMetrics(l3Backup);
        Path litestream = fakeLitestream();
        writeCfg("org.zrm.backup.litestream3.cfg", replicaFileLine()
                + "litestream.backupURL = file://" + work.resolve("l3-backup") + "\n"
                + "litestream.port = " + metrics.getAddress().getPort() + "\n"
                + "litestream.executable = " + litestream + "\n"
                + "litestream.checkIntervalMs = 300\n");
        selectStrategy("litestream3");
        beginPhase("litestream3", l3Backup);
        awaitPurgeIn("litestream3");

        // A node restoring the backup reserves a snapshot: it gets the active monitor's backup URL,
        // and the reservation holds purging until that node subscribes with initial=true, across
        // the swap to vfs below.
        ChangesClient restorer = ChangesClient.connect(pipeline.http(), snapshotUri("it-restorer"));
        JsonNode snapshotStatus = restorer.awaitFirstFrame().msg().get(1);
        assertEquals("file://" + work.resolve("l3-backup"), snapshotStatus.path("backupURL").asText());
        assertEquals(replicaVersion, snapshotStatus.path("replicaVersion").asText());
        assertTrue(snapshotStatus.toString(), snapshotStatus.hasNonNull("minWatermark"));
        pipeline.awaitStatus("purging paused for the reservation", s -> s.path("sections").path("backup")
                .path("purgeBlockedReason").asText().equals("paused for snapshot reservation(s): it-restorer"));

        // Phase 3: vfs, whose backup (read by the reader child) is at a later version.
        String vfsBackup = pipeline.replicaStateVersion();
        Path watermarkFile = work.resolve("vfs-watermark");
        Files.writeString(watermarkFile, vfsBackup);
        writeCfg("org.zrm.backup.vfs.cfg", "litestream.backupURL = file://" + work.resolve("vfs-backup") + "\n"
                + "litestream.vfsReaderCommand = " + fakeVfsReader(watermarkFile) + "\n"
                + "litestream.vfsProbeIntervalMs = 300\n"
                + "litestream.vfsProbeTimeoutMs = 5000\n");
        selectStrategy("vfs");
        JsonNode held = pipeline.status().path("sections").path("backup");
        assertEquals(held.toString(), "it-restorer", held.path("reservations").path(0).asText());
        assertFalse("the swap does not cancel the reservation", restorer.isClosed());
        beginPhase("vfs", vfsBackup);
        long purgedWhileReserved = auditCount();
        // Subscribing with initial=true ends the reservation (the restore finished) ...
        ChangesClient restored = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                "id=it-restorer&replicaVersion=" + replicaVersion + "&watermark=" + pipeline.lastStoredWatermark()
                        + "&mode=serving&initial=true&taskID=it-restorer"));
        assertEquals("status", restored.awaitFirstFrame().type());
        restorer.awaitClose();
        assertEquals("nothing was purged while the reservation was open", purgedWhileReserved, auditCount());
        restored.close();
        // ... and purging resumes under the new monitor.
        awaitPurgeIn("vfs");

        // The vfs bundle goes away: purging pauses and /status says why.
        Bundle vfsBundle = Bundles.named(context, "org.zrm.backup.vfs");
        Path jar = Path.of(java.net.URI.create(vfsBundle.getLocation().replaceFirst("^reference:", "")));
        vfsBundle.uninstall();
        JsonNode paused = pipeline.awaitStatus("purging paused without the vfs bundle", s ->
                s.path("sections").path("backup").path("active").isNull()
                        && s.path("sections").path("backup").path("purgeBlockedReason").asText()
                                .contains("no vfs backup monitor is registered"));
        assertEquals("vfs", paused.path("sections").path("backup").path("strategy").asText());
        String laterBackup = pipeline.replicaStateVersion();
        Files.writeString(watermarkFile, laterBackup);
        beginPhase("vfs-missing", vfsBackup); // nothing newer may be purged while no monitor runs
        long purgedBefore = auditCount();
        // Absence of purges can only be shown over time: several purge cycles (300 ms) and checks.
        TimeUnit.SECONDS.sleep(3);
        assertEquals("no purge while the selected monitor's bundle is missing", purgedBefore, auditCount());

        // Dropping the jar into the deploy folder is enough to resume.
        Files.copy(jar, Path.of(context.getProperty(ZrmRuntimeOptions.DEPLOY_DIR)).resolve(jar.getFileName()),
                StandardCopyOption.REPLACE_EXISTING);
        pipeline.awaitStatus("vfs monitor active again", s ->
                "vfs".equals(s.path("sections").path("backup").path("active").asText()));
        beginPhase("vfs-reinstalled", laterBackup);
        awaitPurgeIn("vfs-reinstalled");

        // Phase 4: back to replica, which has no backup to restore from.
        selectStrategy("replica");
        beginPhase("replica-again", null);
        awaitPurgeIn("replica-again");
        ChangesClient refused = ChangesClient.connect(pipeline.http(), snapshotUri("it-late-restorer"));
        assertEquals("Error: replication-manager is not configured with a ZERO_LITESTREAM_BACKUP_URL",
                refused.awaitClose().reason());

        writing.set(false);
        writer.join(10_000);
        assertNull(String.valueOf(writerFailure.get()), writerFailure.get());
        assertTrue("the upstream load ran throughout: " + written.get(), written.get() > 100);
        assertPurgesWithinTheActiveBackup();

        // No subscriber was dropped by any swap.
        assertFalse("the WebSocket subscriber stays connected: " + ws.history(), ws.isClosed());
        assertEquals(subscribersBefore, subscriberIds());
        JsonNode cs = pipeline.status().path("sections").path("changestreamer");
        assertEquals(cs.toString(), 0, cs.path("droppedSubscribers").asLong());
        JsonNode backup = pipeline.status().path("sections").path("backup");
        assertTrue(backup.toString(), backup.path("swaps").asLong() >= 4);
        ws.close();
    }

    // ------------------------------------------------------------------ phases and purges

    private void beginPhase(String name, String bound) throws Exception {
        phases.add(new Phase(name, now(), bound));
    }

    /** Waits until the phase's monitor has purged at least one row (purging resumed). */
    private void awaitPurgeIn(String phase) throws Exception {
        Phase p = phases.stream().filter(x -> x.name().equals(phase)).findFirst().orElseThrow();
        long deadline = System.nanoTime() + Pipeline.SLOW_WAIT.toNanos();
        while (true) {
            List<String> n = pipeline.queryStrings("SELECT count(*) FROM " + AUDIT + " WHERE deleted_at >= '"
                    + p.since() + "'");
            if (Long.parseLong(n.get(0)) > 0) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no purge in phase " + phase + " within " + Pipeline.SLOW_WAIT
                        + "; /status backup: " + pipeline.status().path("sections").path("backup"));
            }
            // The purge is observable only in the database; poll the audit table within the deadline.
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    /**
     * Every purged row lies below the watermark the active backup had reached. A phase begins once
     * {@code /status} shows its monitor active, and by then the swap has dropped the previous
     * monitor's pending purges and waited for one in flight, so every row deleted in a phase was
     * purged on the confirmation of that phase's monitor.
     */
    private void assertPurgesWithinTheActiveBackup() throws Exception {
        String replicaNow = pipeline.replicaStateVersion();
        for (int i = 0; i < phases.size(); i++) {
            Phase p = phases.get(i);
            String until = i + 1 < phases.size() ? "'" + phases.get(i + 1).since() + "'" : "'infinity'";
            List<String> max = pipeline.queryStrings("SELECT max(watermark) FROM " + AUDIT + " WHERE deleted_at >= '"
                    + p.since() + "' AND deleted_at < " + until);
            String bound = p.bound() == null ? replicaNow : p.bound();
            String highest = max.get(0);
            assertTrue("phase " + p.name() + " purged up to " + highest + ", not below its backup's " + bound,
                    highest == null || highest.compareTo(bound) < 0);
        }
    }

    private long auditCount() throws Exception {
        return Long.parseLong(pipeline.queryStrings("SELECT count(*) FROM " + AUDIT).get(0));
    }

    /** @return the database's clock, the one the audit trigger stamps deletions with */
    private String now() throws Exception {
        return pipeline.queryStrings("SELECT clock_timestamp()::text").get(0);
    }

    // ------------------------------------------------------------------ configuration

    private void selectStrategy(String strategy) throws Exception {
        writeCfg("org.zrm.backup.cfg", "strategy = " + strategy + "\nexitOnFatal = false\nminCleanupDelayMs = 1000\n");
        pipeline.awaitStatus(strategy + " monitor active", s ->
                strategy.equals(s.path("sections").path("backup").path("active").asText()));
    }

    private void writeCfg(String name, String text) throws IOException {
        // Written beside and renamed, so FileInstall never reads half a file.
        Path tmp = configDir.resolve(name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, configDir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private String replicaFileLine() {
        return "replica.file = " + context.getProperty(ZrmRuntimeOptions.REPLICA_FILE) + "\n";
    }

    private java.net.URI snapshotUri(String taskID) {
        return java.net.URI.create("ws://127.0.0.1:" + pipeline.port() + "/replication/v6/snapshot?taskID=" + taskID);
    }

    private Set<String> subscriberIds() throws Exception {
        Set<String> ids = new TreeSet<>();
        for (JsonNode s : pipeline.status().path("sections").path("changestreamer").path("subscribers")) {
            ids.add(s.path("id").asText());
        }
        return ids;
    }


    // ------------------------------------------------------------------ backup stand-ins

    /** litestream's /metrics as the rocicorp fork exports it: the backed-up watermark, claimed now. */
    private void startMetrics(String watermark) throws IOException {
        metricsBody = LitestreamStandIns.progress(watermark, System.currentTimeMillis() / 1000.0);
        metrics = LitestreamStandIns.metrics(() -> metricsBody);
    }

    /** A litestream v0.3 CLI whose destination always holds a snapshot made just now. */
    private Path fakeLitestream() throws IOException {
        return LitestreamStandIns.cli(work, "");
    }

    /** A VFS reader child: ready first, then answers each request with the watermark in {@code file}. */
    private Path fakeVfsReader(Path file) throws IOException {
        return script("vfs-reader", "#!/bin/sh\n"
                + "echo '[\"ready\",{\"ready\":true}]'\n"
                + "while IFS= read -r line; do\n"
                + "  id=$(printf '%s' \"$line\" | sed -n 's/.*\"requestID\":\"\\([^\"]*\\)\".*/\\1/p')\n"
                + "  w=$(cat '" + file + "')\n"
                + "  now=$(($(date +%s) * 1000))\n"
                + "  echo \"[\\\"backupWatermarkResponse\\\",{\\\"requestID\\\":\\\"$id\\\",\\\"result\\\":"
                + "{\\\"watermark\\\":\\\"$w\\\",\\\"writeTimeMs\\\":$now,\\\"txid\\\":\\\"0000000000000001\\\","
                + "\\\"lagSeconds\\\":0,\\\"observedAtMs\\\":$now}}]\"\n"
                + "done\n");
    }

    private Path script(String name, String text) throws IOException {
        Path p = work.resolve(name);
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }
}

package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.After;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The other two ways to swap the backup monitor (the Gogo command {@code zrm:backup} and a
 * Configuration Admin update), and the litestream3 wedged-backup rule end to end: a backup whose
 * metric keeps claiming progress while its destination shows nothing new past the grace period
 * stops the pipeline (no more acks, no purging) and turns {@code /status} unhealthy. The runtime
 * runs with {@code exitOnFatal = false}, so the test can look at it afterwards.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class BackupWedgeIT {

    @Inject
    private BundleContext context;

    @Inject
    private CommandProcessor commands;

    @Inject
    private ConfigurationAdmin configAdmin;

    private HttpServer metrics;

    @Configuration
    public Option[] config() throws IOException {
        Path dir = Files.createTempDirectory("zrm-it-wedge-");
        Option[] options = ZrmRuntimeOptions.streamingOptions(dir, "CREATE TABLE it_wedge (id int8 PRIMARY KEY)");
        Files.writeString(dir.resolve("conf/org.zrm.backup.cfg"),
                "strategy = replica\nexitOnFatal = false\nminCleanupDelayMs = 1000\n");
        return options;
    }

    @After
    public void stopMetrics() {
        if (metrics != null) {
            metrics.stop(0);
        }
    }

    @Test
    public void gogoAndConfigAdminSwapAndAWedgedBackupStopsThePipeline() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        pipeline.awaitStreaming();
        Path work = Files.createTempDirectory("zrm-it-wedge-fakes-");
        pipeline.awaitStatus("replica monitor active", s ->
                "replica".equals(s.path("sections").path("backup").path("active").asText()));

        // A backup whose metric claims the replica's current watermark, an hour before now, while
        // its destination's newest snapshot is two hours old: stale from the first check on.
        String watermark = pipeline.replicaStateVersion();
        double claimed = System.currentTimeMillis() / 1000.0 - 3600;
        String body = LitestreamStandIns.progress(watermark, claimed);
        metrics = LitestreamStandIns.metrics(() -> body);
        Path litestream = LitestreamStandIns.cli(work, "-d '2 hours ago'");
        Dictionary<String, Object> l3 = new Hashtable<>();
        l3.put("litestream.backupURL", "file://" + work.resolve("backup"));
        l3.put("litestream.port", Integer.toString(metrics.getAddress().getPort()));
        l3.put("litestream.executable", litestream.toString());
        l3.put("replica.file", context.getProperty(ZrmRuntimeOptions.REPLICA_FILE));
        l3.put("litestream.checkIntervalMs", "300");
        l3.put("litestream.wedgedShutdownGraceMs", "2000");
        configAdmin.getConfiguration("org.zrm.backup.litestream3", "?").update(l3);

        // Swap with the Gogo command ...
        String out = gogo("zrm:backup vfs");
        assertTrue(out, out.contains("strategy vfs requested"));
        // A monitor without a backup URL is never started: purging pauses and /status says why.
        // The strategy flips a moment before the reason does (the swap runs on the coordinator's
        // thread), so wait for both.
        JsonNode vfs = pipeline.awaitStatus("vfs selected through zrm:backup, purging paused for want of a URL",
                s -> "vfs".equals(s.path("sections").path("backup").path("strategy").asText())
                        && s.path("sections").path("backup").path("purgeBlockedReason").asText()
                                .contains("the vfs monitor has no backup URL"));
        assertTrue(vfs.toString(), vfs.path("sections").path("backup").path("active").isNull());
        assertTrue(gogo("zrm:backup").contains("purgeBlockedReason:"));

        // ... and with a Configuration Admin update.
        org.osgi.service.cm.Configuration backup = configAdmin.getConfiguration("org.zrm.backup", "?");
        Dictionary<String, Object> props = backup.getProperties();
        props.put("strategy", "litestream3");
        backup.update(props);
        pipeline.awaitStatus("litestream3 active through ConfigAdmin", s ->
                "litestream3".equals(s.path("sections").path("backup").path("active").asText()));

        // The backup stays stale past the 2 s grace period: fatal.
        JsonNode wedged = pipeline.awaitStatus("the wedged backup stops the pipeline", s ->
                s.path("sections").path("backup").hasNonNull("fatal"));
        JsonNode section = wedged.path("sections").path("backup");
        assertTrue(section.toString(), section.path("fatal").asText().contains("is wedged"));
        assertTrue(section.toString(), section.path("purgeBlockedReason").asText().startsWith("fatal: "));
        assertTrue(section.toString(), section.path("purgeBlocked").path("backup-stale").asLong() > 0);
        JsonNode stopped = pipeline.awaitStatus("change streamer stopped, runtime unhealthy", s ->
                "stopped".equals(s.path("sections").path("changestreamer").path("state").asText())
                        && !s.path("healthy").asBoolean());
        assertTrue(stopped.toString(), stopped.path("sections").path("changestreamer").path("lastError").asText()
                .contains("is wedged"));
        assertTrue(pipeline.metrics().contains("zrm_backup_healthy 0"));

        // Nothing is acked upstream any more: the slot's confirmed position stays where it was.
        String confirmed = pipeline.queryStrings("SELECT confirmed_flush_lsn::text FROM pg_replication_slots").get(0);
        pipeline.exec("INSERT INTO it_wedge VALUES (1)");
        assertEquals(confirmed,
                pipeline.queryStrings("SELECT confirmed_flush_lsn::text FROM pg_replication_slots").get(0));
        assertFalse(stopped.path("healthy").asBoolean());
    }

    private String gogo(String command) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        CommandSession session = commands.createSession(InputStream.nullInputStream(), print, print);
        try {
            return String.valueOf(session.execute(command)) + bytes.toString(StandardCharsets.UTF_8);
        } finally {
            session.close();
        }
    }
}

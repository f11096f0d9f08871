package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.zrm.testing.LoopbackPorts;

/**
 * The runtime backs its replica up with the real litestream v0.3.13 to a {@code file://}
 * destination: {@code litestream replicate} starts once the replicator has the replica in WAL,
 * {@code /readyz} answers 200 only after the first snapshot, writes reach the backup, and a killed
 * child is restarted while the node stays healthy.
 *
 * <p>The executable is {@code $ZRM_LITESTREAM_EXECUTABLE} or the copy the litestream bundles'
 * tests cache in {@code ~/.cache/zrm/litestream-0.3.13/} (they fetch it from npm).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class LitestreamBackupIT {

    static final String BACKUP_DIR = "zrm.it.backupDir";
    static final String LITESTREAM = "zrm.it.litestream";

    @Inject
    private BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        return options(Files.createTempDirectory("zrm-it-litestream-"));
    }

    /** The streaming runtime with {@code org.zrm.litestream} backing the replica up to {@code <dir>/backup}. */
    static Option[] options(Path dir) throws IOException {
        Option[] options = ZrmRuntimeOptions.streamingOptions(dir, "CREATE TABLE it_backup (id int8 PRIMARY KEY)");
        String env = System.getenv("ZRM_LITESTREAM_EXECUTABLE");
        Path litestream = env != null && !env.isBlank() ? Path.of(env.strip())
                : Path.of(System.getProperty("user.home"), ".cache", "zrm", "litestream-0.3.13", "litestream");
        if (!Files.isExecutable(litestream)) {
            throw new IllegalStateException("litestream v0.3.13 is not at " + litestream + ": run the tests of"
                    + " bundles/org.zrm.litestream first (they fetch it), or set ZRM_LITESTREAM_EXECUTABLE");
        }
        Path replica = dir.resolve("replica.db");
        String url = "file://" + dir.resolve("backup");
        int port = LoopbackPorts.freeRun(1);
        Files.writeString(dir.resolve("conf/org.zrm.litestream.cfg"), "litestream.backupURL = " + url + "\n"
                + "litestream.executable = " + litestream + "\n"
                + "replica.file = " + replica + "\n"
                + "litestream.port = " + port + "\n"
                + "litestream.logLevel = info\n"
                + "litestream.incrementalBackupIntervalMinutes = 0.02\n"
                + "litestream.snapshotProbeIntervalMs = 300\n"
                + "litestream.restartInitialMs = 200\n");
        // The replicator leaves checkpoints to litestream when a backup URL is set.
        Files.writeString(dir.resolve("conf/org.zrm.replicator.cfg"), "litestream.backupURL = " + url + "\n",
                StandardOpenOption.APPEND);
        Option[] all = java.util.Arrays.copyOf(options, options.length + 2);
        all[options.length] = org.ops4j.pax.exam.CoreOptions.systemProperty(BACKUP_DIR)
                .value(dir.resolve("backup").toString());
        all[options.length + 1] = org.ops4j.pax.exam.CoreOptions.systemProperty(LITESTREAM).value(litestream.toString());
        return all;
    }

    @Test
    public void backsUpWhileWritesFlowAndRestartsAKilledChild() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        pipeline.awaitStreaming();
        JsonNode running = pipeline.awaitStatus("litestream running with a first snapshot", s -> {
            JsonNode l = s.path("sections").path("litestream");
            return "RUNNING".equals(l.path("state").asText()) && l.hasNonNull("firstSnapshotAt");
        });
        long pid = running.path("sections").path("litestream").path("pid").asLong();
        assertTrue(running.toString(), pid > 0);
        // Ready only now: streaming, replica initialized, a snapshot at the destination.
        JsonNode ready = new com.fasterxml.jackson.databind.ObjectMapper().readTree(pipeline.get("/readyz"));
        assertTrue(ready.toString(), ready.path("ready").asBoolean());
        assertTrue(pipeline.get("/healthz").contains("\"healthy\" : true"));

        for (int i = 1; i <= 20; i++) {
            pipeline.exec("INSERT INTO it_backup VALUES (" + i + ")");
        }
        pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_backup", 20));
        awaitBackedUpRows(20);

        ProcessHandle.of(pid).orElseThrow().destroyForcibly(); // SIGKILL
        JsonNode restarted = pipeline.awaitStatus("litestream restarted", s -> {
            JsonNode l = s.path("sections").path("litestream");
            return l.path("restarts").asLong() == 1 && "RUNNING".equals(l.path("state").asText());
        });
        JsonNode l = restarted.path("sections").path("litestream");
        assertNotEquals(pid, l.path("pid").asLong());
        assertEquals(l.toString(), 137, l.path("lastExit").path("code").asInt());
        assertTrue(restarted.toString(), restarted.path("healthy").asBoolean());
        assertTrue(pipeline.metrics().contains("zrm_litestream_restarts_total 1"));

        for (int i = 21; i <= 30; i++) {
            pipeline.exec("INSERT INTO it_backup VALUES (" + i + ")");
        }
        pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_backup", 30));
        awaitBackedUpRows(30);
    }

    /** Restores the destination into a scratch file with litestream until it holds {@code n} rows. */
    private void awaitBackedUpRows(int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = restoredQuery(context, "SELECT count(*) FROM it_backup");
            if (String.valueOf(n).equals(seen)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(500); // the next sync interval (1.2 s)
        }
        throw new AssertionError("the backup holds " + seen + " rows, not " + n);
    }

    /**
     * Restores the backup into a scratch file with the real litestream and runs {@code sql} on it.
     *
     * @return the first column of the first row, or {@code null} while nothing can be restored
     */
    static String restoredQuery(BundleContext context, String sql) throws Exception {
        Path dir = Files.createTempDirectory("zrm-it-restore-");
        Path out = dir.resolve("copy.db");
        try {
            Process p = new ProcessBuilder(context.getProperty(LITESTREAM), "restore", "-o", out.toString(),
                    "file://" + context.getProperty(BACKUP_DIR)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + out, new Properties());
                    Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
                return rs.next() ? rs.getString(1) : null;
            }
        } finally {
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }
}

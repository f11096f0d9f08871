package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
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
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.zrm.it.ChangesClient.Transaction;

/**
 * Restore at start-up with the real litestream v0.3.13. "Node A" (the pipeline) backs the replica
 * up and is stopped (change streamer, litestream and replicator bundles), its replica file is
 * deleted, upstream writes go on; "node B" (the same bundles started again, same upstream, change
 * DB and backup URL) restores the replica instead of re-syncing it: it keeps A's replicaVersion,
 * catches up from the change log and streams, and a WebSocket subscriber that was on A resumes at
 * its watermark with no WrongReplicaVersion, no gap and no duplicate.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class LitestreamRestoreIT {

    private static final List<String> NODE_BUNDLES = List.of("org.zrm.replicator", "org.zrm.litestream",
            "org.zrm.changestreamer");

    @Inject
    private BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        Path dir = Files.createTempDirectory("zrm-it-litestream-restore-");
        Option[] options = LitestreamBackupIT.options(dir);
        // With a backup URL the change streamer restores a missing replica before the source starts.
        Files.writeString(dir.resolve("conf/org.zrm.changestreamer.cfg"), "litestream.backupURL = file://"
                + dir.resolve("backup") + "\n", StandardOpenOption.APPEND);
        return options;
    }


    private void insert(Pipeline pipeline, int from, int to) throws Exception {
        for (int i = from; i <= to; i++) {
            pipeline.exec("INSERT INTO it_backup VALUES (" + i + ")");
        }
    }

    private static List<Long> ids(List<Transaction> txs) {
        List<Long> ids = new ArrayList<>();
        txs.forEach(t -> ids.addAll(t.ids()));
        return ids;
    }

    @Test
    public void aNewNodeRestoresKeepsTheReplicaVersionAndSubscribersResume() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        String replicaVersion = pipeline.awaitStreaming();
        JsonNode running = pipeline.awaitStatus("litestream running with a first snapshot", s -> {
            JsonNode l = s.path("sections").path("litestream");
            return "RUNNING".equals(l.path("state").asText()) && l.hasNonNull("firstSnapshotAt");
        });
        long litestreamPid = running.path("sections").path("litestream").path("pid").asLong();

        insert(pipeline, 1, 5);
        String w5 = pipeline.awaitStoredInsert("it_backup", 5);
        ChangesClient onA = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-restore-sub", replicaVersion, w5)));
        assertEquals("status", onA.awaitFirstFrame().type());
        insert(pipeline, 6, 8);
        List<Transaction> fromA = onA.transactions(3);
        assertEquals(List.of(6L, 7L, 8L), ids(fromA));
        String resumeAt = fromA.get(2).commitWatermark();
        onA.close();
        pipeline.awaitReplicaAt(resumeAt);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!"8".equals(LitestreamBackupIT.restoredQuery(context, "SELECT count(*) FROM it_backup"))) {
            assertTrue("rows 1..8 did not reach the backup", System.nanoTime() < deadline);
            TimeUnit.MILLISECONDS.sleep(300); // the next sync interval
        }

        // Node A goes away; its replica file with it.
        for (String bsn : NODE_BUNDLES) {
            Bundles.named(context, bsn).stop();
        }
        ProcessHandle.of(litestreamPid).ifPresent(p -> p.onExit().join());
        Path replica = Path.of(context.getProperty(ZrmRuntimeOptions.REPLICA_FILE));
        for (String suffix : new String[] {"", "-wal", "-shm"}) {
            Files.deleteIfExists(replica.resolveSibling(replica.getFileName() + suffix));
        }
        insert(pipeline, 9, 10); // written while no node runs: in the slot, not yet in the change log

        // Node B: same upstream, change DB and backup URL.
        for (int i = NODE_BUNDLES.size() - 1; i >= 0; i--) {
            Bundles.named(context, NODE_BUNDLES.get(i)).start();
        }
        assertEquals("node B keeps A's replicaVersion", replicaVersion, pipeline.awaitStreaming());
        JsonNode restored = pipeline.awaitStatus("the restore is reported", s ->
                "RESTORED".equals(s.path("sections").path("litestream").path("restore").path("state").asText()));
        JsonNode restore = restored.path("sections").path("litestream").path("restore");
        assertTrue(restore.toString(), restore.path("bytes").asLong() > 0);
        try (var c = pipeline.replica(); var s = c.createStatement();
                var rs = s.executeQuery("SELECT replicaVersion FROM \"_zero.replicationConfig\"")) {
            assertTrue(rs.next());
            assertEquals(replicaVersion, rs.getString(1));
        }
        pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_backup", 10));
        try (var c = pipeline.replica(); var s = c.createStatement();
                var rs = s.executeQuery("SELECT count(*) FROM it_backup")) {
            assertTrue(rs.next());
            assertEquals("caught up from the change log", 10, rs.getInt(1));
        }

        // The subscriber that was on A resumes on B where it left off.
        ChangesClient onB = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-restore-sub", replicaVersion, resumeAt)));
        assertEquals(onB.history(), "status", onB.awaitFirstFrame().type());
        insert(pipeline, 11, 11);
        List<Transaction> fromB = onB.transactions(3);
        assertEquals("no gap, no duplicate", List.of(9L, 10L, 11L), ids(fromB));
        for (Transaction t : fromB) {
            assertTrue(t.commitWatermark() + " after " + resumeAt, t.commitWatermark().compareTo(resumeAt) > 0);
        }
        onB.close();
        assertTrue(pipeline.status().path("healthy").asBoolean());
    }
}

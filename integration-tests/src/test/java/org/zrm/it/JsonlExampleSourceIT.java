package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleListener;
import org.osgi.util.tracker.ServiceTracker;
import org.zrm.changesource.ChangeSource;
import org.zrm.watermark.LexiVersion;

/**
 * The example third-party source ({@code examples/org.zrm.example.jsonl}) deployed live into the
 * shipped runtime, which starts on the {@code pg} source: its jar is dropped into the deploy
 * folder, its {@code .cfg} written and {@code changeSource.target} edited to select it; the
 * replica is re-synced from its directory and a WebSocket subscriber receives its transactions;
 * the jar is replaced while a writer appends, and the subscriber's sequence and the replica have
 * every transaction exactly once; finally the target is set back to {@code pg}, which resets the
 * replica to a fresh Postgres sync and leaves the runtime healthy.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class JsonlExampleSourceIT {

    /** Framework property with the example bundle's jar, built by the examples module of this reactor. */
    static final String EXAMPLE_JAR = "zrm.it.example.jsonl.jar";
    private static final String STREAMER_CFG = "org.zrm.changestreamer.cfg";
    private static final String BSN = "org.zrm.example.jsonl";
    private static final long WAIT_SECONDS = 90;

    @Inject
    private BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        Path work = Files.createTempDirectory("zrm-it-jsonl-");
        Option[] options = ZrmRuntimeOptions.streamingOptions(work,
                "CREATE TABLE it_pg_again (id int8 PRIMARY KEY, label text)");
        String jar = System.getProperty(EXAMPLE_JAR);
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("no example bundle at " + jar + "; build examples/org.zrm.example.jsonl first");
        }
        // A terminal stop would end the framework under the test; /status reports it instead.
        Files.writeString(work.resolve("conf").resolve(STREAMER_CFG), "exitOnTerminalStop = false\n",
                StandardOpenOption.APPEND);
        Option[] all = Arrays.copyOf(options, options.length + 1);
        all[options.length] = systemProperty(EXAMPLE_JAR).value(jar);
        return all;
    }

    private static String wm(int file, long line) {
        return LexiVersion.encode(((long) file << 32) | line);
    }

    private static String insert(long id, String label) {
        return "{\"changes\":[{\"op\":\"insert\",\"table\":\"public.it_items\",\"row\":{\"id\":" + id
                + ",\"label\":\"" + label + "\"}}]}\n";
    }

    @Test
    public void deployedSelectedUpdatedLiveAndSwitchedBackToPg() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        String pgVersion = pipeline.awaitStreaming();
        Path config = Path.of(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR));
        Path deploy = Path.of(context.getProperty(ZrmRuntimeOptions.DEPLOY_DIR));
        Path replica = Path.of(context.getProperty(ZrmRuntimeOptions.REPLICA_FILE));
        Path changes = Files.createDirectories(replica.resolveSibling("jsonl-changes"));
        Files.writeString(changes.resolve("schema.json"), "{\"id\":\"it-dir-1\",\"tables\":[{\"schema\":\"public\","
                + "\"name\":\"it_items\",\"columns\":{\"id\":\"int8\",\"label\":\"text\"},\"primaryKey\":[\"id\"]}]}");
        Files.writeString(changes.resolve("changes-000001.jsonl"), insert(1, "one") + insert(2, "two"));

        // (1) Deploy: the jar into the deploy folder, its configuration into the conf folder.
        writeCfg(config, "org.zrm.example.jsonl.cfg", "directory = " + changes + "\nreplica.file = " + replica
                + "\nrecheckIntervalMs = 1000\n");
        Path deployed = deploy.resolve("org.zrm.example.jsonl.jar");
        copyInto(Path.of(context.getProperty(EXAMPLE_JAR)), deployed);
        ServiceTracker<ChangeSource, ChangeSource> tracker = new ServiceTracker<>(context, context.createFilter(
                "(&(objectClass=" + ChangeSource.class.getName() + ")(" + ChangeSource.TYPE + "=jsonl))"), null);
        tracker.open();
        try {
            assertNotNull("the jsonl source registered", tracker.waitForService(TimeUnit.SECONDS.toMillis(WAIT_SECONDS)));
        } finally {
            tracker.close();
        }
        // ... and the selection: one line of the streamer's .cfg.
        String original = Files.readString(config.resolve(STREAMER_CFG));
        writeCfg(config, STREAMER_CFG, original + "changeSource.target = (zrm.changesource.type=jsonl)\n");

        // (2) The replica is synced from the stream (the pg replica is not this source's: auto-reset).
        String snapshot = wm(1, 2);
        pipeline.awaitStatus("the streamer on the jsonl source", s -> snapshot.equals(
                s.path("sections").path("changestreamer").path("replicaVersion").asText())
                && "streaming".equals(s.path("sections").path("changestreamer").path("state").asText()));
        pipeline.awaitReplicaAt(snapshot);
        try (Connection c = pipeline.replica()) {
            assertEquals(List.of(List.of("1", "one"), List.of("2", "two")),
                    Pipeline.rows(c, "SELECT id, label FROM it_items ORDER BY id"));
            assertEquals(List.of(List.of(snapshot)), Pipeline.rows(c, "SELECT replicaVersion FROM \"_zero.replicationConfig\""));
        }
        Subscriber sub = new Subscriber(pipeline, snapshot);
        append(changes, 1, insert(3, "three"));
        sub.collect(1);
        assertEquals(List.of(wm(1, 3) + "=[3]"), sub.seen);

        // (3) The bundle is updated (jar replaced) while a writer appends 40 transactions, rotating files.
        CountDownLatch updated = new CountDownLatch(1);
        BundleListener listener = e -> {
            if (e.getType() == BundleEvent.UPDATED && BSN.equals(e.getBundle().getSymbolicName())) {
                updated.countDown();
            }
        };
        context.addBundleListener(listener);
        List<String> expected = new ArrayList<>(List.of(wm(1, 3) + "=[3]"));
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        CountDownLatch halfWritten = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; i < 40; i++) {
                    long id = 4 + i;
                    int file = i < 20 ? 1 : 2;
                    append(changes, file, insert(id, "live " + id));
                    if (i == 10) {
                        halfWritten.countDown();
                    }
                    TimeUnit.MILLISECONDS.sleep(50); // a writer's pace, so the update lands among the appends
                }
            } catch (Throwable t) {
                writerFailed.set(t);
            } finally {
                halfWritten.countDown();
            }
        }, "it-jsonl-writer");
        for (int i = 0; i < 40; i++) {
            expected.add((i < 20 ? wm(1, 4 + i) : wm(2, i - 19)) + "=[" + (4 + i) + "]");
        }
        writer.start();
        try {
            assertTrue(halfWritten.await(WAIT_SECONDS, TimeUnit.SECONDS));
            copyInto(Path.of(context.getProperty(EXAMPLE_JAR)), deployed);
            assertTrue("the example bundle updated from the deploy folder", updated.await(WAIT_SECONDS, TimeUnit.SECONDS));
        } finally {
            writer.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            context.removeBundleListener(listener);
        }
        assertEquals(null, writerFailed.get());
        sub.collect(41);
        assertEquals("every transaction once, in order, across the update", expected, sub.seen);
        pipeline.awaitReplicaAt(wm(2, 20));
        try (Connection c = pipeline.replica()) {
            List<List<String>> rows = Pipeline.rows(c, "SELECT count(*), min(id), max(id), count(DISTINCT id) FROM it_items");
            assertEquals(List.of(List.of("43", "1", "43", "43")), rows);
        }
        // Acks reached the directory's acked.json (written within the recheck bound of an ack).
        awaitFileContains(changes.resolve("acked.json"), "\"line\":20");
        sub.close();

        // (4) Back to pg by configuration: the replica is not pg's, so the runtime resets to a fresh pg sync.
        writeCfg(config, STREAMER_CFG, original);
        JsonNode back = pipeline.awaitStatus("the streamer back on pg and healthy", s -> {
            JsonNode cs = s.path("sections").path("changestreamer");
            return "streaming".equals(cs.path("state").asText()) && cs.hasNonNull("replicaVersion")
                    && !snapshot.equals(cs.path("replicaVersion").asText())
                    && "REPLICATING".equals(s.path("sections").path("replicator").path("phase").asText())
                    && s.path("healthy").asBoolean();
        });
        String pgAgain = back.path("sections").path("changestreamer").path("replicaVersion").asText();
        assertNotEquals("a new replica version (a re-sync), not the first pg one", pgVersion, pgAgain);
        pipeline.exec("INSERT INTO it_pg_again VALUES (1, 'from pg again')");
        pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_pg_again", 1));
        try (Connection c = pipeline.replica()) {
            assertEquals(List.of(List.of("1", "from pg again")), Pipeline.rows(c, "SELECT id, label FROM it_pg_again"));
            assertEquals("the jsonl tables went with the reset", List.of(),
                    Pipeline.rows(c, "SELECT name FROM sqlite_master WHERE name = 'it_items'"));
        }
    }

    /** A WebSocket subscriber that records {@code watermark=[ids]} per transaction and reconnects if the socket ends. */
    private static final class Subscriber {
        final Pipeline pipeline;
        final String replicaVersion;
        final List<String> seen = new ArrayList<>();
        String last;
        ChangesClient client;

        Subscriber(Pipeline pipeline, String replicaVersion) throws Exception {
            this.pipeline = pipeline;
            this.replicaVersion = replicaVersion;
            this.last = replicaVersion;
            connect();
        }

        private void connect() throws Exception {
            client = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                    ChangesClient.query("it-jsonl-sub", replicaVersion, last)));
        }

        void collect(int total) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (seen.size() < total) {
                try {
                    ChangesClient.Transaction t = client.nextTransaction();
                    seen.add(t.commitWatermark() + "=" + t.ids());
                    last = t.commitWatermark();
                } catch (AssertionError e) {
                    // The stream of a replaced source may end subscriptions; a subscriber reconnects
                    // from its last commit (a transaction cut off by the close is received again whole).
                    if (!client.isClosed() || System.nanoTime() > deadline) {
                        throw e;
                    }
                    connect();
                }
            }
        }

        void close() {
            client.close();
        }
    }

    private static void append(Path dir, int file, String text) throws IOException {
        Files.writeString(dir.resolve(String.format("changes-%06d.jsonl", file)), text, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private static void awaitFileContains(Path file, String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = Files.exists(file) ? Files.readString(file) : null;
            if (seen != null && seen.contains(text)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(100); // a file written by another bundle: nothing to wait on
        }
        throw new AssertionError(file + " does not contain " + text + " within " + WAIT_SECONDS + " s: " + seen);
    }

    /** Copied beside and renamed, so the deploy folder never sees half a jar; the new mtime makes it an update. */
    private static void copyInto(Path jar, Path target) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".part");
        Files.copy(jar, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.setLastModifiedTime(tmp, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()));
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void writeCfg(Path configDir, String name, String text) throws IOException {
        Path tmp = configDir.resolve(name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, configDir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}

package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.zrm.it.ChangesClient.Close;
import org.zrm.it.ChangesClient.Frame;
import org.zrm.it.ChangesClient.Transaction;

/**
 * The change streamer of the shipped runtime end to end, against a real PostgreSQL and a real
 * SQLite replica: upstream commits flow through the change source, the streamer and its
 * WebSocket endpoint to protocol-v6 subscribers (live and via catch-up from the change log) and
 * through the in-process backup replicator into the replica file. Each test uses its own upstream
 * table; the tests of this class share one runtime and run one after another.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ChangeStreamerEndToEndIT {

    private static final int SUBSCRIBERS = 200;
    private static final int BURST_TRANSACTIONS = 20;
    /** Marker rows for {@link Pipeline#settledWatermark}. */
    private static final String SETTLE = "it_settle";

    @Inject
    private BundleContext context;

    private Pipeline pipeline;
    private String replicaVersion;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-streamer-"),
                "CREATE TABLE it_items (id int4 PRIMARY KEY, label text, qty int8)",
                "CREATE TABLE it_catchup (id int4 PRIMARY KEY, label text)",
                "CREATE TABLE it_reconnect (id int4 PRIMARY KEY)",
                "CREATE TABLE it_acks (id int4 PRIMARY KEY)",
                "CREATE TABLE it_burst (id int4 PRIMARY KEY)",
                "CREATE TABLE " + SETTLE + " (id int8 PRIMARY KEY)");
    }

    @Before
    public void awaitPipeline() throws Exception {
        pipeline = new Pipeline(context);
        replicaVersion = pipeline.awaitStreaming();
    }

    @Test
    public void upstreamChangesReachSubscriberAndReplicaFile() throws Exception {
        // Start after everything already stored, so exactly the transactions below arrive.
        String start = pipeline.settledWatermark(SETTLE);
        ChangesClient sub = ChangesClient.connect(pipeline.http(),
                ChangesClient.changesUri(pipeline.port(), 6, ChangesClient.query("it-e2e", replicaVersion, start)));
        assertEquals("status", sub.awaitFirstFrame().type());
        assertEquals(1, sub.awaitFirstFrame().id());

        pipeline.exec("INSERT INTO it_items VALUES (1, 'one', 10), (2, 'two', 9007199254740993)",
                "UPDATE it_items SET label = 'uno', qty = 11 WHERE id = 1",
                "DELETE FROM it_items WHERE id = 2");
        List<Transaction> txs = sub.transactions(3);

        Transaction insert = txs.get(0);
        assertEquals(insert.data().toString(), 2, insert.data().size());
        assertRow(insert.data().get(0), "insert", "new", "{\"id\":1,\"label\":\"one\",\"qty\":10}");
        assertRow(insert.data().get(1), "insert", "new", "{\"id\":2,\"label\":\"two\",\"qty\":9007199254740993}");
        // (The expected JSON is compared as a tree: bigint beyond 2^53 must arrive as a bare number,
        // digit for digit, spec §2.8; a string or a rounded double would not be equal.)
        Transaction update = txs.get(1);
        assertEquals(1, update.data().size());
        assertRow(update.data().get(0), "update", "new", "{\"id\":1,\"label\":\"uno\",\"qty\":11}");
        assertTrue(update.data().get(0).toString(), update.data().get(0).path("key").isNull());
        Transaction delete = txs.get(2);
        assertEquals(1, delete.data().size());
        assertRow(delete.data().get(0), "delete", "key", "{\"id\":2}");
        for (Transaction tx : txs) {
            assertEquals("begin", tx.begin().get(1).get("tag").asText());
            assertEquals("commit", tx.commit().get(1).get("tag").asText());
            assertTrue(tx.commitWatermark() + " after " + start, tx.commitWatermark().compareTo(start) > 0);
        }
        assertTrue(txs.get(0).commitWatermark().compareTo(txs.get(1).commitWatermark()) < 0);
        assertTrue(txs.get(1).commitWatermark().compareTo(txs.get(2).commitWatermark()) < 0);
        String last = txs.get(2).commitWatermark();

        // The same transactions were made durable in the change log, at the same watermarks.
        pipeline.awaitStored(last);
        List<String> stored = pipeline.storedCommitWatermarks();
        for (Transaction tx : txs) {
            assertTrue(tx.commitWatermark() + " not in " + stored, stored.contains(tx.commitWatermark()));
        }

        // The backup replicator applied them to the replica file, up to exactly the last commit.
        pipeline.awaitReplicaAt(last);
        assertEquals(last, pipeline.replicaStateVersion());
        try (Connection replica = pipeline.replica()) {
            assertEquals(List.of(List.of("1", "uno", "11")),
                    Pipeline.rows(replica, "SELECT id, label, qty FROM it_items ORDER BY id"));
        }

        JsonNode status = pipeline.awaitStatus("subscriber it-e2e acked " + last, s -> {
            for (JsonNode subscriber : s.path("sections").path("changestreamer").path("subscribers")) {
                if ("it-e2e".equals(subscriber.path("id").asText())) {
                    return last.equals(subscriber.path("acked").asText());
                }
            }
            return false;
        });
        JsonNode streamer = status.path("sections").path("changestreamer");
        assertEquals(replicaVersion, streamer.path("replicaVersion").asText());
        assertTrue(streamer.toString(), streamer.path("lastStoredWatermark").asText().compareTo(last) >= 0);
        JsonNode mine = null;
        for (JsonNode subscriber : streamer.path("subscribers")) {
            if ("it-e2e".equals(subscriber.path("id").asText())) {
                mine = subscriber;
            }
        }
        assertNotNull(streamer.toString(), mine);
        assertEquals("serving", mine.path("mode").asText());
        assertEquals(6, mine.path("protocolVersion").asInt());
        assertEquals(last, mine.path("watermark").asText());
        JsonNode replicator = status.path("sections").path("replicator");
        assertEquals(replicator.toString(), "backup", replicator.path("mode").asText());
        assertEquals(replicator.toString(), "in-process", replicator.path("changeStreamer").asText());
        assertEquals(replicator.toString(), replicaVersion, replicator.path("replicaVersion").asText());
        assertTrue(replicator.toString(), replicator.path("connected").asBoolean());
        assertTrue(replicator.toString(), replicator.path("stateVersion").asText().compareTo(last) >= 0);

        String metrics = pipeline.metrics();
        List<String> lines = metrics.lines().filter(l -> l.startsWith("zrm_changestreamer_")).toList();
        assertFalse(metrics, lines.isEmpty());
        long transactions = lines.stream().filter(l -> l.startsWith("zrm_changestreamer_transactions_total"))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst()
                .orElseThrow(() -> new AssertionError("no zrm_changestreamer_transactions_total in\n" + metrics));
        assertTrue(metrics, transactions >= 3);
        sub.close();
    }

    @Test
    public void subscriberBehindIsCaughtUpFromTheChangeLogThenGetsLiveChanges() throws Exception {
        int behind = 5;
        String lastCommitted = null;
        for (int id = 1; id <= behind; id++) {
            pipeline.exec("INSERT INTO it_catchup VALUES (" + id + ", 'row " + id + "')");
        }
        lastCommitted = pipeline.awaitStoredInsert("it_catchup", behind);
        // Everything the subscriber is behind by is durable now: it must come from the change log.
        // The log starts with an empty transaction at the replica version itself (the lineage's
        // anchor); a subscriber at that watermark gets everything after it.
        List<String> expected = pipeline.storedCommitWatermarks().stream()
                .filter(w -> w.compareTo(replicaVersion) > 0).toList();
        assertTrue(expected.toString(), expected.contains(lastCommitted));

        ChangesClient sub = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-catchup", replicaVersion, replicaVersion)));
        assertEquals("status", sub.awaitFirstFrame().type());
        List<Transaction> caughtUp;
        try {
            caughtUp = sub.transactions(expected.size());
        } catch (AssertionError e) {
            // (No cause: Pax Exam reports the cause instead of the wrapper.)
            throw new AssertionError("expected the " + expected.size() + " stored commits " + expected + " after "
                    + replicaVersion + ": " + e.getMessage() + "\nchange log:\n" + changeLogSummary());
        }
        assertEquals("catch-up must replay exactly the stored transactions, in order", expected,
                caughtUp.stream().map(Transaction::commitWatermark).toList());
        List<Long> catchupIds = caughtUp.stream().filter(tx -> touches(tx, "it_catchup"))
                .flatMap(tx -> tx.ids().stream()).toList();
        assertEquals(LongStream.rangeClosed(1, behind).boxed().toList(), catchupIds);

        pipeline.exec("INSERT INTO it_catchup VALUES (" + (behind + 1) + ", 'live')");
        Transaction live = sub.nextTransaction();
        assertEquals(List.of((long) behind + 1), live.ids());
        assertTrue(live.commitWatermark() + " after " + lastCommitted, live.commitWatermark().compareTo(lastCommitted) > 0);
        assertTrue(live.commitWatermark(), expected.get(expected.size() - 1).compareTo(live.commitWatermark()) < 0);
        assertNextIsMarker(sub, "it_catchup", behind + 2);
        sub.close();
    }

    @Test
    public void invalidRequestsAreClosedWithProtocolError() throws Exception {
        HttpClient http = pipeline.http();
        ChangesClient noId = ChangesClient.connect(http, ChangesClient.changesUri(pipeline.port(), 6,
                "replicaVersion=" + replicaVersion + "&watermark=" + replicaVersion + "&mode=serving&initial=false&taskID="));
        assertEquals(new Close(1002, "Error: invalid querystring - missing id"), noId.awaitClose());

        ChangesClient v7 = ChangesClient.connect(http, ChangesClient.changesUri(pipeline.port(), 7,
                ChangesClient.query("it-v7", replicaVersion, replicaVersion)));
        assertEquals(new Close(1002, "Error: Cannot service client at protocol v7. Supported protocols: [v1 ... v6]"),
                v7.awaitClose());
        assertTrue(noId.drain().isEmpty());
        assertTrue(v7.drain().isEmpty());
    }

    @Test
    public void wrongReplicaVersionGetsAnErrorFrameOfType1() throws Exception {
        String wrong = "01";
        ChangesClient sub = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-wrong-version", wrong, wrong)));
        Frame first = sub.next();
        assertEquals(first.raw(), "error", first.type());
        assertEquals(first.raw(), 1, first.msg().get(1).get("type").asInt());
        assertEquals(first.raw(), "current replica version is " + replicaVersion + " (requested " + wrong + ")",
                first.msg().get(1).get("message").asText());
        // Acknowledged (the client acks automatically), the error ends the subscription.
        Close close = sub.awaitClose();
        assertEquals(close.toString(), 1000, close.code());
    }

    @Test
    public void garbageAckClosesOnlyThatConnection() throws Exception {
        String start = pipeline.settledWatermark(SETTLE);
        ChangesClient bad = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-garbage", replicaVersion, start)));
        ChangesClient good = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-good", replicaVersion, start)));
        assertEquals("status", bad.awaitFirstFrame().type());
        assertEquals("status", good.awaitFirstFrame().type());

        bad.send("{\"ack\":\"not a number\"}");
        Close close = bad.awaitClose();
        assertEquals(close.toString(), 1002, close.code());
        assertTrue(close.toString(), close.reason().startsWith("Error: invalid ack"));

        pipeline.exec("INSERT INTO it_acks VALUES (1)", "INSERT INTO it_acks VALUES (2)");
        List<Transaction> txs = good.transactions(2);
        assertEquals(List.of(1L), txs.get(0).ids());
        assertEquals(List.of(2L), txs.get(1).ids());
        assertFalse(good.isClosed());
        // An ack for a frame that was never sent is a protocol error too (H4: not silently ignored).
        good.send("{\"ack\":100000}");
        Close unexpected = good.awaitClose();
        assertEquals(unexpected.toString(), 1002, unexpected.code());
        assertTrue(unexpected.toString(), unexpected.reason().contains("Unexpected ack"));
    }

    @Test
    public void reconnectFromTheLastWatermarkResumesWithoutGapOrDuplicate() throws Exception {
        String start = pipeline.settledWatermark(SETTLE);
        String query = ChangesClient.query("it-reconnect", replicaVersion, start);
        ChangesClient first = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6, query));
        pipeline.exec("INSERT INTO it_reconnect VALUES (1)", "INSERT INTO it_reconnect VALUES (2)");
        List<Transaction> before = first.transactions(2);
        assertEquals(List.of(1L), before.get(0).ids());
        assertEquals(List.of(2L), before.get(1).ids());
        String resumeAt = before.get(1).commitWatermark();
        first.abort();

        // Committed while the subscriber is away: it gets them through catch-up ...
        pipeline.exec("INSERT INTO it_reconnect VALUES (3)", "INSERT INTO it_reconnect VALUES (4)");
        pipeline.awaitStoredInsert("it_reconnect", 4);
        ChangesClient again = ChangesClient.connect(pipeline.http(), ChangesClient.changesUri(pipeline.port(), 6,
                ChangesClient.query("it-reconnect", replicaVersion, resumeAt)));
        assertEquals("status", again.awaitFirstFrame().type());
        List<Transaction> caughtUp = again.transactions(2);
        // ... then a live one.
        pipeline.exec("INSERT INTO it_reconnect VALUES (5)");
        Transaction live = again.nextTransaction();

        List<Transaction> after = new ArrayList<>(caughtUp);
        after.add(live);
        assertEquals(List.of(List.of(3L), List.of(4L), List.of(5L)), after.stream().map(Transaction::ids).toList());
        String previous = resumeAt;
        for (Transaction tx : after) {
            assertTrue(tx.commitWatermark() + " after " + previous, tx.commitWatermark().compareTo(previous) > 0);
            previous = tx.commitWatermark();
        }
        assertNextIsMarker(again, "it_reconnect", 6);
        again.close();
    }

    @Test
    public void manyConcurrentSubscribersAllReceiveABurst() throws Exception {
        String start = pipeline.settledWatermark(SETTLE);
        HttpClient http = HttpClient.newHttpClient();
        List<CompletableFuture<ChangesClient>> connecting = new ArrayList<>();
        for (int i = 0; i < SUBSCRIBERS; i++) {
            connecting.add(ChangesClient.connectAsync(http, ChangesClient.changesUri(pipeline.port(), 6,
                    ChangesClient.query("it-many-" + i, replicaVersion, start)), true));
        }
        CompletableFuture.allOf(connecting.toArray(CompletableFuture[]::new))
                .get(ChangesClient.WAIT.toSeconds(), TimeUnit.SECONDS);
        List<ChangesClient> subs = connecting.stream().map(CompletableFuture::join).toList();
        try {
            // Every subscription is registered (its status frame arrived) before the burst starts.
            for (ChangesClient sub : subs) {
                assertEquals("status", sub.awaitFirstFrame().type());
            }
            String[] burst = new String[BURST_TRANSACTIONS];
            for (int i = 0; i < BURST_TRANSACTIONS; i++) {
                burst[i] = "INSERT INTO it_burst VALUES (" + (i + 1) + ")";
            }
            pipeline.exec(burst);
            List<Long> expectedIds = LongStream.rangeClosed(1, BURST_TRANSACTIONS).boxed().toList();
            Set<List<String>> watermarkSequences = new HashSet<>();
            for (int i = 0; i < subs.size(); i++) {
                List<Transaction> txs = subs.get(i).transactions(BURST_TRANSACTIONS);
                assertEquals("subscriber " + i, expectedIds, txs.stream().flatMap(tx -> tx.ids().stream()).toList());
                watermarkSequences.add(txs.stream().map(Transaction::commitWatermark).toList());
            }
            assertEquals("every subscriber saw the same commits: " + watermarkSequences, 1, watermarkSequences.size());
            int listed = 0;
            for (JsonNode s : pipeline.status().path("sections").path("changestreamer").path("subscribers")) {
                listed += s.path("id").asText().startsWith("it-many-") ? 1 : 0;
            }
            assertEquals("subscribers in /status", SUBSCRIBERS, listed);
        } finally {
            subs.forEach(ChangesClient::abort);
        }
    }

    private String changeLogSummary() throws Exception {
        return String.join("\n", pipeline.queryStrings("SELECT watermark || ' ' || pos || ' ' || left(change::text, 160)"
                + " FROM " + Pipeline.CDC + ".\"changeLog\" ORDER BY watermark, pos"));
    }

    private static boolean touches(Transaction tx, String table) {
        return tx.data().stream().anyMatch(d -> table.equals(d.path("relation").path("name").asText()));
    }

    /**
     * Commits one more row and checks it is the very next transaction: a duplicate (or anything
     * else) still queued for the subscriber would arrive before it.
     */
    private void assertNextIsMarker(ChangesClient sub, String table, long id) throws Exception {
        pipeline.exec("INSERT INTO " + table + " VALUES (" + id + ")");
        Transaction next = sub.nextTransaction();
        assertEquals("the next transaction after the checked ones", List.of(id), next.ids());
    }

    private static void assertRow(JsonNode change, String tag, String field, String expectedJson) throws IOException {
        assertEquals(change.toString(), tag, change.path("tag").asText());
        assertEquals(change.toString(), "public", change.path("relation").path("schema").asText());
        assertEquals(change.toString(), "it_items", change.path("relation").path("name").asText());
        assertEquals(change.toString(), new ObjectMapper().readTree(expectedJson), change.get(field));
    }
}

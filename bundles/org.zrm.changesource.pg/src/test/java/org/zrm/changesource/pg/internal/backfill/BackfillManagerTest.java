package org.zrm.changesource.pg.internal.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.stream.ChangeStreamMultiplexer;
import org.zrm.changesource.pg.internal.stream.ChangeStreamMultiplexer.Reservation;
import org.zrm.changesource.pg.internal.stream.MessageBuffer;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.watermark.StateVersion;

/**
 * Port of upstream {@code backfill-manager.test.ts} (spec §10), with a fake {@link BackfillStreamer}:
 * every case of the upstream file, with its exact expected stream.
 */
class BackfillManagerTest {

    private static final String REL = "{\"schema\":\"foo\",\"name\":\"bar\",\"rowKey\":{\"columns\":[\"a\"]}}";
    private static final String REQUEST = "{\"table\":{\"schema\":\"foo\",\"name\":\"bar\",\"metadata\":{\"rowKey\":"
            + "{\"a\":123}}},\"columns\":{\"a\":{\"id\":\"123\"},\"b\":{\"id\":\"234\"}}}";

    private final ProtocolCodec codec = new ProtocolCodec();
    private final MessageBuffer buffer = new MessageBuffer(10_000, 64L << 20, null);
    private final ChangeStreamMultiplexer changeStream = new ChangeStreamMultiplexer("123", buffer);
    private final Deque<Object> testStreams = new ArrayDeque<>();
    private final List<BackfillRequest> backfillRequests = Collections.synchronizedList(new ArrayList<>());
    private final List<FakeRun> runs = Collections.synchronizedList(new ArrayList<>());
    private final BackfillManager backfillManager = new BackfillManager("test", changeStream, this::open,
            JsonFormat.PARSED, Duration.ofMillis(10), Duration.ofMillis(50), new Random(7), System::nanoTime);

    BackfillManagerTest() {
        changeStream.addListener(backfillManager).addProducer(backfillManager);
    }

    @AfterEach
    void cancel() throws InterruptedException {
        changeStream.fail(new ChangeStreamClosedException("test over"));
        assertTrue(backfillManager.awaitTermination(Duration.ofSeconds(5)));
    }

    /** A run over fixed messages; records that it was closed. */
    static final class FakeRun implements BackfillRun {
        private final Iterator<DataOrSchemaChange> messages;
        private final String watermark;
        volatile boolean closed;

        FakeRun(List<DataOrSchemaChange> messages) {
            this.messages = messages.iterator();
            this.watermark = messages.isEmpty() ? "00" : "?";
        }

        @Override
        public String watermark() {
            return watermark;
        }

        @Override
        public DataOrSchemaChange next() {
            return messages.hasNext() ? messages.next() : null;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private BackfillRun open(BackfillRequest request) throws ChangeSourceException {
        backfillRequests.add(request);
        Object stream;
        synchronized (testStreams) {
            stream = testStreams.pollFirst();
        }
        assertNotNull(stream, "No more testStreams configured by test");
        if (stream instanceof ChangeSourceException e) {
            throw e;
        }
        @SuppressWarnings("unchecked")
        List<String> jsons = (List<String>) stream;
        List<DataOrSchemaChange> msgs = new ArrayList<>();
        for (String j : jsons) {
            msgs.add((DataOrSchemaChange) codec.decodeChange(j));
        }
        FakeRun run = new FakeRun(msgs);
        runs.add(run);
        return run;
    }

    private void stream(String... changes) {
        synchronized (testStreams) {
            testStreams.add(List.of(changes));
        }
    }

    private void failingStream(String message) {
        synchronized (testStreams) {
            testStreams.add(new ChangeSourceException(message));
        }
    }

    private static String backfill(String rel, String columns, String watermark, String rows) {
        return "{\"tag\":\"backfill\",\"relation\":" + rel + ",\"columns\":" + columns + ",\"watermark\":\"" + watermark
                + "\",\"rowValues\":" + rows + "}";
    }

    private static String completed(String rel, String columns, String watermark) {
        return "{\"tag\":\"backfill-completed\",\"relation\":" + rel + ",\"columns\":" + columns + ",\"watermark\":\""
                + watermark + "\"}";
    }

    private static String begin(String wm) {
        return "[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"" + wm + "\"}]";
    }

    private static String backfillBegin(String wm) {
        return "[\"begin\",{\"tag\":\"begin\",\"json\":\"p\",\"skipAck\":true},{\"commitWatermark\":\"" + wm + "\"}]";
    }

    private static String commit(String wm) {
        return "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"" + wm + "\"}]";
    }

    private static String data(String change) {
        return "[\"data\"," + change + "]";
    }

    private BackfillRequest request(String json) {
        return codec.decodeBackfillRequest(json);
    }

    private ChangeStreamMessage msg(String json) {
        return codec.decodeChangeStreamMessage(json);
    }

    /** Pushes one main-stream transaction (already reserved) and releases with its watermark. */
    private void mainTx(Reservation main, String watermark, String... changes) throws Exception {
        changeStream.push(main, msg(begin(watermark)), 64);
        for (String c : changes) {
            changeStream.push(main, msg(data(c)), 64);
        }
        changeStream.push(main, msg(commit(watermark)), 64);
        changeStream.release(main, watermark);
    }

    private void pushStatus(String watermark) {
        changeStream.pushStatus((ChangeStreamMessage.StatusMessage) msg(
                "[\"status\",{\"ack\":false},{\"watermark\":\"" + watermark + "\"}]"), 64);
    }

    private List<String> drain(int n) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ChangeStreamMessage m = buffer.poll(Duration.ofSeconds(10));
            assertNotNull(m, "message " + i + " of " + n + " after " + out);
            out.add(codec.encode(m));
        }
        return out;
    }

    private void expectChanges(String... expected) throws Exception {
        List<String> want = new ArrayList<>();
        for (String e : expected) {
            want.add(codec.encode(msg(e)));
        }
        assertEquals(want, drain(expected.length));
    }

    private void expectRequests(String... expected) {
        List<Object> want = new ArrayList<>();
        for (String e : expected) {
            want.add(codec.decodeValue(codec.encode(request(e))));
        }
        List<Object> got = new ArrayList<>();
        synchronized (backfillRequests) {
            for (BackfillRequest r : backfillRequests) {
                got.add(codec.decodeValue(codec.encode(r)));
            }
        }
        assertEquals(want, got); // maps compare without regard to member order, as toMatchObject does
    }

    private void awaitWaiter() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (changeStream.waiterDelayNanos() < 0) {
            assertTrue(System.nanoTime() < deadline, "the backfill never asked for the stream");
            Thread.onSpinWait();
        }
    }

    private static final String TWO_BATCHES_AND_DONE_B1 = backfill(REL, "[\"b\"]", "130", "[[1,2],[3,4]]");
    private static final String TWO_BATCHES_AND_DONE_B2 = backfill(REL, "[\"b\"]", "130", "[[5,6],[7,8]]");
    private static final String DONE_130 = completed(REL, "[\"b\"]", "130");

    @Test
    void backfillInitiatedByChangeStreamerRequest() throws Exception {
        stream(TWO_BATCHES_AND_DONE_B1, TWO_BATCHES_AND_DONE_B2, DONE_130);
        backfillManager.run("123", List.of(request(REQUEST)));
        pushStatus("130");
        expectChanges(backfillBegin("123.01"), data(TWO_BATCHES_AND_DONE_B1), data(TWO_BATCHES_AND_DONE_B2),
                commit("123.01"), backfillBegin("130"), data(DONE_130), commit("130"));
        expectRequests(REQUEST);
    }

    private static final String CREATE_FOO_BAR = "{\"tag\":\"create-table\",\"spec\":{\"schema\":\"foo\",\"name\":\"bar\","
            + "\"columns\":{\"a\":{\"dataType\":\"text\",\"pos\":0},\"b\":{\"dataType\":\"text\",\"pos\":1}}},"
            + "\"metadata\":{\"rowKey\":{\"a\":123}},\"backfill\":{\"a\":{\"id\":\"123\"},\"b\":{\"id\":\"234\"}}}";

    @Test
    void tableBackfillInitiatedByCreateTable() throws Exception {
        stream(TWO_BATCHES_AND_DONE_B1, TWO_BATCHES_AND_DONE_B2, DONE_130);
        backfillManager.run("123", List.of());
        Reservation main = changeStream.reserve("main");
        mainTx(main, "125", CREATE_FOO_BAR);
        pushStatus("130");
        expectChanges(begin("125"), data(CREATE_FOO_BAR), commit("125"), backfillBegin("125.01"),
                data(TWO_BATCHES_AND_DONE_B1), data(TWO_BATCHES_AND_DONE_B2), commit("125.01"), backfillBegin("130"),
                data(DONE_130), commit("130"));
        expectRequests(REQUEST);
    }

    @Test
    void columnBackfillInitiatedByAddColumn() throws Exception {
        stream(TWO_BATCHES_AND_DONE_B1, TWO_BATCHES_AND_DONE_B2, DONE_130);
        backfillManager.run("123", List.of());
        Reservation main = changeStream.reserve("main");
        String addColumn = "{\"tag\":\"add-column\",\"table\":{\"schema\":\"foo\",\"name\":\"bar\"},\"column\":{\"name\":"
                + "\"b\",\"spec\":{\"dataType\":\"text\",\"pos\":1}},\"tableMetadata\":{\"rowKey\":{\"a\":123}},"
                + "\"backfill\":{\"id\":\"789\"}}";
        mainTx(main, "130", addColumn);
        expectChanges(begin("130"), data(addColumn), commit("130"), backfillBegin("130.01"),
                data(TWO_BATCHES_AND_DONE_B1), data(TWO_BATCHES_AND_DONE_B2), data(DONE_130), commit("130.01"));
        expectRequests("{\"table\":{\"schema\":\"foo\",\"name\":\"bar\",\"metadata\":{\"rowKey\":{\"a\":123}}},"
                + "\"columns\":{\"b\":{\"id\":\"789\"}}}");
    }

    @Test
    void backfillMetadataUpdatedBySchemaChanges() throws Exception {
        String boofar = "{\"schema\":\"boo\",\"name\":\"far\",\"rowKey\":{\"columns\":[\"z\"]}}";
        stream(completed(boofar, "[\"d\",\"c\"]", "130"));
        backfillManager.run("123", List.of());
        Reservation main = changeStream.reserve("main");
        String fooBar = "{\"schema\":\"foo\",\"name\":\"bar\"}";
        mainTx(main, "125",
                CREATE_FOO_BAR.replace("\"foo\",\"name\":\"bar\"", "\"zoo\",\"name\":\"dar\""),
                CREATE_FOO_BAR,
                "{\"tag\":\"add-column\",\"table\":" + fooBar + ",\"column\":{\"name\":\"e\",\"spec\":{\"dataType\":"
                        + "\"text\",\"pos\":1}},\"tableMetadata\":{\"rowKey\":{\"a\":123}},\"backfill\":{\"id\":\"999\"}}",
                "{\"tag\":\"update-column\",\"table\":" + fooBar + ",\"old\":{\"name\":\"b\",\"spec\":{\"dataType\":"
                        + "\"text\",\"pos\":1}},\"new\":{\"name\":\"d\",\"spec\":{\"dataType\":\"text\",\"pos\":1}}}",
                "{\"tag\":\"add-column\",\"table\":" + fooBar + ",\"column\":{\"name\":\"c\",\"spec\":{\"dataType\":"
                        + "\"text\",\"pos\":1}},\"tableMetadata\":{\"rowKey\":{\"a\":123}},\"backfill\":{\"id\":\"765\"}}",
                "{\"tag\":\"drop-column\",\"table\":" + fooBar + ",\"column\":\"e\"}",
                "{\"tag\":\"update-column\",\"table\":" + fooBar + ",\"old\":{\"name\":\"a\",\"spec\":{\"dataType\":"
                        + "\"text\",\"pos\":1}},\"new\":{\"name\":\"z\",\"spec\":{\"dataType\":\"text\",\"pos\":1}}}",
                "{\"tag\":\"update-table-metadata\",\"table\":" + fooBar + ",\"old\":{\"rowKey\":{\"a\":123}},\"new\":"
                        + "{\"rowKey\":{\"z\":123}}}",
                "{\"tag\":\"rename-table\",\"old\":" + fooBar + ",\"new\":{\"schema\":\"boo\",\"name\":\"far\"}}",
                "{\"tag\":\"drop-table\",\"id\":{\"schema\":\"zoo\",\"name\":\"dar\"}}");
        pushStatus("130");
        List<String> all = drain(15);
        List<String> want = new ArrayList<>();
        for (String e : List.of(backfillBegin("130"), data(completed(boofar, "[\"d\",\"c\"]", "130")), commit("130"))) {
            want.add(codec.encode(msg(e)));
        }
        assertEquals(want, all.subList(12, 15));
        expectRequests("{\"table\":{\"schema\":\"boo\",\"name\":\"far\",\"metadata\":{\"rowKey\":{\"z\":123}}},"
                + "\"columns\":{\"c\":{\"id\":\"765\"},\"d\":{\"id\":\"234\"},\"z\":{\"id\":\"123\"}}}");
        assertEquals(List.of(), backfillManager.status(), "completed: nothing more is required");
    }

    @Test
    void backfillCanceledAndRetriedBecauseOfColumnDrop() throws Exception {
        stream(completed(REL, "[\"b\"]", "120"));
        stream(completed(REL, "[]", "130"));
        Reservation main = changeStream.reserve("main");
        // The manager starts the first request and waits for the main stream's reservation.
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill waits for the main stream's reservation
        String drop = "{\"tag\":\"drop-column\",\"table\":{\"schema\":\"foo\",\"name\":\"bar\"},\"column\":\"b\"}";
        mainTx(main, "125", drop);
        pushStatus("130");
        // The first run is canceled; only the changes of the updated request are streamed.
        expectChanges(begin("125"), data(drop), commit("125"), backfillBegin("130"),
                data(completed(REL, "[]", "130")), commit("130"));
        expectRequests(REQUEST, "{\"table\":{\"schema\":\"foo\",\"name\":\"bar\",\"metadata\":{\"rowKey\":"
                + "{\"a\":123}}},\"columns\":{\"a\":{\"id\":\"123\"}}}");
        assertTrue(runs.get(0).closed, "the canceled run was closed");
    }

    @Test
    void backfillCanceledAndRetriedBecauseOfTableRename() throws Exception {
        String renamed = "{\"schema\":\"boo\",\"name\":\"far\",\"rowKey\":{\"columns\":[\"a\"]}}";
        stream(completed(REL, "[\"a\",\"b\"]", "120"));
        stream(completed(renamed, "[\"a\",\"b\"]", "130"));
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill waits for the main stream's reservation
        String rename = "{\"tag\":\"rename-table\",\"old\":{\"schema\":\"foo\",\"name\":\"bar\"},\"new\":{\"schema\":"
                + "\"boo\",\"name\":\"far\"}}";
        mainTx(main, "125", rename);
        pushStatus("130");
        expectChanges(begin("125"), data(rename), commit("125"), backfillBegin("130"),
                data(completed(renamed, "[\"a\",\"b\"]", "130")), commit("130"));
        expectRequests(REQUEST, REQUEST.replace("\"schema\":\"foo\",\"name\":\"bar\"", "\"schema\":\"boo\",\"name\":\"far\""));
    }

    @Test
    void backfillCanceledAndRetriedBecauseOfTableMetadataUpdate() throws Exception {
        String relB = REL.replace("[\"a\"]", "[\"b\"]");
        stream(completed(REL, "[\"a\",\"b\"]", "120"));
        stream(completed(relB, "[\"a\",\"b\"]", "130"));
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill waits for the main stream's reservation
        String update = "{\"tag\":\"update-table-metadata\",\"table\":{\"schema\":\"foo\",\"name\":\"bar\"},\"old\":"
                + "{\"rowKey\":{\"a\":123}},\"new\":{\"rowKey\":{\"b\":234}}}";
        mainTx(main, "125", update);
        pushStatus("130");
        expectChanges(begin("125"), data(update), commit("125"), backfillBegin("130"),
                data(completed(relB, "[\"a\",\"b\"]", "130")), commit("130"));
        expectRequests(REQUEST, REQUEST.replace("{\"a\":123}", "{\"b\":234}"));
    }

    @Test
    void backfillCanceledAndRetriedBecauseARowsKeyIsUpdated() throws Exception {
        String first = backfill(REL, "[\"a\",\"b\"]", "130", "[[[1,2],[3,4]]]");
        String second = backfill(REL, "[\"a\",\"b\"]", "150", "[[[5,6],[3,4]]]");
        stream(first, completed(REL, "[\"a\",\"b\"]", "120"));
        stream(second, completed(REL, "[\"a\",\"b\"]", "130"));
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill waits for the main stream's reservation
        String update = "{\"tag\":\"update\",\"relation\":" + REL + ",\"key\":{\"a\":1},\"new\":{\"a\":5}}";
        mainTx(main, "140", update);
        expectChanges(begin("140"), data(update), commit("140"), backfillBegin("140.01"), data(second),
                data(completed(REL, "[\"a\",\"b\"]", "130")), commit("140.01"));
        expectRequests(REQUEST, REQUEST);
    }

    @Test
    void backfillCanceledBecauseOfTableDrop() throws Exception {
        stream(completed(REL, "[\"a\",\"b\"]", "120"));
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill waits for the main stream's reservation
        String drop = "{\"tag\":\"drop-table\",\"id\":{\"schema\":\"foo\",\"name\":\"bar\"}}";
        mainTx(main, "125", drop);
        expectChanges(begin("125"), data(drop), commit("125"));
        assertNull(buffer.poll(Duration.ofMillis(200)), "nothing from the canceled backfill");
        expectRequests(REQUEST);
        assertEquals(List.of(), backfillManager.status());
    }

    @Test
    void backfillCanceledBecauseOfLastColumnDrop() throws Exception {
        stream(completed(REL, "[\"b\"]", "120"));
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request("{\"table\":{\"schema\":\"foo\",\"name\":\"bar\",\"metadata\":"
                + "{\"rowKey\":{\"a\":123}}},\"columns\":{\"b\":{\"id\":\"234\"}}}")));
        awaitWaiter();
        String drop = "{\"tag\":\"drop-column\",\"table\":{\"schema\":\"foo\",\"name\":\"bar\"},\"column\":\"b\"}";
        mainTx(main, "125", drop);
        expectChanges(begin("125"), data(drop), commit("125"));
        assertNull(buffer.poll(Duration.ofMillis(200)), "nothing from the canceled backfill");
        assertEquals(List.of(), backfillManager.status());
    }

    @Test
    void columnAddedToBackfillingTable() throws Exception {
        String ab = backfill(REL, "[\"a\",\"b\"]", "130", "[[[1,2],[3,4]]]");
        String cd = backfill(REL, "[\"c\",\"d\"]", "150", "[[[5,6],[3,4]]]");
        stream(ab, completed(REL, "[\"a\",\"b\"]", "130"));
        stream(cd, completed(REL, "[\"c\",\"d\"]", "150"));
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill waits for the main stream's reservation
        String addC = "{\"tag\":\"add-column\",\"table\":{\"schema\":\"foo\",\"name\":\"bar\"},\"column\":{\"name\":"
                + "\"c\",\"spec\":{\"dataType\":\"text\",\"pos\":2}},\"tableMetadata\":{\"rowKey\":{\"a\":123}},"
                + "\"backfill\":{\"id\":\"777\"}}";
        String addD = addC.replace("\"c\"", "\"d\"").replace("\"777\"", "\"888\"");
        mainTx(main, "140", addC, addD);
        pushStatus("150");
        // The running backfill is not canceled by the new columns, which get a run of their own.
        expectChanges(begin("140"), data(addC), data(addD), commit("140"), backfillBegin("140.01"), data(ab),
                data(completed(REL, "[\"a\",\"b\"]", "130")), commit("140.01"), backfillBegin("140.02"), data(cd),
                commit("140.02"), backfillBegin("150"), data(completed(REL, "[\"c\",\"d\"]", "150")), commit("150"));
        expectRequests(REQUEST, "{\"table\":{\"schema\":\"foo\",\"name\":\"bar\",\"metadata\":{\"rowKey\":"
                + "{\"a\":123}}},\"columns\":{\"c\":{\"id\":\"777\"},\"d\":{\"id\":\"888\"}}}");
    }

    @Test
    void backfillRetriedOnStreamError() throws Exception {
        failingStream("failure 1");
        failingStream("failure 2");
        failingStream("failure 3");
        stream(DONE_130);
        backfillManager.run("123", List.of(request(REQUEST)));
        pushStatus("130");
        expectChanges(backfillBegin("130"), data(DONE_130), commit("130"));
        expectRequests(REQUEST, REQUEST, REQUEST, REQUEST);
    }

    @Test
    void backfillRetriedForNonEmptyTableWithoutRowKey() throws Exception {
        String noKey = "{\"schema\":\"foo\",\"name\":\"bar\",\"rowKey\":{\"columns\":[]}}";
        String withKey = "{\"schema\":\"foo\",\"name\":\"bar\",\"rowKey\":{\"columns\":[\"id\"]}}";
        for (int i = 0; i < 2; i++) {
            stream(backfill(noKey, "[\"id\"]", "150", "[[1]]"), completed(noKey, "[\"id\"]", "150"));
        }
        // This time the table has a row key.
        stream(backfill(withKey, "[]", "188", "[[1]]"), completed(withKey, "[]", "188"));
        String req = "{\"table\":{\"schema\":\"foo\",\"name\":\"bar\",\"metadata\":{\"rowKey\":{}}},\"columns\":"
                + "{\"id\":{\"id\":\"123\"}}}";
        backfillManager.run("123", List.of(request(req)));
        pushStatus("188");
        expectChanges(backfillBegin("123.01"), data(backfill(withKey, "[]", "188", "[[1]]")), commit("123.01"),
                backfillBegin("188"), data(completed(withKey, "[]", "188")), commit("188"));
        expectRequests(req, req, req);
    }

    @Test
    void backfillStreamYieldsToOtherStreamReservations() throws Exception {
        List<String> batches = List.of(backfill(REL, "[\"b\"]", "130", "[[1,2]]"),
                backfill(REL, "[\"b\"]", "130", "[[2,3]]"), backfill(REL, "[\"b\"]", "130", "[[3,4]]"),
                backfill(REL, "[\"b\"]", "130", "[[5,6]]"));
        List<String> all = new ArrayList<>(batches);
        all.add(DONE_130);
        stream(all.toArray(String[]::new));
        Reservation main = changeStream.reserve("main");
        // Start the backfill with the stream already reserved.
        backfillManager.run("123", List.of(request(REQUEST)));
        pushStatus("130");
        // Each time: queue the main stream behind the backfill, then hand the stream over, so the
        // backfill always finds the main stream waiting after one message.
        long ver = StateVersion.majorOf("140").longValueExact();
        for (int i = 0; i < 5; i++, ver++) {
            awaitWaiter(); // only the backfill can be waiting here
            CountDownLatch granted = new CountDownLatch(1);
            Reservation next = changeStream.tryReserve("main", granted::countDown);
            changeStream.release(main, StateVersion.majorToString(java.math.BigInteger.valueOf(ver + 1)));
            assertTrue(granted.await(10, TimeUnit.SECONDS));
            main = next;
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String tx = StateVersion.majorToString(java.math.BigInteger.valueOf(ver - 4 + i)) + ".01";
            expected.add(backfillBegin(tx));
            expected.add(data(i < 4 ? batches.get(i) : DONE_130));
            expected.add(commit(tx));
        }
        expectChanges(expected.toArray(String[]::new));
        changeStream.release(main, "zz");
    }

    @Test
    void backfillCompletedWaitsForCommitToExceedBackfillWatermark() throws Exception {
        stream(TWO_BATCHES_AND_DONE_B2, DONE_130);
        backfillManager.run("123", List.of(request(REQUEST)));
        // The backfill streams before the main stream reserves.
        expectChanges(backfillBegin("123.01"), data(TWO_BATCHES_AND_DONE_B2), commit("123.01"));
        // Move the main stream past the backfill's watermark.
        Reservation main = changeStream.reserve("main");
        mainTx(main, "131");
        expectChanges(begin("131"), commit("131"), backfillBegin("131.01"), data(DONE_130), commit("131.01"));
        expectRequests(REQUEST);
    }

    @Test
    void backfillCompletedWaitsForStreamStatusToReachBackfillWatermark() throws Exception {
        stream(TWO_BATCHES_AND_DONE_B1, DONE_130);
        backfillManager.run("123", List.of(request(REQUEST)));
        // It ends its transaction and releases the stream before the completion waits.
        expectChanges(backfillBegin("123.01"), data(TWO_BATCHES_AND_DONE_B1), commit("123.01"));
        assertNull(buffer.poll(Duration.ofMillis(100)), "backfill-completed waits for the stream");
        pushStatus("130");
        expectChanges(backfillBegin("130"), data(DONE_130), commit("130"));
        expectRequests(REQUEST);
    }

    // ------------------------------------------------------------------ beyond the upstream file

    /**
     * The backfill can be granted the stream while the consumer is behind, because a live
     * transaction filled the buffer after the backfill had checked for room. It must hand the
     * stream on before it begins a transaction: began, its first push would wait for the consumer
     * while holding the stream, and a live transaction that asked meanwhile would wait with it.
     */
    @Test
    void aBackfillGrantedTheStreamWhileTheConsumerIsBehindYieldsBeforeItBegins() throws Exception {
        stream(TWO_BATCHES_AND_DONE_B1, DONE_130);
        Reservation main = changeStream.reserve("main");
        backfillManager.run("123", List.of(request(REQUEST)));
        awaitWaiter(); // the backfill found room and now waits for the stream
        String big = backfill(REL, "[\"b\"]", "130", "[[\"" + "x".repeat(100) + "\",1]]");
        changeStream.push(main, msg(begin("140")), 64);
        changeStream.push(main, msg(data(big)), 300_000); // above the bound a blocking producer may add to
        changeStream.push(main, msg(commit("140")), 64);
        CountDownLatch granted = new CountDownLatch(1);
        Reservation next = changeStream.tryReserve("main", granted::countDown);
        changeStream.release(main, "140"); // granted to the backfill, which finds the consumer behind
        assertTrue(granted.await(10, TimeUnit.SECONDS), "the live producer waited for the consumer behind a backfill");
        expectChanges(begin("140"), data(big), commit("140")); // nothing of the backfill's in between
        mainTx(next, "150");
        expectChanges(begin("150"), commit("150"), backfillBegin("150.01"), data(TWO_BATCHES_AND_DONE_B1),
                data(DONE_130), commit("150.01"));
    }

    @Test
    void closingTheStreamCancelsARunningBackfillAndClosesItsRun() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        BackfillRun blocking = new BackfillRun() {
            @Override
            public String watermark() {
                return "130";
            }

            @Override
            public DataOrSchemaChange next() throws ChangeSourceException, InterruptedException {
                reading.countDown();
                // A COPY in progress: only close() ends it.
                closed.await();
                throw new ChangeSourceException("COPY canceled");
            }

            @Override
            public void close() {
                closed.countDown();
            }
        };
        MessageBuffer b = new MessageBuffer(100, 1 << 20, null);
        ChangeStreamMultiplexer mux = new ChangeStreamMultiplexer("123", b);
        BackfillManager m = new BackfillManager("cancel", mux, r -> blocking);
        mux.addListener(m).addProducer(m);
        m.run("123", List.of(request(REQUEST)));
        assertTrue(reading.await(10, TimeUnit.SECONDS));
        assertEquals("running", m.status().get(0).get("state"));
        mux.fail(new ChangeStreamClosedException("closed"));
        assertTrue(closed.await(10, TimeUnit.SECONDS), "the run was closed");
        assertTrue(m.awaitTermination(Duration.ofSeconds(10)), "the backfill thread ended");
        assertNull(b.poll(Duration.ZERO), "nothing was streamed");
    }

    @Test
    void statusShowsRetriesAndTheLastError() throws Exception {
        failingStream("upstream unreachable");
        stream(DONE_130);
        backfillManager.run("123", List.of(request(REQUEST)));
        pushStatus("130");
        expectChanges(backfillBegin("130"), data(DONE_130), commit("130"));
        // Completed: the request and its counters are gone.
        assertEquals(List.of(), backfillManager.status());
    }

    @Test
    void statusOfARetryingBackfill() throws Exception {
        BackfillManager m = new BackfillManager("retrying", changeStream, r -> {
            throw new MissingRowKeyException(r);
        }, JsonFormat.STRINGIFIED, Duration.ofSeconds(30), Duration.ofSeconds(60), new Random(1), System::nanoTime);
        changeStream.addProducer(m);
        m.run("123", List.of(request(REQUEST)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Map<String, Object> s;
        do {
            assertTrue(System.nanoTime() < deadline);
            Thread.onSpinWait();
            s = m.status().get(0);
        } while (!"retrying".equals(s.get("state")));
        assertEquals("foo.bar", s.get("table"));
        assertEquals(List.of("a", "b"), s.get("columns"));
        assertEquals(1, s.get("retries"));
        assertEquals("Cannot backfill foo.bar[a,b]: \"bar\" is missing a PRIMARY KEY", s.get("lastError"));
    }
}

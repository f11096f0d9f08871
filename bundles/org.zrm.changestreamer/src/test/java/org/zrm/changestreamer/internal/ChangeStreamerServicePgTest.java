package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changestreamer.internal.Msgs.begin;
import static org.zrm.changestreamer.internal.Msgs.commit;
import static org.zrm.changestreamer.internal.Msgs.insert;
import static org.zrm.changestreamer.internal.Msgs.rollback;
import static org.zrm.changestreamer.internal.Msgs.status;
import static org.zrm.changestreamer.internal.Msgs.tx;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Timings;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.storer.internal.queue.StorerQueue;
import org.zrm.storer.internal.queue.StorerQueueSettings;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Port of upstream's change-streamer-service.pg.test.ts plus the hazards the port fixes. */
@PostgresTest
class ChangeStreamerServicePgTest {

    private static final String REPLICA_VERSION = "01";
    private static final AtomicInteger SHARDS = new AtomicInteger(100);
    private static final Pattern COMMIT_WM = Pattern.compile("^\\[\"commit\",.*\\{\"watermark\":\"([0-9a-z]+)\"\\}\\]$");

    private PgDatabase db;
    private String schema;
    private PgChangeLog log;
    private FakeChangeSource source;
    private ManualTimer timer;
    private ChangeStreamerService streamer;

    @BeforeEach
    void setUp(PgDatabase db) throws Exception {
        this.db = db;
        int shard = SHARDS.incrementAndGet();
        this.schema = "\"zoro_" + shard + "/cdc\"";
        this.log = new PgChangeLog(StorerSettings.of(db.uri(), "zoro", shard));
        start(DEFAULTS);
    }

    /** Upstream's test options: auto-reset on, no start-up delay. */
    static final StreamerSettings DEFAULTS = StreamerSettings.defaults("task-id", "change.streamer:12345")
            .withStartupDelay(Duration.ZERO).withSubscriberMaxBufferedBytes(1 << 20);

    private void start(StreamerSettings settings) {
        start(settings, src -> { });
    }

    /** Stops the running streamer and starts another one over the same change log. */
    private void restart(StreamerSettings settings, java.util.function.Consumer<FakeChangeSource> beforeStart)
            throws InterruptedException {
        streamer.stop(Duration.ofSeconds(10));
        start(settings, beforeStart);
    }

    private void start(StreamerSettings settings, java.util.function.Consumer<FakeChangeSource> beforeStart) {
        source = new FakeChangeSource(REPLICA_VERSION);
        beforeStart.accept(source);
        timer = new ManualTimer();
        StorerFactory factory = new StorerFactory() {
            @Override
            public Storer start(String taskID, org.zrm.changelog.StorerListener l, org.zrm.changelog.CatchupHandler h) {
                return new StorerQueue(log, taskID, StorerQueueSettings.defaults(), l, h);
            }

            @Override
            public PgChangeLog changeLog() {
                return log;
            }
        };
        streamer = new ChangeStreamerService(settings, factory, source, timer);
        streamer.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        streamer.stop(Duration.ofSeconds(10));
        log.close();
    }

    private Subscription subscribe(String id, String watermark) {
        return subscribe(id, watermark, ReplicatorMode.SERVING, REPLICA_VERSION, ChangeStreamer.PROTOCOL_VERSION);
    }

    private Subscription subscribe(String id, String watermark, ReplicatorMode mode, String replicaVersion, int v) {
        return streamer.subscribe(new SubscriberContext(v, id, "task-id", mode, replicaVersion, watermark, true));
    }

    private void expectAcks(String... watermarks) throws InterruptedException {
        for (String w : watermarks) {
            ChangeSourceUpstream ack = source.acks.poll(10, TimeUnit.SECONDS);
            assertEquals(w, ack == null ? null : ack.watermark());
        }
    }

    private List<String> query(String sql) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int cols = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder b = new StringBuilder();
                for (int i = 1; i <= cols; i++) {
                    b.append(i > 1 ? "," : "").append(rs.getString(i));
                }
                out.add(b.toString());
            }
        }
        return out;
    }

    private void exec(String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private List<String> rows() throws Exception {
        return query("SELECT watermark, change->>'tag' FROM " + schema + ".\"changeLog\" ORDER BY watermark, pos");
    }

    static String tag(String json) {
        if (json.startsWith("[\"data\"")) {
            int i = json.indexOf("\"tag\":\"") + 7;
            return json.substring(i, json.indexOf('"', i));
        }
        return json.substring(2, json.indexOf('"', 2));
    }

    static String commitWatermark(String json) {
        Matcher m = COMMIT_WM.matcher(json);
        return m.matches() ? m.group(1) : null;
    }

    private void awaitStreaming() throws InterruptedException {
        source.stream();
    }

    @Test
    void getEmptyChangeLogState() throws Exception {
        awaitStreaming();
        assertEquals(new ChangeLogState("01", "01"), streamer.getChangeLogState());
    }

    @Test
    void immediateForwardingTransactionStorage() throws Exception {
        awaitStreaming();
        try (Drain d = new Drain(subscribe("myid", "01"))) {
            source.push(tx("09", "hello", "world"));
            assertEquals("[\"status\",{\"tag\":\"status\",\"lagReport\":{\"nextSendTimeMs\":123}}]", d.next());
            assertEquals(List.of("begin", "insert", "insert", "commit"), d.next(4).stream().map(ChangeStreamerServicePgTest::tag).toList());
            source.push(status("0a", false));
            source.push(new StatusMessage(new DownstreamStatus(false,
                    new LagReport(new Timings(150, 151, 152, Passthrough.NONE), 234, Passthrough.NONE), Passthrough.NONE), "0b"));
            source.push(status("0c", true));
            String lag = d.next();
            assertTrue(lag.startsWith("[\"status\",{\"tag\":\"status\",\"lagReport\":{\"lastTimings\":"), lag);
            assertTrue(lag.contains("\"nextSendTimeMs\":234"), lag);
            expectAcks("09", "0c");
            assertEquals(List.of("01,begin", "01,commit", "09,begin", "09,insert", "09,insert", "09,commit"), rows());
            assertEquals(List.of("task-id,change.streamer:12345,09"),
                    query("SELECT owner, \"ownerAddress\", \"lastWatermark\" FROM " + schema + ".\"replicationState\""));
        }
    }

    @Test
    void subscriberCatchupAndContinuation() throws Exception {
        awaitStreaming();
        source.push(tx("09", "hello", "world"));
        expectAcks("09");
        try (Drain d = new Drain(subscribe("myid", "01"))) {
            source.push(status("0a", true));
            source.push(tx("0b", "more"));
            source.push(status("0d", true));
            List<String> got = d.next(8);
            assertEquals(List.of("status", "begin", "insert", "insert", "commit", "begin", "insert", "commit"),
                    got.subList(0, 8).stream().map(ChangeStreamerServicePgTest::tag).toList());
            assertEquals("09", commitWatermark(got.get(4)));
            assertEquals("0b", commitWatermark(got.get(7)));
            expectAcks("0a", "0b", "0d");
            assertNull(d.poll(100));
        }
    }

    @Test
    void subscriberCatchupAndContinuationAfterRollback() throws Exception {
        awaitStreaming();
        source.push(tx("09", "hello"));
        expectAcks("09");
        try (Drain d = new Drain(subscribe("myid", "01"))) {
            assertEquals(List.of("status", "begin", "insert", "commit"), d.next(4).stream().map(ChangeStreamerServicePgTest::tag).toList());
            source.push(begin("0b"), insert("x"), rollback());
            source.push(status("0d", true));
            assertEquals(List.of("begin", "insert", "rollback"), d.next(3).stream().map(ChangeStreamerServicePgTest::tag).toList());
            expectAcks("0d");
            assertEquals(List.of("01,begin", "01,commit", "09,begin", "09,insert", "09,commit"), rows());
        }
    }

    @Test
    void subscriberAheadOfChangeLog() throws Exception {
        awaitStreaming();
        source.push(tx("09", "a"));
        expectAcks("09");
        try (Drain d = new Drain(subscribe("myid", "0b"))) {
            assertEquals("status", tag(d.next()));
            source.push(tx("0a", "b"));
            source.push(tx("0c", "c"));
            List<String> got = d.next(3);
            assertEquals("0c", commitWatermark(got.get(2)));
            assertNull(d.poll(100));
        }
    }

    @Test
    void dataTypesForwardedAndCatchupAreIdentical() throws Exception {
        awaitStreaming();
        try (Drain live = new Drain(subscribe("live", "01"))) {
            assertEquals("status", tag(live.next()));
            source.push(tx("09", new java.math.BigInteger("987654321987654321")));
            List<String> liveMsgs = live.next(3);
            expectAcks("09");
            try (Drain later = new Drain(subscribe("later", "01"))) {
                assertEquals("status", tag(later.next()));
                assertEquals(liveMsgs, later.next(3));
            }
            assertTrue(liveMsgs.get(1).contains("\"id\":987654321987654321"), liveMsgs.get(1));
            assertEquals(List.of("{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\",\"name\":\"foo\",\"rowKey\":{\"columns\":[\"id\"]}},\"new\":{\"id\":987654321987654321}}"),
                    query("SELECT change::text FROM " + schema + ".\"changeLog\" WHERE watermark = '09' AND pos = 1"));
        }
    }

    @Test
    void immediateSubscriptionStatusAndWatermarkTooOld() throws Exception {
        awaitStreaming();
        source.push(tx("04", "a"));
        source.push(tx("08", "b"));
        expectAcks("04", "08");
        log.purgeBefore("04", "task-id");
        try (Drain d = new Drain(subscribe("at04", "04")); Drain d8 = new Drain(subscribe("at08", "08"))) {
            assertEquals("status", tag(d.next()));
            assertEquals("status", tag(d8.next()));
        }
        try (Drain d = new Drain(subscribe("at02", "02"))) {
            assertEquals("[\"error\",{\"type\":2,\"message\":\"earliest supported watermark is 04 (requested 02)\"}]", d.next());
            assertEquals(Drain.END, d.next());
        }
    }

    @Test
    void wrongReplicaVersion() throws Exception {
        awaitStreaming();
        try (Drain d = new Drain(subscribe("bad", "01", ReplicatorMode.SERVING, "01foobar", 6))) {
            assertEquals("[\"error\",{\"type\":1,\"message\":\"current replica version is 01 (requested 01foobar)\"}]", d.next());
            assertEquals(Drain.END, d.next());
        }
    }

    @Test
    void retriesAtRightWatermarkAfterStreamError() throws Exception {
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        FakeChangeSource.FakeStream first = source.nextStream();
        source.push(tx("04", "a"));
        expectAcks("04");
        first.fail(new ChangeSourceException("connection reset"));
        assertEquals("04", source.startWatermarks.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void rollsBackPendingTransactionWhenChangeSourceDies() throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        try (Drain d = new Drain(subscribe("myid", "01"))) {
            assertEquals("status", tag(d.next()));
            source.push(begin("05"), insert("a"));
            assertEquals(List.of("begin", "insert"), d.next(2).stream().map(ChangeStreamerServicePgTest::tag).toList());
            first.fail(new ChangeSourceException("died"));
            assertEquals("[\"rollback\",{\"tag\":\"rollback\"}]", d.next());
            FakeChangeSource.FakeStream second = source.nextStream();
            assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
            assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
            for (var m : tx("05", "a")) {
                second.items.add(m);
            }
            assertEquals(List.of("begin", "insert", "commit"), d.next(3).stream().map(ChangeStreamerServicePgTest::tag).toList());
            assertNull(d.poll(100), "exactly one synthesized rollback");
            expectAcks("05");
            assertEquals(List.of("01,begin", "01,commit", "05,begin", "05,insert", "05,commit"), rows());
        }
    }

    @Test
    void transactionAbortedOnlyOnceAfterExplicitRollback() throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        try (Drain d = new Drain(subscribe("myid", "01"))) {
            assertEquals("status", tag(d.next()));
            source.push(begin("05"), insert("a"), rollback());
            assertEquals(List.of("begin", "insert", "rollback"), d.next(3).stream().map(ChangeStreamerServicePgTest::tag).toList());
            first.fail(new ChangeSourceException("died"));
            assertTrue(source.nextStream() != null);
            assertNull(d.poll(200), "no synthesized rollback after an explicit one");
        }
    }

    @Test
    void shutdownOnUnexpectedInvalidStream() throws Exception {
        awaitStreaming();
        source.push(insert("a"));
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(ChangeStreamerService.State.STOPPED, streamer.state());
        assertTrue(streamer.lastError().contains("data change (insert) received before 'begin' message"), streamer.lastError());
        assertEquals(List.of("01,begin", "01,commit"), rows());
    }

    @Test
    void shutdownOnCommitWatermarkMismatch() throws Exception {
        awaitStreaming();
        source.push(begin("05"), insert("a"), commit("06"));
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertTrue(streamer.lastError().contains("commit watermark 06 does not match 'begin' watermark 05"), streamer.lastError());
        assertEquals(List.of("01,begin", "01,commit"), rows());
    }

    /** BUG H1: a subscriber queued behind an interrupted transaction must still be caught up. */
    @Test
    void subscriberQueuedDuringInterruptedTransactionIsCaughtUp() throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        source.push(tx("03", "x"));
        expectAcks("03");
        source.push(begin("05"), insert("a"));
        // Make sure the begin was consumed by the loop before subscribing (the subscriber is queued).
        first.items.add(status("04", true));
        expectAcks("04");
        try (Drain d = new Drain(subscribe("mid-tx", "01"))) {
            first.fail(new ChangeSourceException("died"));
            FakeChangeSource.FakeStream second = source.nextStream();
            List<String> catchup = d.next(4);
            assertEquals(List.of("status", "begin", "insert", "commit"), catchup.stream().map(ChangeStreamerServicePgTest::tag).toList());
            assertEquals("03", commitWatermark(catchup.get(3)));
            for (var m : tx("05", "a")) {
                second.items.add(m);
            }
            List<String> live = d.next(3);
            assertEquals("05", commitWatermark(live.get(2)));
        }
    }

    /** BUG H6: stopping in the middle of a transaction rolls it back explicitly. */
    @Test
    void stopRollsBackOpenTransaction() throws Exception {
        awaitStreaming();
        Drain d = new Drain(subscribe("myid", "01"));
        assertEquals("status", tag(d.next()));
        source.push(begin("05"), insert("a"));
        assertEquals(List.of("begin", "insert"), d.next(2).stream().map(ChangeStreamerServicePgTest::tag).toList());
        streamer.stop(Duration.ofSeconds(10));
        assertEquals("[\"rollback\",{\"tag\":\"rollback\"}]", d.next());
        assertEquals(Drain.END, d.next());
        assertTrue(d.sub.failure().isPresent());
        // The storer's row lock is gone: nobody holds the replicationState row any more.
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT owner FROM " + schema + ".\"replicationState\" FOR UPDATE NOWAIT");
            c.rollback();
        }
        assertEquals(List.of("01,begin", "01,commit"), rows());
        d.close();
    }

    @Test
    void changeLogCleanupGatedByAcksAndRescheduledWithoutSubscribers() throws Exception {
        awaitStreaming();
        source.push(tx("03", "a"));
        source.push(tx("04", "b"));
        source.push(tx("06", "c"));
        source.push(tx("08", "d"));
        expectAcks("03", "04", "06", "08");
        // H2: no subscriber connected -> nothing purged, but the cycle is rescheduled.
        streamer.scheduleCleanup("04");
        streamer.scheduleCleanup("06");
        assertEquals(1, timer.scheduled());
        timer.runNext();
        assertEquals(1, timer.scheduled(), "rescheduled although no subscriber was connected (H2)");
        assertEquals("01", streamer.getChangeLogState().minWatermark());

        Subscription sub = subscribe("slow", "04");
        SubscriptionMessage statusMsg = sub.take();
        assertEquals("status", tag(statusMsg.json()));
        statusMsg.consumed();
        timer.runNext(); // acked 04 >= 04: purge below 04
        assertEquals("04", streamer.getChangeLogState().minWatermark());
        assertEquals(1, timer.scheduled());
        timer.runNext(); // acked 04 < 06: no purge
        assertEquals("04", streamer.getChangeLogState().minWatermark());
        for (int i = 0; i < 6; i++) {
            sub.take().consumed(); // 06 and 08 transactions (3 messages each)
        }
        timer.runNext();
        assertEquals("06", streamer.getChangeLogState().minWatermark());
        assertEquals(0, timer.scheduled(), "no more watermarks: no further cycle");
        sub.close();
        try (Drain d = new Drain(subscribe("too-old", "04"))) {
            assertEquals("[\"error\",{\"type\":2,\"message\":\"earliest supported watermark is 06 (requested 04)\"}]", d.next());
        }
    }

    @Test
    void outOfOrderAckEndsSubscriptionWithProtocolError() throws Exception {
        awaitStreaming();
        Subscription sub = subscribe("h4", "01");
        SubscriptionMessage first = sub.take();
        source.push(tx("09", "a"));
        sub.take();
        SubscriptionMessage third = sub.take();
        third.consumed(); // skips two messages
        assertTrue(sub.failure().orElseThrow() instanceof Outbox.OutOfOrderAckException);
        assertTrue(sub.failure().get().getMessage().contains("acknowledged message 3 before message 1"),
                sub.failure().get().getMessage());
        first.consumed(); // ignored, no exception
        assertNull(sub.take());
        assertTrue(streamer.subscribers().isEmpty());
        expectAcks("09");
    }

    /** A fresh streamer on a fresh change log whose subscribers may each hold 256 KiB, streaming. */
    private void restartWithA256KiBBound() throws Exception {
        tearDown();
        this.log = new PgChangeLog(StorerSettings.of(db.uri(), "zoro", SHARDS.incrementAndGet()));
        start(StreamerSettings.defaults("task-id", "a:1").withStartupDelay(Duration.ZERO)
                .withSubscriberMaxBufferedBytes(256 << 10).withFlowControl(0, 65536, Duration.ofMillis(50)));
        awaitStreaming();
    }

    @Test
    void subscriberOverItsByteBoundIsClosedAloneAndOthersGetEverything() throws Exception {
        restartWithA256KiBBound();
        Subscription stuck = subscribe("stuck", "01"); // never takes nor acks
        try (Drain ok1 = new Drain(subscribe("ok1", "01")); Drain ok2 = new Drain(subscribe("ok2", "01"))) {
            assertEquals("status", tag(ok1.next()));
            assertEquals("status", tag(ok2.next()));
            int n = 200;
            for (int i = 0; i < n; i++) {
                source.push(tx(org.zrm.watermark.LexiVersion.encode(100 + i), "row-" + i + "-".repeat(2000)));
            }
            String last = org.zrm.watermark.LexiVersion.encode(100 + n - 1);
            assertEquals(last, commitWatermark(ok1.next(3 * n).get(3 * n - 1)));
            assertEquals(last, commitWatermark(ok2.next(3 * n).get(3 * n - 1)));
            assertTrue(stuck.failure().orElseThrow() instanceof Outbox.BufferLimitException, "" + stuck.failure());
            assertTrue(ok1.sub.failure().isEmpty());
            assertEquals(2, streamer.subscribers().size());
        }
    }

    /**
     * A subscriber still catching up when a burst streams past it goes over its byte bound (when its
     * catch-up has sent its half bound by then, the usual case): as it has read something, it stays
     * connected, its backlog is dropped, and it is caught up again from where its round ended, so it
     * receives every transaction once, in order. (It used to be disconnected, and a client
     * reconnecting at its last commit during a long load fell behind again and again.)
     */
    @Test
    void aSubscriberOverItsBoundWhileCatchingUpStaysAndGetsEverythingOnce() throws Exception {
        restartWithA256KiBBound();
        int before = 100;
        int burst = 100;
        List<String> expected = new ArrayList<>();
        Subscription late = null;
        try (Drain ok = new Drain(subscribe("ok", "01"))) {
            assertEquals("status", tag(ok.next()));
            for (int i = 0; i < before + burst; i++) {
                if (i == before) {
                    // Forwarded, so in the storer's queue ahead of late's catch-up: 200 KB to catch
                    // up, more than the half bound a round sends unconsumed.
                    ok.next(3 * before);
                    late = subscribe("late", "01");
                    // It reads (the status that opens its catch-up), then nothing while the burst of
                    // 200 KB goes by: with the half bound of catch-up it holds, more than its bound
                    // (but less than twice, after which one that reads nothing is disconnected).
                    SubscriptionMessage status = late.take();
                    assertEquals("status", tag(status.json()));
                    status.consumed();
                }
                String w = org.zrm.watermark.LexiVersion.encode(100 + i);
                expected.add(w);
                source.push(tx(w, "row-" + i + "-".repeat(2000)));
            }
            assertEquals(expected.get(expected.size() - 1), commitWatermark(ok.next(3 * burst).get(3 * burst - 1)));
            assertTrue(late.failure().isEmpty(), "" + late.failure());
            try (Drain d = new Drain(late)) {
                List<String> commits = new ArrayList<>();
                while (commits.size() < expected.size()) {
                    String w = commitWatermark(d.next());
                    if (w != null) {
                        commits.add(w);
                    }
                }
                assertEquals(expected, commits);
                assertNull(d.poll(50), "nothing twice");
                assertTrue(late.failure().isEmpty(), "" + late.failure());
                assertEquals(2, streamer.subscribers().size());
                // One more round when its catch-up had sent its half bound before the burst came
                // (the usual case); none when the catch-up started late and the burst alone fit.
                long rounds = (Long) streamer.status().get("repeatedCatchups");
                assertTrue(rounds <= 1, "rounds: " + rounds);
            }
        }
    }

    @Test
    void catchupConcurrentWithLiveHasNoGapsOrDuplicates() throws Exception {
        awaitStreaming();
        int txs = 150;
        List<Drain> drains = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        try {
            for (int i = 0; i < txs; i++) {
                String w = org.zrm.watermark.LexiVersion.encode(100 + i);
                expected.add(w);
                source.push(tx(w, "a" + i, "b" + i));
                if (i % 10 == 5) {
                    drains.add(new Drain(subscribe("s" + i, "01")));
                }
            }
            for (Drain d : drains) {
                List<String> commits = new ArrayList<>();
                assertEquals("status", tag(d.next()));
                while (commits.size() < txs) {
                    String m = d.next();
                    String w = commitWatermark(m);
                    if (w != null) {
                        commits.add(w);
                    }
                }
                assertEquals(expected, commits);
                assertNull(d.poll(50));
            }
        } finally {
            drains.forEach(Drain::close);
        }
    }

    @Test
    void twoHundredConcurrentSubscribersReceiveEverything() throws Exception {
        awaitStreaming();
        List<Drain> drains = new ArrayList<>();
        try {
            for (int i = 0; i < 200; i++) {
                drains.add(new Drain(subscribe("sub-" + i, "01")));
            }
            int txs = 50;
            for (int i = 0; i < txs; i++) {
                source.push(tx(org.zrm.watermark.LexiVersion.encode(1000 + i), "x" + i));
            }
            for (Drain d : drains) {
                List<String> got = d.next(1 + 3 * txs);
                assertEquals("status", tag(got.get(0)));
                assertEquals(org.zrm.watermark.LexiVersion.encode(1000 + txs - 1), commitWatermark(got.get(3 * txs)));
            }
        } finally {
            drains.forEach(Drain::close);
        }
    }

    // ------------------------------------------------------------------ ported from upstream (spec §8)

    @Test
    void retryOnInitialStreamFailure() throws Exception {
        restart(DEFAULTS, src -> src.startFailures.add(new ChangeSourceException("error")));
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS), "retried");
        source.push(tx("03", "a"));
        expectAcks("03");
        assertEquals(1, streamer.restarts());
    }

    @Test
    void retryOnChangeStreamError() throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        first.fail(new IllegalStateException("doh")); // not a ChangeSourceException: still retried
        FakeChangeSource.FakeStream second = source.nextStream();
        assertTrue(second != null && second != first, "a new stream was started");
        for (var m : tx("03", "a")) {
            second.items.add(m);
        }
        expectAcks("03");
        assertEquals(1, streamer.restarts());
    }

    @Test
    void retryOnUnexpectedStorageError() throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        // Unexpected data: the store is not in the state the stream expects (PK conflict at (05,3)).
        exec("INSERT INTO " + schema + ".\"changeLog\" (watermark, pos, change) VALUES ('05', 3, '{\"conflicting\":\"entry\"}')");
        source.push(tx("05", "hello", "world"));
        FakeChangeSource.FakeStream second = source.nextStream();
        assertTrue(second != null && second != first, "the streamer started a new stream");
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS), "restarted at the last stored watermark");
        assertEquals(List.of("01,0", "01,1", "05,3"),
                query("SELECT watermark, pos FROM " + schema + ".\"changeLog\" ORDER BY watermark, pos"));
        assertNull(source.acks.poll(100, TimeUnit.MILLISECONDS), "transaction 05 was not acked");
        assertTrue(streamer.restarts() >= 1);
    }

    @Test
    void shutdownIfCdcTableIsMissing() throws Exception {
        expectCleanShutdownAfter("DROP TABLE " + schema + ".\"replicationState\"");
    }

    @Test
    void shutdownIfCdcSchemaIsMissing() throws Exception {
        expectCleanShutdownAfter("DROP SCHEMA " + schema + " CASCADE");
    }

    /** Upstream: 42P01 when restarting the stream is an abort; the service exits normally. */
    private void expectCleanShutdownAfter(String dropSql) throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        try (Drain d = new Drain(subscribe("myid", "01"))) {
            assertEquals("status", tag(d.next()));
            exec(dropSql);
            first.fail(new ChangeSourceException("disconnected"));
            assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
            assertEquals(ChangeStreamerService.State.STOPPED, streamer.state());
            assertTrue(streamer.lastError().contains("does not exist"), streamer.lastError());
            assertEquals(Drain.END, d.next(), "the subscription ended");
            assertFalse(source.stopped, "a shared source service is stopped by its own component, not by a user");
            assertTrue(first.closed, "the stream is closed");
            assertNull(source.startWatermarks.poll(100, TimeUnit.MILLISECONDS), "no new stream after the first");
        }
        // The streamer did not re-create what another node dropped.
        assertEquals(List.of(), query("SELECT 1 FROM pg_tables WHERE schemaname = '"
                + schema.replace("\"", "") + "' AND tablename = 'replicationState'"));
    }

    @Test
    void startingPoint() throws Exception {
        assertEquals(REPLICA_VERSION, source.startWatermarks.poll(10, TimeUnit.SECONDS));
        streamer.stop(Duration.ofSeconds(10));
        exec("INSERT INTO " + schema + ".\"changeLog\" (watermark, pos, change) VALUES ('03', 0, '{\"tag\":\"begin\"}');"
                + "INSERT INTO " + schema + ".\"changeLog\" (watermark, pos, change) VALUES ('04', 0, '{\"tag\":\"commit\"}');"
                + "UPDATE " + schema + ".\"replicationState\" SET \"lastWatermark\" = '04'");
        start(DEFAULTS);
        assertEquals("04", source.startWatermarks.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void initialPurgeLockReleased() throws Exception {
        awaitStreaming(); // the log exists and holds the initial rows
        // Wait for a serving subscriber (or an hour) before taking over, holding the purge lock meanwhile.
        restart(DEFAULTS.withStartupDelay(Duration.ofHours(1)), src -> { });
        // The lock is taken before the source is initialised.
        assertEquals(Boolean.FALSE, source.initializations.poll(10, TimeUnit.SECONDS));
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            java.sql.SQLException e = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
                    () -> s.execute("SELECT FROM " + schema + ".\"changeLog\" FOR UPDATE NOWAIT"));
            assertEquals("55P03", e.getSQLState(), e.getMessage());
            c.rollback();
        }
        assertNull(source.startWatermarks.poll(100, TimeUnit.MILLISECONDS), "not streaming before the start signal");
        try (Drain d = new Drain(subscribe("serving", "01"))) {
            assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SET LOCAL lock_timeout = '10s'");
                s.execute("SELECT FROM " + schema + ".\"changeLog\" FOR UPDATE"); // released after ownership
                c.rollback();
            }
            assertEquals(List.of("task-id"), query("SELECT owner FROM " + schema + ".\"replicationState\""));
        }
    }

    @Test
    void ownershipTakeoverBeforeTxBegins() throws Exception {
        awaitStreaming();
        source.push(tx("0d", "hello"));
        expectAcks("0d");
        exec("UPDATE " + schema + ".\"replicationState\" SET \"owner\" = 'other-task', \"ownerAddress\" = 'change.streamer3:7645'");
        // The storer reads the new owner at 'begin' and fails the transaction at commit.
        source.push(tx("0f", "world"));
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(ChangeStreamerService.State.STOPPED, streamer.state());
        assertTrue(streamer.lastError().contains("changeLog ownership has been assumed by other-task"), streamer.lastError());
        assertEquals(List.of("01,begin", "01,commit", "0d,begin", "0d,insert", "0d,commit"), rows());
        assertEquals(List.of("1,other-task,change.streamer3:7645,0d"), query(
                "SELECT lock, owner, \"ownerAddress\", \"lastWatermark\" FROM " + schema + ".\"replicationState\""));
        assertNull(source.acks.poll(100, TimeUnit.MILLISECONDS), "0f was not acked");
    }

    @Test
    void ownershipTakeoverNotPossibleDuringTx() throws Exception {
        awaitStreaming();
        source.push(begin("0d"), insert("hello"));
        // The storer locks the ownership row asynchronously when it dequeues 'begin'. Only Postgres
        // can observe that lock, so this polls it with a bounded retry.
        String lockState = null;
        for (int i = 0; i < 400 && !"55P03".equals(lockState); i++) {
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SELECT owner FROM " + schema + ".\"replicationState\" FOR UPDATE NOWAIT");
                c.rollback();
                lockState = "free";
                Thread.sleep(25);
            } catch (java.sql.SQLException e) {
                lockState = e.getSQLState();
            }
        }
        assertEquals("55P03", lockState, "could not obtain lock on row in relation \"replicationState\"");
        source.push(commit("0d"));
        expectAcks("0d");
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET LOCAL lock_timeout = '10s'");
            try (ResultSet rs = s.executeQuery("SELECT owner FROM " + schema + ".\"replicationState\" FOR UPDATE")) {
                assertTrue(rs.next());
                assertEquals("task-id", rs.getString(1));
            }
            c.rollback();
        }
    }

    /** Without auto-reset, upstream only marks the log and keeps streaming. */
    @Test
    void resetRequired() throws Exception {
        restart(DEFAULTS.withAutoReset(false), src -> { });
        awaitStreaming();
        source.push(Msgs.resetRequired("publication changed"));
        source.push(tx("03", "a"));
        expectAcks("03");
        assertEquals(ChangeStreamerService.State.STREAMING, streamer.state());
        assertEquals(0, streamer.resets());
        org.junit.jupiter.api.Assertions.assertThrows(org.zrm.changelog.ResetRequiredException.class,
                () -> log.ensureReplicationConfig(source.state, true));
        log.ensureReplicationConfig(source.state, false); // without auto-reset: a prominent error only
    }

    @Test
    void resetRequiredIfBackupIsBehind() throws Exception {
        restart(DEFAULTS.withAutoReset(false), src -> { });
        awaitStreaming();
        exec("INSERT INTO " + schema + ".\"changeLog\" (watermark, pos, change) VALUES ('03', 0, '{\"tag\":\"begin\"}');"
                + "UPDATE " + schema + ".\"replicationState\" SET \"lastWatermark\" = '03'");
        Subscription backup = subscribe("backup-id", "02", ReplicatorMode.BACKUP, REPLICA_VERSION, ChangeStreamer.PROTOCOL_VERSION);
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertTrue(streamer.lastError().contains("backup replica at watermark 02 is behind change db: 03)"),
                streamer.lastError());
        assertTrue(backup.failure().isPresent());
        org.junit.jupiter.api.Assertions.assertThrows(org.zrm.changelog.ResetRequiredException.class,
                () -> log.ensureReplicationConfig(source.state, true));
    }

    @Test
    void shutdownOnAbortError() throws Exception {
        awaitStreaming();
        source.nextStream().fail(new org.zrm.changesource.ChangeSourceAbortedException("aborted"));
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(ChangeStreamerService.State.STOPPED, streamer.state());
        assertEquals(0, streamer.restarts());
        assertFalse(source.stopped, "a shared source service is stopped by its own component, not by a user");
    }

    @Test
    void transactionAbortedOnUnexpectedTermination() throws Exception {
        awaitStreaming();
        FakeChangeSource.FakeStream first = source.nextStream();
        try (Drain d = new Drain(subscribe("myid1", "01"))) {
            assertEquals("status", tag(d.next()));
            source.push(begin("05"), insert("hello"));
            first.end();
            assertEquals(List.of("begin", "insert", "rollback"),
                    d.next(3).stream().map(ChangeStreamerServicePgTest::tag).toList());
            assertNull(d.poll(100), "no more messages");
            assertEquals(List.of("01,begin", "01,commit"), rows());
        }
    }
}

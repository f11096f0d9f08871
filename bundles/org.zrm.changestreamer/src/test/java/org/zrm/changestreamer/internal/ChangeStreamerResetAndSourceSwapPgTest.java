package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changestreamer.internal.ChangeStreamerServicePgTest.commitWatermark;
import static org.zrm.changestreamer.internal.ChangeStreamerServicePgTest.tag;
import static org.zrm.changestreamer.internal.Msgs.begin;
import static org.zrm.changestreamer.internal.Msgs.insert;
import static org.zrm.changestreamer.internal.Msgs.resetRequired;
import static org.zrm.changestreamer.internal.Msgs.tx;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.storer.internal.queue.StorerQueue;
import org.zrm.storer.internal.queue.StorerQueueSettings;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * In-process auto-reset (spec §3.14; upstream exits the process instead) and change-source removal
 * and replacement, over a real Postgres change log.
 */
@PostgresTest
class ChangeStreamerResetAndSourceSwapPgTest {

    private static final AtomicInteger SHARDS = new AtomicInteger(500);
    private static final String ROLLBACK = "[\"rollback\",{\"tag\":\"rollback\"}]";

    private PgDatabase db;
    private String schema;
    private PgChangeLog log;
    private ChangeStreamerService streamer;

    @BeforeEach
    void setUp(PgDatabase db) {
        this.db = db;
        int shard = SHARDS.incrementAndGet();
        this.schema = "\"zoro_" + shard + "/cdc\"";
        this.log = new PgChangeLog(StorerSettings.of(db.uri(), "zoro", shard));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (streamer != null) {
            streamer.stop(Duration.ofSeconds(10));
        }
        log.close();
    }

    private void start(StreamerSettings settings, ChangeStreamerService.SourceProvider sources) {
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
        streamer = new ChangeStreamerService(settings, factory, sources, new ManualTimer());
        streamer.start();
    }

    private Subscription subscribe(String id, String watermark, String replicaVersion) {
        return subscribe(id, watermark, replicaVersion, ReplicatorMode.SERVING);
    }

    private Subscription subscribe(String id, String watermark, String replicaVersion, ReplicatorMode mode) {
        return streamer.subscribe(new SubscriberContext(ChangeStreamer.PROTOCOL_VERSION, id, "task-id", mode,
                replicaVersion, watermark, true));
    }

    private static void expectAcks(FakeChangeSource source, String... watermarks) throws InterruptedException {
        for (String w : watermarks) {
            ChangeSourceUpstream ack = source.acks.poll(10, TimeUnit.SECONDS);
            assertEquals(w, ack == null ? null : ack.watermark());
        }
    }

    private static List<String> tags(List<String> msgs) {
        return msgs.stream().map(ChangeStreamerServicePgTest::tag).toList();
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

    private List<String> rows() throws Exception {
        return query("SELECT watermark, change->>'tag' FROM " + schema + ".\"changeLog\" ORDER BY watermark, pos");
    }

    private List<String> owner() throws Exception {
        return query("SELECT owner, \"ownerAddress\", \"lastWatermark\" FROM " + schema + ".\"replicationState\"");
    }

    /** Streams on {@code source} until transaction 03 is stored; a subscriber is left mid transaction 04. */
    private Drain streamIntoOpenTransaction(FakeChangeSource source) throws Exception {
        source.stream();
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        assertEquals(Boolean.FALSE, source.initializations.poll(10, TimeUnit.SECONDS));
        Drain d = new Drain(subscribe("myid", "01", "01"));
        assertEquals("status", tag(d.next()));
        source.push(tx("03", "a"));
        assertEquals("03", commitWatermark(d.next(3).get(2)));
        expectAcks(source, "03");
        source.push(begin("04"), insert("b"));
        assertEquals(List.of("begin", "insert"), tags(d.next(2)));
        return d;
    }

    /** After an auto-reset to replica version 05: the log, ownership and new subscribers work. */
    private void expectResyncedTo05(FakeChangeSource source) throws Exception {
        assertEquals(Boolean.TRUE, source.initializations.poll(10, TimeUnit.SECONDS), "initialize(true): re-sync");
        assertEquals("05", source.startWatermarks.poll(10, TimeUnit.SECONDS), "streaming resumed in the new lineage");
        assertEquals(List.of("05,begin", "05,commit"), rows(), "the change log was reset to the new replica version");
        assertEquals(List.of("task-id,change.streamer:12345,05"), owner(), "ownership taken again");
        assertEquals(1, streamer.resets());
        assertEquals("05", streamer.replicaVersion());
        try (Drain old = new Drain(subscribe("old-lineage", "03", "01"))) {
            assertEquals("[\"error\",{\"type\":1,\"message\":\"current replica version is 05 (requested 01)\"}]",
                    old.next());
        }
        try (Drain d = new Drain(subscribe("new-lineage", "05", "05"))) {
            assertEquals("status", tag(d.next()));
            source.push(tx("07", "c"));
            assertEquals("07", commitWatermark(d.next(3).get(2)));
            expectAcks(source, "07");
        }
        assertEquals(ChangeStreamerService.State.STREAMING, streamer.state());
        assertEquals(List.of("05,begin", "05,commit", "07,begin", "07,insert", "07,commit"), rows());
        // The re-initialised configuration no longer carries the reset-required flag.
        assertDoesNotThrow(() -> log.ensureReplicationConfig(source.state, true));
    }

    // ------------------------------------------------------------------ auto-reset

    @Test
    void autoResetOnResetRequiredResyncsInProcess() throws Exception {
        FakeChangeSource source = new FakeChangeSource("01");
        source.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS, source);
        try (Drain d = streamIntoOpenTransaction(source)) {
            source.push(resetRequired("schema change not supported"));
            assertEquals(ROLLBACK, d.next(), "the open transaction is rolled back");
            assertEquals(Drain.END, d.next(), "the subscription ends so that the client reconnects");
            assertTrue(d.sub.failure().orElseThrow() instanceof ResetRequiredException, "" + d.sub.failure());
        }
        expectResyncedTo05(source);
    }

    @Test
    void autoResetWhenBackupIsBehindResyncsInProcess() throws Exception {
        FakeChangeSource source = new FakeChangeSource("01");
        source.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS, source);
        try (Drain serving = streamIntoOpenTransaction(source)) {
            source.push(Msgs.commit("04"));
            expectAcks(source, "04");
            assertEquals("commit", tag(serving.next()));
            log.purgeBefore("04", "task-id");
            Subscription backup = subscribe("backup-id", "03", "01", ReplicatorMode.BACKUP);
            assertEquals(Drain.END, serving.next(), "every subscription ends with the reset");
            assertTrue(backup.failure().orElseThrow().getMessage()
                    .contains("backup replica at watermark 03 is behind change db: 04)"), "" + backup.failure());
        }
        expectResyncedTo05(source);
    }

    @Test
    void autoResetOnSourceAutoResetSignalResyncsInProcess() throws Exception {
        FakeChangeSource source = new FakeChangeSource("01");
        source.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS, source);
        FakeChangeSource.FakeStream first;
        try (Drain d = streamIntoOpenTransaction(source)) {
            first = source.nextStream();
            first.fail(new AutoResetException("replication slot zoro_0_1 was invalidated"));
            assertEquals(ROLLBACK, d.next());
            assertEquals(Drain.END, d.next());
        }
        expectResyncedTo05(source);
    }

    @Test
    void sourceAutoResetSignalWithoutAutoResetStops() throws Exception {
        FakeChangeSource source = new FakeChangeSource("01");
        source.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS.withAutoReset(false), source);
        try (Drain d = streamIntoOpenTransaction(source)) {
            source.nextStream().fail(new AutoResetException("replication slot zoro_0_1 was invalidated"));
            assertEquals(ROLLBACK, d.next());
            assertEquals(Drain.END, d.next());
        }
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertTrue(streamer.lastError().contains("replication slot zoro_0_1 was invalidated"), streamer.lastError());
        assertNull(source.initializations.poll(100, TimeUnit.MILLISECONDS), "no re-sync without autoReset");
        assertEquals(0, streamer.resets());
        assertEquals(List.of("01,begin", "01,commit", "03,begin", "03,insert", "03,commit"), rows());
    }

    /** Upstream: a second AutoResetSignal (the re-sync did not resolve it) is fatal. */
    @Test
    void autoResetStopsWhenResyncDoesNotResolveTheReset() throws Exception {
        FakeChangeSource source = new FakeChangeSource("01"); // initialize(true) keeps version 01
        start(ChangeStreamerServicePgTest.DEFAULTS, source);
        try (Drain d = streamIntoOpenTransaction(source)) {
            source.push(resetRequired(null));
            assertEquals(ROLLBACK, d.next());
        }
        assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(Boolean.TRUE, source.initializations.poll(10, TimeUnit.SECONDS));
        assertEquals(ChangeStreamerService.State.STOPPED, streamer.state());
        assertTrue(streamer.lastError().contains("ResetRequiredException"), streamer.lastError());
        assertEquals(1, streamer.resets());
        assertFalse(source.stopped, "a shared source service is stopped by its own component, not by a user");
    }

    // ------------------------------------------------------------------ source removal and replacement

    @Test
    void removingActiveSourceEndsStreamAndReplacementResumesFromLastWatermark() throws Exception {
        ChangeStreamerComponent.SourceSlot slot = new ChangeStreamerComponent.SourceSlot();
        FakeChangeSource a = new FakeChangeSource("01");
        FakeChangeSource b = new FakeChangeSource("01");
        slot.set(a);
        start(ChangeStreamerServicePgTest.DEFAULTS, slot);
        try (Drain d = streamIntoOpenTransaction(a)) {
            FakeChangeSource.FakeStream sa = a.nextStream();
            streamer.sourceRemoved(b); // not the current source: ignored
            assertNull(d.poll(100));
            assertFalse(sa.closed);

            slot.clear(a);
            streamer.sourceRemoved(a);
            assertEquals(ROLLBACK, d.next(), "exactly one synthesized rollback for the open transaction");
            assertTrue(sa.closed);
            assertNull(d.poll(200), "nothing while no source is registered");
            assertFalse(a.stopped, "a removed source is stopped by its own bundle, not by the streamer");

            slot.set(b);
            assertEquals(Boolean.FALSE, b.initializations.poll(10, TimeUnit.SECONDS));
            assertEquals("03", b.startWatermarks.poll(10, TimeUnit.SECONDS), "resumed after the last stored watermark");
            b.push(tx("04", "b"));
            List<String> replay = d.next(3);
            assertEquals(List.of("begin", "insert", "commit"), tags(replay));
            assertEquals("04", commitWatermark(replay.get(2)));
            expectAcks(b, "04");
            assertNull(d.poll(100));
            assertTrue(d.sub.failure().isEmpty(), "the subscription survives a source swap");
        }
        assertNull(a.acks.poll(0, TimeUnit.MILLISECONDS), "nothing acked on the removed source after 03");
        assertEquals(List.of("01,begin", "01,commit", "03,begin", "03,insert", "03,commit", "04,begin", "04,insert",
                "04,commit"), rows(), "no lost, partial or duplicated transaction");
        assertEquals(ChangeStreamerService.State.STREAMING, streamer.state());
    }

    @Test
    void replacementSourceWithNewReplicaVersionResetsLogAndEndsSubscriptions() throws Exception {
        ChangeStreamerComponent.SourceSlot slot = new ChangeStreamerComponent.SourceSlot();
        FakeChangeSource a = new FakeChangeSource("01");
        FakeChangeSource b = new FakeChangeSource("09"); // a freshly synced replica, at its initial watermark
        slot.set(a);
        start(ChangeStreamerServicePgTest.DEFAULTS, slot);
        try (Drain d = streamIntoOpenTransaction(a)) {
            slot.clear(a);
            streamer.sourceRemoved(a);
            assertEquals(ROLLBACK, d.next());
            slot.set(b);
            assertEquals("09", b.startWatermarks.poll(10, TimeUnit.SECONDS));
            assertEquals(Drain.END, d.next(), "subscriptions of the old lineage end");
            assertNotNull(d.sub.failure().orElse(null));
        }
        assertEquals(List.of("09,begin", "09,commit"), rows());
        assertEquals("09", streamer.replicaVersion());
    }
}

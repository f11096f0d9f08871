package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changestreamer.internal.Msgs.tx;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.storer.internal.queue.StorerQueue;
import org.zrm.storer.internal.queue.StorerQueueSettings;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * Terminal stops of the change streamer over a real change log: each one makes the streamer
 * unhealthy with its reason and stops the runtime once, with one line naming the reason; an
 * orderly stop does neither.
 */
@PostgresTest
class TerminalStopPgTest {

    private static final String REPLICA_VERSION = "01";
    private static final AtomicInteger SHARDS = new AtomicInteger(700);
    static final StreamerSettings DEFAULTS = StreamerSettings.defaults("task-a", "node-a:4849")
            .withStartupDelay(Duration.ZERO).withSubscriberMaxBufferedBytes(1 << 20);

    private PgDatabase db;
    private String schema;
    private int shard;
    private final List<Node> nodes = new ArrayList<>();

    /** One replication manager: its streamer, fake source and terminal-stop handling. */
    final class Node {
        final PgChangeLog log = new PgChangeLog(StorerSettings.of(db.uri(), "zoro", shard));
        final FakeChangeSource source = new FakeChangeSource(REPLICA_VERSION);
        final List<String> runtimeStops = new CopyOnWriteArrayList<>();
        final ChangeStreamerService streamer;
        final TerminalStop terminal;

        Node(StreamerSettings settings, boolean exitOnTerminalStop) {
            StorerFactory factory = new StorerFactory() {
                @Override
                public Storer start(String taskID, org.zrm.changelog.StorerListener l,
                        org.zrm.changelog.CatchupHandler h) {
                    return new StorerQueue(log, taskID, StorerQueueSettings.defaults(), l, h);
                }

                @Override
                public PgChangeLog changeLog() {
                    return log;
                }
            };
            streamer = new ChangeStreamerService(settings, factory, source, new ManualTimer());
            terminal = new TerminalStop(exitOnTerminalStop, runtimeStops::add, () -> false, Clock.systemUTC());
            streamer.terminated().thenAccept(terminal::streamerTerminated);
            nodes.add(this);
            streamer.start();
        }

        void awaitTerminalStop() throws Exception {
            assertTrue(streamer.awaitStopped(Duration.ofSeconds(10)), "the streamer stopped");
            streamer.terminated().get(10, TimeUnit.SECONDS);
        }
    }

    @BeforeEach
    void setUp(PgDatabase db) {
        this.db = db;
        this.shard = SHARDS.incrementAndGet();
        this.schema = "\"zoro_" + shard + "/cdc\"";
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Node n : nodes) {
            n.terminal.orderlyStop();
            n.streamer.stop(Duration.ofSeconds(10));
            n.log.close();
        }
    }

    @Test
    void ownershipTakenByASecondNode() throws Exception {
        Node a = new Node(DEFAULTS, true);
        a.source.stream();
        a.source.push(tx("03", "a1"));
        assertEquals("03", a.source.acks.poll(10, TimeUnit.SECONDS).watermark());
        // Node B starts over the same change log and takes it over, as a replacement node does.
        Node b = new Node(StreamerSettings.defaults("task-b", "node-b:4849").withStartupDelay(Duration.ZERO)
                .withSubscriberMaxBufferedBytes(1 << 20), true);
        b.source.stream();
        try (Connection c = db.connect(); Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT owner FROM " + schema + ".\"replicationState\"")) {
            assertTrue(rs.next());
            assertEquals("task-b", rs.getString(1));
        }
        a.source.push(tx("05", "a2")); // A finds out at its next commit
        a.awaitTerminalStop();
        assertFalse(a.terminal.healthy());
        assertEquals("OWNERSHIP_LOST", a.terminal.status().get("kind"));
        assertEquals(1, a.runtimeStops.size(), "one stop of the runtime");
        String line = a.runtimeStops.get(0);
        assertTrue(line.startsWith("change streamer stopped: ownership of the change log was taken by another"
                + " replication manager"), line);
        assertTrue(line.contains("task-b"), line);
        assertFalse(line.contains("\n"), "one line");
        assertTrue(b.terminal.healthy(), "the new owner runs on");
        assertEquals(List.of(), b.runtimeStops);
    }

    @Test
    void replicationSlotMissing() throws Exception {
        Node a = new Node(DEFAULTS, true);
        a.source.stream();
        // What the Postgres change source raises when the slot was dropped (PgChangeSource.checkSlot).
        a.source.nextStream().fail(new ChangeSourceAbortedException("replication slot zoro_" + shard
                + "_1 is missing. A different replication-manager should now be running on a new replication slot."));
        a.awaitTerminalStop();
        assertFalse(a.terminal.healthy());
        assertEquals("SLOT_MISSING", a.terminal.status().get("kind"));
        assertEquals(1, a.runtimeStops.size());
        assertTrue(a.runtimeStops.get(0).startsWith("change streamer stopped: the replication slot is missing"),
                a.runtimeStops.get(0));
    }

    @Test
    void resetRequiredWithAutoResetOff() throws Exception {
        Node a = new Node(DEFAULTS.withAutoReset(false), true);
        a.source.stream();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO " + schema + ".\"changeLog\" (watermark, pos, change) VALUES ('03', 0,"
                    + " '{\"tag\":\"begin\"}'); UPDATE " + schema + ".\"replicationState\" SET \"lastWatermark\" = '03'");
        }
        // A backup replica behind the change log can only be re-synced.
        Subscription backup = a.streamer.subscribe(new SubscriberContext(ChangeStreamer.PROTOCOL_VERSION, "backup",
                "task-a", ReplicatorMode.BACKUP, REPLICA_VERSION, "02", true));
        a.awaitTerminalStop();
        assertTrue(backup.failure().isPresent());
        assertEquals("RESET_REQUIRED", a.terminal.status().get("kind"));
        assertEquals(1, a.runtimeStops.size());
        assertTrue(a.runtimeStops.get(0).startsWith("change streamer stopped: the replica must be re-synced and"
                + " autoReset is off"), a.runtimeStops.get(0));
    }

    @Test
    void withoutExitTheNodeStaysUpUnhealthy() throws Exception {
        Node a = new Node(DEFAULTS, false);
        a.source.stream();
        a.source.nextStream().fail(new ChangeSourceAbortedException("aborted"));
        a.awaitTerminalStop();
        assertFalse(a.terminal.healthy());
        assertEquals("UNRECOVERABLE", a.terminal.status().get("kind"));
        assertEquals(false, a.terminal.status().get("exitOnTerminalStop"));
        assertEquals(List.of(), a.runtimeStops, "the runtime is not stopped");
    }

    @Test
    void anOrderlyStopIsNotTerminal() throws Exception {
        Node a = new Node(DEFAULTS, true);
        a.source.stream();
        a.streamer.stop(Duration.ofSeconds(10));
        assertNull(a.streamer.terminated().get(10, TimeUnit.SECONDS));
        assertTrue(a.terminal.healthy());
        assertNull(a.terminal.status());
        assertEquals(List.of(), a.runtimeStops);
    }
}

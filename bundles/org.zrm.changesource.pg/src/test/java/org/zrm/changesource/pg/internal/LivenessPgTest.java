package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.*;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.testing.TcpProxy;
import org.zrm.testing.TestPostgres;

/**
 * Keepalives and inbound liveness against a cluster with {@code wal_sender_timeout = 2s}
 * (upstream 1.8 "reconnect if no response from PG" plus the later fixes #6244, #6348, #6351).
 */
@Tag("pg")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LivenessPgTest {

    private static final long WST_MS = 2000;
    private PgCluster cluster;
    private String dbName;

    @BeforeAll
    void start() {
        cluster = TestPostgres.clusterBuilder().walSenderTimeout(Duration.ofMillis(WST_MS)).start();
        dbName = cluster.createDatabase("liveness");
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private Connection connect() throws Exception {
        return cluster.connect(dbName);
    }

    @Test
    void inboundTimeoutReconnectsFromTheLastAckedWatermarkWithoutLoss() throws Exception {
        try (Connection c = connect(); TcpProxy proxy = new TcpProxy(cluster.port())) {
            exec(c, "CREATE TABLE live(id INT PRIMARY KEY)", "CREATE PUBLICATION live_pub FOR TABLE live");
            String start = createSlot(c, "live_slot");
            createShardTables(c, "live_slot", start, List.of("live_pub"));
            String viaProxy = "postgresql://postgres@127.0.0.1:" + proxy.port() + "/" + dbName;
            PgChangeSource source = initializedSource(settings(viaProxy), start, List.of("live_pub"));
            try {
                ChangeStream stream = source.startStream(start, List.of());
                exec(c, "INSERT INTO live VALUES (1)");
                List<ChangeStreamMessage> first = takeTransactions(stream, 1, Duration.ofSeconds(10));
                CommitMessage commit1 = (CommitMessage) first.get(2);
                ackCommit(stream, commit1);

                proxy.stallServerToClient();
                long stalledAt = System.nanoTime();
                exec(c, "INSERT INTO live VALUES (2)");
                ChangeSourceException e = assertThrows(ChangeSourceException.class,
                        () -> takeTransactions(stream, 1, Duration.ofSeconds(20)));
                long ms = Duration.ofNanos(System.nanoTime() - stalledAt).toMillis();
                assertTrue(e.getMessage().startsWith("replication stream inbound timeout after"), e.getMessage());
                assertTrue(e.isRetryable());
                // Torn down within 2 × wal_sender_timeout of the last byte (plus the watchdog period).
                assertTrue(ms <= 2 * WST_MS + 1000, "took " + ms + "ms");
                stream.close();

                // The streamer reconnects from its last stored watermark; startStream terminates
                // the old walsender, which still believes it is streaming to us.
                ChangeStream again = source.startStream(commit1.watermark(), List.of());
                List<ChangeStreamMessage> resumed = takeTransactions(again, 1, Duration.ofSeconds(10));
                assertTrue(CODEC.encode(resumed.get(1)).contains("\"new\":{\"id\":2}"), encode(resumed).toString());
                exec(c, "INSERT INTO live VALUES (3)");
                List<ChangeStreamMessage> next = takeTransactions(again, 1, Duration.ofSeconds(10));
                assertTrue(CODEC.encode(next.get(1)).contains("\"new\":{\"id\":3}"), "no duplicate, no loss");
                again.close();
            } finally {
                source.stop();
            }
        }
    }

    @Test
    void idleStreamSurvivesWellPastWalSenderTimeoutAndAnswersReplyRequests() throws Exception {
        try (Connection c = connect()) {
            exec(c, "CREATE TABLE idle(id INT PRIMARY KEY)", "CREATE PUBLICATION idle_pub FOR TABLE idle");
            String start = createSlot(c, "idle_slot");
            // A keepalive fraction close to 1 leaves the walsender time to ask for a reply first
            // (it asks after wal_sender_timeout / 2 without one).
            PgSourceSettings s = settings(cluster.uri(dbName));
            s = new PgSourceSettings(s.upstreamUri(), s.shard(), s.publications(), s.replicaFile(), 0, 0, 0.95, 5, 10,
                    s.maxMessageBytes(), s.bufferMessages(), s.bufferBytes());
            PgChangeSource source = source(s);
            try {
                PgChangeStream stream = source.openStream("idle_slot", List.of("idle_pub"), start);
                String pid = queryString(c, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'idle_slot'");
                List<StatusMessage> echoed = new ArrayList<>();
                long until = System.nanoTime() + Duration.ofMillis(3 * WST_MS).toNanos();
                while (System.nanoTime() < until) {
                    ChangeStreamMessage m = stream.poll(Duration.ofMillis(100));
                    if (m instanceof StatusMessage st) {
                        assertEquals(Boolean.TRUE, st.status().ack(), "only reply-requested keepalives are forwarded");
                        echoed.add(st);
                        stream.ack(new org.zrm.protocol.ChangeSourceUpstream(st.status(), st.watermark()));
                    }
                }
                assertFalse(echoed.isEmpty(), "the walsender asked for replies");
                assertEquals(pid, queryString(c,
                        "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'idle_slot'"),
                        "same walsender: it never timed us out, and we never reconnected");
                exec(c, "INSERT INTO idle VALUES (1)");
                assertEquals(3, takeTransactions(stream, 1, Duration.ofSeconds(10)).size());
            } finally {
                source.stop();
            }
        }
    }

    @Test
    void downstreamBackPressureNeverTriggersTheInboundTimeout() throws Exception {
        try (Connection c = connect()) {
            exec(c, "CREATE TABLE bp(id INT PRIMARY KEY, v TEXT)", "CREATE PUBLICATION bp_pub FOR TABLE bp");
            String start = createSlot(c, "bp_slot");
            PgChangeSource source = source(settings(cluster.uri(dbName)).withBuffer(4, 1 << 20));
            try {
                PgChangeStream stream = source.openStream("bp_slot", List.of("bp_pub"), start);
                exec(c, "INSERT INTO bp SELECT g, repeat('v', 200) FROM generate_series(1, 20000) g");
                // Take the begin, then stall the consumer for longer than 2 × wal_sender_timeout.
                assertInstanceOf(ChangeStreamMessage.BeginMessage.class, stream.take());
                Thread.sleep(3 * WST_MS);
                assertTrue(stream.buffered() <= 5, "buffer bounded: " + stream.buffered());
                int rows = 0;
                while (true) {
                    ChangeStreamMessage m = stream.poll(Duration.ofSeconds(10));
                    assertTrue(m != null, "stream stalled after " + rows + " rows");
                    if (m instanceof ChangeStreamMessage.DataMessage) {
                        rows++;
                    }
                    if (m instanceof CommitMessage) {
                        break;
                    }
                }
                assertEquals(20000, rows);
            } finally {
                source.stop();
            }
        }
    }

    @Test
    void inboundTimeoutOverrideReplacesTheDefault() throws Exception {
        try (Connection c = connect(); TcpProxy proxy = new TcpProxy(cluster.port())) {
            exec(c, "CREATE TABLE ov(id INT PRIMARY KEY)", "CREATE PUBLICATION ov_pub FOR TABLE ov");
            String start = createSlot(c, "ov_slot");
            String viaProxy = "postgresql://postgres@127.0.0.1:" + proxy.port() + "/" + dbName;
            PgChangeSource source = source(settings(viaProxy).withInboundTimeoutMs(1000));
            try {
                PgChangeStream stream = source.openStream("ov_slot", List.of("ov_pub"), start);
                proxy.stallServerToClient();
                long t0 = System.nanoTime();
                ChangeSourceException e = assertThrows(ChangeSourceException.class,
                        () -> stream.poll(Duration.ofSeconds(20)));
                long ms = Duration.ofNanos(System.nanoTime() - t0).toMillis();
                assertTrue(e.getMessage().startsWith("replication stream inbound timeout"), e.getMessage());
                assertTrue(ms < 2 * WST_MS, "override (1 s) used instead of 2 × wst: " + ms + "ms");
            } finally {
                source.stop();
            }
        }
    }

    @Test
    void handoffTerminatesThePreviousStreamWhichAborts() throws Exception {
        try (Connection c = connect()) {
            exec(c, "CREATE TABLE ho(id INT PRIMARY KEY)", "CREATE PUBLICATION ho_pub FOR TABLE ho");
            String start = createSlot(c, "ho_slot");
            exec(c, "DROP SCHEMA IF EXISTS zero_0 CASCADE");
            createShardTables(c, "ho_slot", start, List.of("ho_pub"));
            PgChangeSource a = initializedSource(settings(cluster.uri(dbName)), start, List.of("ho_pub"));
            PgChangeSource b = initializedSource(settings(cluster.uri(dbName)), start, List.of("ho_pub"));
            try {
                ChangeStream first = a.startStream(start, List.of());
                ChangeStream second = b.startStream(start, List.of());
                ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class,
                        () -> first.poll(Duration.ofSeconds(10)));
                assertTrue(e.getMessage().contains("shutdown signal received"), e.getMessage());
                exec(c, "INSERT INTO ho VALUES (1)");
                assertEquals(3, takeTransactions(second, 1, Duration.ofSeconds(10)).size());
                assertTrue(queryString(c, "SELECT \"subscriberContext\"::text FROM zero_0.replicas").contains("zero"));
            } finally {
                a.stop();
                b.stop();
                exec(c, "DROP SCHEMA IF EXISTS zero_0 CASCADE");
            }
        }
    }

    @Test
    void aWalsenderEndedWithoutATakeoverIsRetriedNotAborted() throws Exception {
        // wal_sender_timeout after a stall, or an administrator's pg_terminate_backend: the
        // walsender is gone but no other manager wrote itself into subscriberContext.
        try (Connection c = connect()) {
            exec(c, "CREATE TABLE wt(id INT PRIMARY KEY)", "CREATE PUBLICATION wt_pub FOR TABLE wt");
            String start = createSlot(c, "wt_slot");
            exec(c, "DROP SCHEMA IF EXISTS zero_0 CASCADE");
            createShardTables(c, "wt_slot", start, List.of("wt_pub"));
            PgChangeSource a = initializedSource(settings(cluster.uri(dbName)), start, List.of("wt_pub"));
            try {
                ChangeStream stream = a.startStream(start, List.of());
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (queryString(c, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'wt_slot'") == null) {
                    assertTrue(System.nanoTime() < deadline, "slot never became active");
                    Thread.sleep(20);
                }
                exec(c, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'wt_slot'");
                org.zrm.changesource.ChangeSourceException e = assertThrows(
                        org.zrm.changesource.ChangeSourceException.class, () -> stream.poll(Duration.ofSeconds(10)));
                assertTrue(!(e instanceof ChangeSourceAbortedException) && e.isRetryable(), e.toString());
                // And the retry streams again from the same slot.
                ChangeStream again = a.startStream(start, List.of());
                exec(c, "INSERT INTO wt VALUES (1)");
                assertEquals(3, takeTransactions(again, 1, Duration.ofSeconds(10)).size());
            } finally {
                a.stop();
                exec(c, "DROP SCHEMA IF EXISTS zero_0 CASCADE");
            }
        }
    }

    @Test
    void closedStreamReportsClosed() throws Exception {
        try (Connection c = connect()) {
            exec(c, "CREATE TABLE cl(id INT PRIMARY KEY)", "CREATE PUBLICATION cl_pub FOR TABLE cl");
            String start = createSlot(c, "cl_slot");
            PgChangeSource source = source(settings(cluster.uri(dbName)));
            try {
                PgChangeStream stream = source.openStream("cl_slot", List.of("cl_pub"), start);
                stream.close();
                assertThrows(ChangeStreamClosedException.class, stream::take);
                // The walsender notices the closed socket and releases the slot.
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (queryString(c, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'cl_slot'") != null) {
                    assertTrue(System.nanoTime() < deadline, "slot still active after close");
                    Thread.sleep(50);
                }
                assertNull(queryString(c, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'cl_slot'"));
            } finally {
                source.stop();
            }
        }
    }
}

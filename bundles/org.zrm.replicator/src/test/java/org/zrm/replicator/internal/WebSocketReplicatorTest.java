package org.zrm.replicator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.replicator.internal.Msgs.begin;
import static org.zrm.replicator.internal.Msgs.commit;
import static org.zrm.replicator.internal.Msgs.insertIssue;
import static org.zrm.replicator.internal.Msgs.status;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;

class WebSocketReplicatorTest {

    @TempDir
    Path dir;
    Path file;
    FakeWebSocketStreamer server;
    Replicator replicator;

    @BeforeEach
    void setUp() throws Exception {
        file = dir.resolve("replica.db");
        TestReplica.create(file, "01");
        server = new FakeWebSocketStreamer();
        replicator = replicator(server.uri(), Duration.ofSeconds(33));
    }

    private Replicator replicator(URI uri, Duration liveness) {
        return new Replicator(new ReplicaFile(file, 1000), new WebSocketChangeStreamClient(uri, Msgs.CODEC,
                Duration.ofSeconds(5), liveness, 1 << 20), Msgs.CODEC, "task1", "task1/backup-replicator-1", 10, 50);
    }

    @AfterEach
    void tearDown() throws Exception {
        replicator.stop();
        server.close();
    }

    private List<Object> ids() throws Exception {
        try (Connection c = TestReplica.open(file)) {
            return TestReplica.rows(c, "SELECT id FROM issue ORDER BY id").stream().map(r -> r.get("id")).toList();
        }
    }

    @Test
    void replicatesAndAcksEveryFrameInOrder() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn conn = server.awaitConnection();
        assertEquals(new SubscriberContext(6, "task1/backup-replicator-1", "task1", ReplicatorMode.BACKUP, "01", "01", true),
                conn.context);
        conn.send(status(), begin("0a"), insertIssue("a", "one"), insertIssue("b", "two"), commit("0a"));
        conn.awaitAcks(5);
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), conn.acks);
        assertEquals(List.of(), conn.violations);
        assertEquals(List.of("a", "b"), ids());
        assertEquals("0a", replicator.status().stateVersion());
    }

    @Test
    void reconnectsAfterTheConnectionDropsAndResumes() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn first = server.awaitConnection();
        first.send(status(), begin("0a"), insertIssue("a", "one"), commit("0a"), begin("0b"), insertIssue("b", "two"));
        first.awaitAcks(6);
        first.drop();
        FakeWebSocketStreamer.Conn second = server.awaitConnection();
        assertEquals("0a", second.context.watermark());
        assertFalse(second.context.initial());
        second.send(status(), begin("0b"), insertIssue("b", "two"), commit("0b"));
        second.awaitAcks(4);
        assertEquals(List.of("a", "b"), ids());
        assertEquals(List.of(), first.violations);
        assertEquals(List.of(), second.violations);
    }

    @Test
    void errorFrameStopsTheReplicator() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn conn = server.awaitConnection();
        conn.send(Msgs.error(1, "current replica version is 05 (requested 01)"));
        Await.until("stop", () -> replicator.status().phase() == ReplicatorStatus.Phase.STOPPED_ON_ERROR);
        assertTrue(replicator.status().lastError().contains("WrongReplicaVersion"), replicator.status().lastError());
        conn.awaitAcks(1);
        assertNull(server.connections.poll(300, TimeUnit.MILLISECONDS), "no retry for a rejected replica");
    }

    @Test
    void malformedFrameIsReportedAndTheReplicatorReconnects() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn first = server.awaitConnection();
        first.send(status());
        first.sendRaw("{\"id\":2,\"msg\":[\"begin\"");
        FakeWebSocketStreamer.Conn second = server.awaitConnection();
        assertTrue(replicator.status().lastError().startsWith("malformed frame from change streamer"),
                replicator.status().lastError());
        assertEquals("01", second.context.watermark());
    }

    @Test
    void outOfSequenceFrameIdIsAProtocolError() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn first = server.awaitConnection();
        first.sendRaw("{\"id\":5,\"msg\":[\"status\",{\"tag\":\"status\"}]}");
        server.awaitConnection();
        assertTrue(replicator.status().lastError().contains("out of sequence"), replicator.status().lastError());
    }

    @Test
    void protocolErrorCloseIsReportedAndRetried() throws Exception {
        replicator.start();
        server.awaitConnection().close(1002, "Error: invalid querystring - missing id");
        server.awaitConnection();
        assertTrue(replicator.status().lastError().contains("1002 Error: invalid querystring - missing id"),
                replicator.status().lastError());
    }

    @Test
    void silentServerIsDetectedByTheLivenessTimeout() throws Exception {
        replicator.stop();
        replicator = replicator(server.uri(), Duration.ofMillis(300));
        replicator.start();
        server.awaitConnection().send(status()); // then nothing: no messages, no pings
        server.awaitConnection();
        assertTrue(replicator.status().lastError().contains("no message or ping"), replicator.status().lastError());
    }

    @Test
    void unreachableStreamerIsRetriedUntilItComesUp() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        replicator.stop();
        replicator = replicator(URI.create("http://127.0.0.1:" + port), Duration.ofSeconds(33));
        replicator.start();
        Await.until("connect failures", () -> replicator.status().reconnects() >= 2);
        assertTrue(replicator.status().lastError().contains("cannot connect to change streamer"),
                replicator.status().lastError());
        try (FakeWebSocketStreamer late = new FakeWebSocketStreamer(port)) {
            FakeWebSocketStreamer.Conn conn = late.awaitConnection();
            conn.send(status(), begin("0a"), insertIssue("a", "one"), commit("0a"));
            conn.awaitAcks(4);
            assertEquals(List.of("a"), ids());
            replicator.stop();
        }
    }

    @Test
    void buildsZeroCacheStyleUris() {
        WebSocketChangeStreamClient client = new WebSocketChangeStreamClient(URI.create("http://localhost:4849"),
                Msgs.CODEC, Duration.ofSeconds(1), Duration.ofSeconds(1), 1024);
        assertEquals("ws://localhost:4849/", client.target());
        assertEquals("ws://localhost:4849/replication/v6/changes?id=t%2Fbackup-replicator-7&taskID=t&mode=backup"
                        + "&replicaVersion=01&watermark=0a&initial=false",
                client.changesUri(new SubscriberContext(6, "t/backup-replicator-7", "t", ReplicatorMode.BACKUP, "01", "0a",
                        false)).toString());
        assertEquals("wss://cs.example/base/", WebSocketChangeStreamClient.normalize(URI.create("wss://cs.example/base")).toString());
        assertThrows(IllegalArgumentException.class,
                () -> WebSocketChangeStreamClient.normalize(URI.create("postgres://127.0.0.1/x")));
    }

    @Test
    void largeTransactionsFlowThroughThePrefetchWindow() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn conn = server.awaitConnection();
        int rows = 3 * WebSocketChangeStreamClient.PREFETCH_FRAMES;
        String[] msgs = new String[rows + 3];
        msgs[0] = status();
        msgs[1] = begin("0a");
        for (int i = 0; i < rows; i++) {
            msgs[i + 2] = insertIssue("k" + (1000 + i), "t");
        }
        msgs[rows + 2] = commit("0a");
        conn.send(msgs);
        conn.awaitAcks(msgs.length);
        assertEquals(List.of(), conn.violations);
        assertEquals(rows, ids().size());
    }

    @Test
    void oversizedMessageIsRejected() throws Exception {
        replicator.start();
        FakeWebSocketStreamer.Conn conn = server.awaitConnection();
        conn.send(status(), begin("0a"), insertIssue("a", "x".repeat(2 << 20)));
        server.awaitConnection();
        assertTrue(replicator.status().lastError().contains("message larger than 1048576 bytes"),
                replicator.status().lastError());
        assertEquals(List.of(), ids());
    }
}

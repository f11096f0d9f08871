package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;

/** The endpoint on an embedded Jetty, driven by a JDK WebSocket client. */
class EndpointSocketTest {

    private final FakeStreamer streamer = new FakeStreamer();
    private TestServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private TestClient.Close closeOf(String url) throws Exception {
        try (TestClient c = new TestClient(url)) {
            return c.awaitClose();
        }
    }

    @Test
    void resumingClientGetsTheStreamAndItsAcksConsume() throws Exception {
        server = new TestServer(streamer);
        try (TestClient c = new TestClient(server.url("&lastWatermark=03&replicaVersion=01"))) {
            FakeStreamer.Sub sub = streamer.next();
            assertEquals("03", sub.context.watermark());
            assertEquals("01", sub.context.replicaVersion()); // the streamer's, for its equality check
            assertEquals(6, sub.context.protocolVersion());
            sub.push(Wire.begin("04"));
            sub.push(Wire.insert(7));
            FakeStreamer.Msg commit = sub.push(Wire.commit("04"));
            assertEquals(Wire.begin("04"), c.next());
            assertEquals(Wire.insert(7), c.next());
            assertEquals(Wire.commit("04"), c.next());
            c.send(Wire.ack("04"));
            assertTrue(commit.awaitConsumed());
            assertEquals(1, server.endpoint.stats().openConnections());
        }
    }

    @Test
    void oldReplicaVersionGetsResetRequiredAndANormalClose() throws Exception {
        streamer.state = new ChangeLogState("05", "05");
        server = new TestServer(streamer);
        try (TestClient c = new TestClient(server.url("&lastWatermark=04&replicaVersion=02"))) {
            String control = c.next();
            assertTrue(control.startsWith("[\"control\",{\"tag\":\"reset-required\",\"message\":\"replicaVersion 02"),
                    control);
            TestClient.Close close = c.awaitClose();
            assertEquals(1000, close.code());
        }
        assertEquals(1, server.endpoint.stats().rejects(Reason.RESET_REQUIRED));
        assertTrue(streamer.subscriptions.isEmpty());
    }

    @Test
    void badRequestsGetCloseCodesAndReasons() throws Exception {
        server = new TestServer(streamer);
        assertEquals(new TestClient.Close(1008, "missing apiKey"),
                closeOf(server.rawUrl("?appID=zero&shardNum=0")));
        assertEquals(new TestClient.Close(1008, "invalid apiKey"),
                closeOf(server.rawUrl("?apiKey=nope&appID=zero&shardNum=0")));
        assertEquals(new TestClient.Close(1008, "missing appID"),
                closeOf(server.rawUrl("?apiKey=" + TestServer.KEY + "&shardNum=0")));
        assertEquals(new TestClient.Close(1008, "publications [other] do not match the replicated publications"
                + " [zero_data]"), closeOf(server.rawUrl("?apiKey=" + TestServer.KEY
                + "&appID=zero&shardNum=0&publications=other")));
        assertEquals(2, server.endpoint.stats().rejects(Reason.UNAUTHORIZED));
        assertEquals(2, server.endpoint.stats().rejects(Reason.BAD_PARAMETERS));
        assertTrue(streamer.subscriptions.isEmpty());
    }

    @Test
    void garbageFromOneClientClosesOnlyThatClient() throws Exception {
        server = new TestServer(streamer);
        try (TestClient good = new TestClient(server.url("&lastWatermark=01&replicaVersion=01"));
             TestClient bad = new TestClient(server.url("&lastWatermark=01&replicaVersion=01"))) {
            FakeStreamer.Sub first = streamer.next();
            FakeStreamer.Sub second = streamer.next();
            bad.send("this is not json");
            TestClient.Close close = bad.awaitClose();
            assertEquals(1002, close.code());
            assertTrue(close.reason().startsWith("invalid upstream message: "), close.reason());
            // Which subscription belonged to the bad client: the one that was closed.
            FakeStreamer.Sub alive = second.closed.await(5, TimeUnit.SECONDS) ? first : second;
            assertTrue((alive == first ? second : first).closed.getCount() == 0);
            alive.push(Wire.begin("02"));
            assertEquals(Wire.begin("02"), good.next());
        }
        assertEquals(1, server.endpoint.stats().rejects(Reason.PROTOCOL));
    }

    @Test
    void oversizedUpstreamFrameIsClosedWith1009() throws Exception {
        server = new TestServer(streamer, null, new Settings(Duration.ofSeconds(30), 1 << 20, 100));
        try (TestClient c = new TestClient(server.url("&lastWatermark=01&replicaVersion=01"))) {
            streamer.next();
            c.send(Wire.ack("01") + " ".repeat(200));
            assertEquals(1009, c.awaitClose().code());
        }
    }

    @Test
    void freshClientWithoutASnapshotSourceIsToldSo() throws Exception {
        server = new TestServer(streamer);
        TestClient.Close close = closeOf(server.url(""));
        assertEquals(1011, close.code());
        assertEquals("this endpoint has no replica to serve an initial sync from", close.reason());
    }

    @Test
    void freshClientGetsTheSnapshotThenTheStreamFromItsWatermark() throws Exception {
        InitialSnapshot snapshot = sink -> {
            sink.frame(Wire.begin("03"), null);
            sink.frame(Wire.insert(1), null);
            sink.frame(Wire.commit("03"), "03");
            return "03";
        };
        server = new TestServer(streamer, snapshot, new Settings(Duration.ofSeconds(30), 1 << 20, 4096));
        try (TestClient c = new TestClient(server.url(""))) {
            assertEquals(Wire.begin("03"), c.next());
            assertEquals(Wire.insert(1), c.next());
            assertEquals(Wire.commit("03"), c.next());
            FakeStreamer.Sub sub = streamer.next();
            assertEquals("03", sub.context.watermark());
            c.send(Wire.ack("03")); // acking the snapshot is not an error
            sub.push(Wire.begin("04"));
            assertEquals(Wire.begin("04"), c.next());
        }
    }

    @Test
    void noStreamerMeans1011() throws Exception {
        server = new TestServer(null);
        assertEquals(new TestClient.Close(1011, "no change streamer is running"),
                closeOf(server.url("&lastWatermark=01&replicaVersion=01")));
    }
}

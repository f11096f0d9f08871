package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeMessage;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeSubscription;

/**
 * The {@code /replication/v{N}/changes} endpoint over a real Jetty and a real WebSocket client
 * (upstream {@code change-streamer-http.pg.test.ts} and {@code types/streams.test.ts}).
 */
class ChangesEndpointTest {

    private static final String CHANGES = "/replication/v6/changes";
    private static final String ROLLBACK = "[\"rollback\",{\"tag\":\"rollback\"}]";
    private static final String QUERY =
            "?id=foo&taskID=foo-task&mode=serving&replicaVersion=abc&watermark=123&initial=true";

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(Settings.DEFAULTS);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "invalid querystring - missing id|/replication/v6/changes",
        "Missing taskID in snapshot request|/replication/v6/snapshot",
        "Missing taskID in snapshot request|/replication/v6/snapshot?taskID=",
        "invalid querystring - missing watermark|/replication/v6/changes?id=foo&replicaVersion=bar&initial=true",
        "invalid querystring - missing replicaVersion|/replication/v6/changes?id=foo&watermark=123",
        "Cannot service client at protocol v7. Supported protocols: [v1 ... v6]|/replication/v7/changes?id=foo&replicaVersion=bar&watermark=123&initial=true",
        "Cannot service client at protocol v7. Supported protocols: [v1 ... v6]|/replication/v7/snapshot?id=foo&replicaVersion=bar&watermark=123&initial=true",
        "Cannot service client at protocol v0. Supported protocols: [v1 ... v6]|/replication/v0/changes?id=foo&replicaVersion=bar&watermark=123",
        "invalid path: /replication/v6/other|/replication/v6/other?id=foo",
        "invalid path: /replication/vx/changes|/replication/vx/changes?id=foo",
    })
    void badRequestsAreUpgradedThenClosedWithUpstreamReason(String error, String path) throws Exception {
        try (TestClient client = new TestClient(server.ws(path))) {
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals("Error: " + error, close.reason());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    @Test
    void longInvalidPathReasonIsElidedTo123Bytes() throws Exception {
        String path = "/replication/" + "x".repeat(200);
        try (TestClient client = new TestClient(server.ws(path))) {
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals(123, close.reason().length());
            assertTrue(close.reason().startsWith("Error: invalid path: /replication/xxx"));
            assertTrue(close.reason().endsWith("..."));
        }
    }

    @Test
    void healthChecksAnswerOk() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        for (String path : new String[] {"/", "/?foo=bar", "/keepalive"}) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(server.http(path))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), path);
            assertEquals("OK", response.body(), path);
        }
        HttpResponse<String> missing = http.send(HttpRequest.newBuilder(URI.create(server.http("/nope"))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, missing.statusCode());
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    @Test
    void aBrowserOpeningTheRootIsSentToTheStatusPageAndHealthChecksAreNot() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> browser = http.send(HttpRequest.newBuilder(URI.create(server.http("/")))
                .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(302, browser.statusCode());
        assertEquals("/ui/", browser.headers().firstValue("Location").orElse(null));
        HttpResponse<String> keepalive = http.send(HttpRequest.newBuilder(URI.create(server.http("/keepalive")))
                .header("Accept", "text/html").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals("OK", keepalive.body(), "keepalive always answers OK");
        HttpResponse<String> curl = http.send(HttpRequest.newBuilder(URI.create(server.http("/")))
                .header("Accept", "*/*").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals("OK", curl.body());
    }

    @Test
    void basicChangesContextRoundTripAndReservationEnd() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            assertEquals(new SubscriberContext(6, "foo", "foo-task", ReplicatorMode.SERVING, "abc", "123", true),
                    sub.context);
            assertEquals(java.util.List.of("foo-task"), server.streamer.endedReservations);

            FakeMessage begin = sub.push("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"456\"}]");
            FakeMessage commit = sub.push("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"456\"}]");
            assertEquals("{\"id\":1,\"msg\":[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"456\"}]}", client.next());
            assertEquals("{\"id\":2,\"msg\":[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"456\"}]}", client.next());
            assertFalse(begin.isConsumed());

            client.ack(1);
            assertTrue(begin.awaitConsumed());
            client.ack(2);
            assertTrue(commit.awaitConsumed());

            // The client going away closes the server-side subscription.
            client.socket.sendClose(1000, "done").get(10, TimeUnit.SECONDS);
            assertTrue(sub.awaitClosed());
        }
    }

    @Test
    void reservationNotEndedUnlessInitialWithTask() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES
                + "?id=foo&taskID=foo-task&mode=backup&replicaVersion=abc&watermark=123&initial=false"))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            assertEquals(ReplicatorMode.BACKUP, sub.context.mode());
            assertFalse(sub.context.initial());
        }
        try (TestClient client = new TestClient(server.ws(CHANGES
                + "?id=foo&taskID=&replicaVersion=abc&watermark=123&initial=true"))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            assertNull(sub.context.taskID());
        }
        assertTrue(server.streamer.endedReservations.isEmpty());
    }

    @Test
    void everyProtocolVersionIsServed() throws Exception {
        for (int v = 1; v <= 6; v++) {
            try (TestClient client = new TestClient(server.ws("/replication/v" + v + "/changes" + QUERY))) {
                FakeSubscription sub = server.streamer.nextSubscription();
                assertEquals(v, sub.context.protocolVersion());
                sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
                assertEquals("{\"id\":1,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", client.next());
            }
        }
    }

    @Test
    void pipelinedFramesAndCumulativeAcks() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage[] messages = new FakeMessage[5];
            for (int i = 0; i < 5; i++) {
                messages[i] = sub.push("[\"data\",{\"tag\":\"insert\",\"n\":" + i + "}]");
            }
            // All frames arrive before any ack: the server does not wait per message.
            for (int i = 0; i < 5; i++) {
                assertEquals("{\"id\":" + (i + 1) + ",\"msg\":[\"data\",{\"tag\":\"insert\",\"n\":" + i + "}]}",
                        client.next());
            }
            client.ack(3); // implies 1 and 2
            assertTrue(messages[2].awaitConsumed());
            assertTrue(messages[0].isConsumed());
            assertTrue(messages[1].isConsumed());
            assertFalse(messages[3].isConsumed());
            client.ack(4);
            client.ack(5);
            assertTrue(messages[4].awaitConsumed());
            assertTrue(messages[3].isConsumed());
            awaitCount(5, server.metrics::acksReceived);
            assertFalse(client.closed.isDone());
        }
    }

    @Test
    void ackOfAnAlreadyAcknowledgedFrameClosesWithProtocolError() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            FakeMessage second = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            client.next();
            client.next();
            client.next();
            client.ack(2);
            assertTrue(second.awaitConsumed());
            client.ack(1);
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals("Error: Unexpected ack for 3: 1", close.reason());
            assertTrue(sub.awaitClosed());
            assertEquals(1, server.metrics.protocolErrors());
        }
    }

    @Test
    void ackOfAFrameNeverSentClosesWithProtocolError() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage only = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            client.next();
            client.ack(9);
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals("Error: Unexpected ack for 1: 9", close.reason());
            assertTrue(sub.awaitClosed());
            assertFalse(only.isConsumed());
        }
    }

    @Test
    void garbageFrameClosesOnlyThatConnection() throws Exception {
        try (TestClient good = new TestClient(server.ws(CHANGES + QUERY));
                TestClient bad = new TestClient(server.ws(CHANGES + QUERY.replace("id=foo", "id=bar")))) {
            FakeSubscription first = server.streamer.nextSubscription();
            FakeSubscription second = server.streamer.nextSubscription();
            FakeSubscription goodSub = first.context.id().equals("foo") ? first : second;
            FakeSubscription badSub = goodSub == first ? second : first;

            bad.send("not json");
            TestClient.Close close = bad.awaitClose();
            assertEquals(1002, close.code());
            assertTrue(close.reason().startsWith("Error: invalid ack not json: "), close.reason());
            assertTrue(badSub.awaitClosed());

            FakeMessage m = goodSub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            assertEquals("{\"id\":1,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", good.next());
            good.ack(1);
            assertTrue(m.awaitConsumed());
            assertFalse(goodSub.isClosed());
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"ack\":\"1\"}",
        "{\"ack\":1,\"extra\":true}",
        "[1]",
        "{\"id\":1}",
    })
    void wrongShapeClosesWithProtocolError(String frame) throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            client.next();
            client.send(frame);
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertTrue(close.reason().startsWith("Error: invalid ack "), close.reason());
            assertTrue(sub.awaitClosed());
        }
    }

    @Test
    void binaryFrameClosesWithProtocolError() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            client.socket.sendBinary(ByteBuffer.wrap(new byte[] {1, 2, 3}), true).get(10, TimeUnit.SECONDS);
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals("Error: Expected string message", close.reason());
            assertTrue(sub.awaitClosed());
        }
    }

    @Test
    void bigintsAndUnicodeAreSentVerbatim() throws Exception {
        String msg = "[\"data\",{\"tag\":\"insert\",\"relation\":{\"tag\":\"relation\",\"schema\":\"public\","
                + "\"name\":\"issues\",\"rowKey\":{\"columns\":[\"id\"],\"type\":\"default\"}},"
                + "\"new\":{\"id\":\"foo\",\"big1\":9007199254740992,\"big2\":9007199254740993,"
                + "\"big3\":987654321987654321,\"text\":\"h\u00e9\u4e16\\u0000\\ud83d\\ude00\"}}]";
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push(msg);
            assertEquals("{\"id\":1,\"msg\":" + msg + "}", client.next());
        }
    }

    @Test
    void oneSharedEncodingIsFramedForEverySubscriberWithItsOwnIdsAndLeftUntouched() throws Exception {
        // The streamer hands every subscriber views of one encoding; the transport must copy from
        // it without moving it, so even the very same buffer object serves each connection whole.
        String first = "[\"data\",{\"tag\":\"insert\",\"new\":{\"t\":\"h\u00e9\u4e16\ud83d\ude00\"}}]";
        String second = "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"0a\"}]";
        ByteBuffer shared = ByteBuffer.wrap(second.getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
        FakeMessage secondMessage = new FakeMessage(second, shared);
        try (TestClient a = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription subA = server.streamer.nextSubscription();
            try (TestClient b = new TestClient(server.ws(CHANGES + QUERY.replace("id=foo", "id=bar")))) {
                FakeSubscription subB = server.streamer.nextSubscription();
                subA.push(first);
                subA.push(secondMessage);
                subB.push(secondMessage);
                assertEquals("{\"id\":1,\"msg\":" + first + "}", a.next());
                assertEquals("{\"id\":2,\"msg\":" + second + "}", a.next());
                assertEquals("{\"id\":1,\"msg\":" + second + "}", b.next());
                assertEquals(0, shared.position());
                assertEquals(second.getBytes(StandardCharsets.UTF_8).length, shared.remaining());
            }
        }
    }

    @Test
    void largeMessagesAreSentWhole() throws Exception {
        String msg = "[\"data\",{\"tag\":\"insert\",\"new\":{\"s\":\"" + "x".repeat(3 << 20) + "\"}}]";
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage m = sub.push(msg);
            assertEquals("{\"id\":1,\"msg\":" + msg + "}", client.next());
            client.ack(1);
            assertTrue(m.awaitConsumed());
        }
    }

    @Test
    void streamerEndingTheSubscriptionClosesNormallyAfterItsFrames() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push("[\"error\",{\"type\":1,\"message\":\"current replica version is 01 (requested abc)\"}]");
            sub.end();
            assertEquals("{\"id\":1,\"msg\":[\"error\",{\"type\":1,\"message\":\"current replica version is 01 "
                    + "(requested abc)\"}]}", client.next());
            TestClient.Close close = client.awaitClose();
            assertEquals(1000, close.code());
        }
    }

    @Test
    void streamerFailingTheSubscriptionClosesWithInternalError() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.fail(new IllegalStateException("change log unavailable"));
            TestClient.Close close = client.awaitClose();
            assertEquals(1011, close.code());
            assertEquals("Error: change log unavailable", close.reason());
            assertTrue(client.messages.isEmpty());
        }
    }

    @Test
    void clientAbortClosesTheSubscription() throws Exception {
        TestClient client = new TestClient(server.ws(CHANGES + QUERY));
        FakeSubscription sub = server.streamer.nextSubscription();
        FakeMessage m = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
        client.next();
        client.close(); // abort, no close handshake
        assertTrue(sub.awaitClosed());
        assertFalse(m.isConsumed());
    }

    @Test
    void unackedBoundHoldsBackFramesUntilAcked() throws Exception {
        server.close();
        server = new TestServer(Settings.DEFAULTS.withMaxUnackedChars(100));
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            String msg = "[\"data\",{\"tag\":\"insert\",\"s\":\"" + "y".repeat(40) + "\"}]"; // frame ~80 chars
            FakeMessage first = sub.push(msg);
            sub.push(msg);
            sub.push(msg);
            assertEquals("{\"id\":1,\"msg\":" + msg + "}", client.next());
            // The second frame would exceed 100 unacknowledged characters: it waits for the ack.
            assertNull(client.messages.poll(300, TimeUnit.MILLISECONDS));
            client.ack(1);
            assertTrue(first.awaitConsumed());
            assertEquals("{\"id\":2,\"msg\":" + msg + "}", client.next());
            client.ack(2);
            assertEquals("{\"id\":3,\"msg\":" + msg + "}", client.next());
        }
    }

    /**
     * A batch resumed part-way (its first frame waited for an ack) is counted in the unacked
     * window with its own frames' sizes, so that acking everything empties the window. Sizes chosen
     * so that a miscount shows: two large frames do not fit the window together, a large and a
     * small one do, and after the acks the next large frame must fit again.
     */
    @Test
    void aBatchResumedAfterAFullWindowIsCountedWithItsOwnSizes() throws Exception {
        server.close();
        server = new TestServer(Settings.DEFAULTS.withMaxUnackedChars(260));
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            String large = "[\"data\",{\"tag\":\"insert\",\"s\":\"" + "y".repeat(150) + "\"}]"; // frame 197 chars
            sub.push(large);
            sub.push(large);
            sub.push(ROLLBACK); // frame 46 chars
            assertEquals("{\"id\":1,\"msg\":" + large + "}", client.next());
            assertNull(client.messages.poll(300, TimeUnit.MILLISECONDS), "the second large frame waits for the ack");
            client.ack(1);
            assertEquals("{\"id\":2,\"msg\":" + large + "}", client.next());
            assertEquals("{\"id\":3,\"msg\":" + ROLLBACK + "}", client.next());
            client.ack(3);
            sub.push(large);
            assertEquals("{\"id\":4,\"msg\":" + large + "}", client.next(), "everything was acked: the window is empty");
        }
    }

    @Test
    void oversizedFrameIsSentWhenNothingIsOutstanding() throws Exception {
        server.close();
        server = new TestServer(Settings.DEFAULTS.withMaxUnackedChars(10).withMaxQueuedChars(10));
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            assertEquals("{\"id\":1,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", client.next());
            client.ack(1);
            assertEquals("{\"id\":2,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", client.next());
        }
    }

    @Test
    void departingStreamerClosesItsConnectionsAndNewOnesUseTheReplacement() throws Exception {
        FakeChangeStreamer replacement = new FakeChangeStreamer();
        try (TestClient old = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription oldSub = server.streamer.nextSubscription();
            server.endpoint.bind(replacement); // DS binds the replacement first, then unbinds
            server.endpoint.unbind(server.streamer);
            TestClient.Close close = old.awaitClose();
            assertEquals(1001, close.code());
            assertTrue(oldSub.awaitClosed());
            try (TestClient fresh = new TestClient(server.ws(CHANGES + QUERY))) {
                FakeSubscription sub = replacement.nextSubscription();
                sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
                assertEquals("{\"id\":1,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", fresh.next());
            }
        }
    }

    @Test
    void withoutStreamerRequestsAreClosedWithTryAgainLater() throws Exception {
        server.endpoint.unbind(server.streamer);
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            TestClient.Close close = client.awaitClose();
            assertEquals(1013, close.code());
            assertEquals("Error: no change streamer is running", close.reason());
        }
    }

    @Test
    void metricsCountConnectionsFramesAndAcks() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            assertEquals(1, server.metrics.openConnections(HttpMetrics.Endpoint.CHANGES));
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            client.next();
            client.ack(1);
            client.socket.sendClose(1000, "").get(10, TimeUnit.SECONDS);
            assertTrue(sub.awaitClosed());
        }
        awaitCount(1, server.metrics::framesSent);
        awaitCount(1, server.metrics::acksReceived);
        assertEquals(0, server.metrics.openConnections(HttpMetrics.Endpoint.CHANGES));
        String text = new PrometheusRenderer().render(java.util.List.of(server.metrics));
        assertTrue(text.contains("zrm_changestreamer_http_frames_sent_total 1\n"), text);
        assertTrue(text.contains("zrm_changestreamer_http_connections{endpoint=\"changes\"} 0\n"), text);
    }
    // Acks are read from the frames' bytes, without Jetty building a String per message
    // (WsConnection.onWebSocketFrame): what Jetty used to do for text messages is done there and
    // tested here. Bytes that are not UTF-8 need a raw client: a Java WebSocket client cannot send them.

    @Test
    void anAckSplitOverSeveralFramesIsPutTogether() throws Exception {
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage first = sub.push(ROLLBACK);
            FakeMessage second = sub.push(ROLLBACK);
            client.next();
            client.next();
            client.socket.sendText("{\"ack\"", false).get();
            client.socket.sendText(":", false).get();
            client.socket.sendText("2}", true).get();
            assertTrue(first.awaitConsumed());
            assertTrue(second.awaitConsumed());
        }
    }

    @Test
    void aSplitMessageOverTheBoundClosesWithMessageTooBig() throws Exception {
        long max = Settings.DEFAULTS.maxIncomingMessageBytes();
        try (TestClient client = new TestClient(server.ws(CHANGES + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            String half = "x".repeat((int) (max / 2) + 1);
            client.socket.sendText(half, false).get();
            client.socket.sendText(half, true).get();
            TestClient.Close close = client.awaitClose();
            assertEquals(1009, close.code());
            assertEquals("Text message too large: more than " + max + " bytes", close.reason());
            assertTrue(sub.awaitClosed());
        }
    }

    @Test
    void bytesThatAreNotUtf8CloseWithBadPayload() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            upgrade(socket, CHANGES + QUERY);
            FakeSubscription sub = server.streamer.nextSubscription();
            writeMaskedText(socket.getOutputStream(), new byte[] {'{', (byte) 0xC3, (byte) 0x28, '}'});
            int[] code = {0};
            String reason = readClose(new DataInputStream(socket.getInputStream()), code);
            assertEquals(1007, code[0]);
            assertEquals("Error: text message is not valid UTF-8", reason);
            assertTrue(sub.awaitClosed());
        }
    }

    private static void upgrade(Socket socket, String path) throws IOException {
        String key = Base64.getEncoder().encodeToString("zrm-ack-bytes-01".getBytes(StandardCharsets.US_ASCII));
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            head.write(in.readUnsignedByte());
        }
        assertTrue(head.toString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 101"), head.toString());
    }

    /** One final text frame, masked as a client must (RFC 6455 §5.3), payload under 126 bytes. */
    private static void writeMaskedText(OutputStream out, byte[] payload) throws IOException {
        byte[] mask = {0x11, 0x22, 0x33, 0x44};
        out.write(0x81);
        out.write(0x80 | payload.length);
        out.write(mask);
        for (int i = 0; i < payload.length; i++) {
            out.write(payload[i] ^ mask[i % 4]);
        }
        out.flush();
    }

    /** Skips frames until the server's close frame; returns its reason and puts its code in {@code code[0]}. */
    private static String readClose(DataInputStream in, int[] code) throws IOException {
        while (true) {
            int op = in.readUnsignedByte() & 0x0F;
            long length = in.readUnsignedByte() & 0x7F;
            if (length == 126) {
                length = in.readUnsignedShort();
            } else if (length == 127) {
                length = in.readLong();
            }
            byte[] payload = in.readNBytes((int) length);
            if (op == 0x8) {
                code[0] = ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
                return new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
            }
        }
    }

    /**
     * Waits until a counter reaches {@code expected}, and fails if it goes beyond. The endpoint adds
     * to its counters once per read and once per drain, on its own threads, just after the client
     * may already have seen the effect; there is no signal for that moment, so this polls.
     */
    private static void awaitCount(long expected, java.util.function.LongSupplier counter) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (counter.getAsLong() < expected && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(expected, counter.getAsLong());
    }
}

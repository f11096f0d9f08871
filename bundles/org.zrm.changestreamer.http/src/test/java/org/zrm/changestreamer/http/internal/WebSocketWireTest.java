package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeMessage;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeSubscription;

/**
 * {@link ReplicationServlet}'s handshake and {@link WebSocketWire}'s frames as bytes on a plain
 * socket: what a WebSocket client library would hide (length encodings, masking, the close
 * handshake, bytes pipelined behind the upgrade request, frames split across TCP segments).
 */
class WebSocketWireTest {

    private static final String CHANGES = "/replication/v6/changes";
    private static final String QUERY =
            "?id=foo&taskID=foo-task&mode=serving&replicaVersion=abc&watermark=123&initial=true";
    /** RFC 6455 §1.3's example. */
    private static final String SAMPLE_KEY = "dGhlIHNhbXBsZSBub25jZQ==";
    private static final String SAMPLE_ACCEPT = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
    /** {@code {"id":1,"msg":} and {@code }}: what the server adds around a message. */
    private static final int FRAMING = "{\"id\":1,\"msg\":}".length();

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        // No liveness pings during a test: every frame read is one the test caused.
        server = new TestServer(Settings.DEFAULTS.withPingInterval(Duration.ofMinutes(10)));
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    // ------------------------------------------------------------------ handshake

    @Test
    void theHandshakeAnswersWithTheAcceptKeyOfRfc6455() throws Exception {
        assertEquals(SAMPLE_ACCEPT, ReplicationServlet.acceptKey(SAMPLE_KEY));
        try (Raw raw = new Raw(server)) {
            raw.write(request(CHANGES + QUERY, SAMPLE_KEY, "13", "Sec-WebSocket-Extensions: permessage-deflate\r\n"));
            Head head = raw.readHead();
            assertEquals(101, head.status(), head.text());
            assertEquals("websocket", head.header("Upgrade").toLowerCase(Locale.ROOT));
            assertEquals("upgrade", head.header("Connection").toLowerCase(Locale.ROOT));
            assertEquals(SAMPLE_ACCEPT, head.header("Sec-WebSocket-Accept"));
            // Nothing is negotiated, so frames must come without compression (RSV1 clear).
            assertNull(head.header("Sec-WebSocket-Extensions"));
            assertNull(head.header("Sec-WebSocket-Protocol"));
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            assertEquals(0x81, raw.readFrame().b0());
        }
    }

    @Test
    void aPlainGetIsABadRequest() throws Exception {
        try (Raw raw = new Raw(server)) {
            raw.write(("GET " + CHANGES + QUERY + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertEquals(400, raw.readHead().status());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    @Test
    void anUpgradeWithAnotherMethodIsABadRequest() throws Exception {
        try (Raw raw = new Raw(server)) {
            raw.write(request(CHANGES + QUERY, SAMPLE_KEY, "13", "").replace("GET ", "POST ").replace(
                    "\r\n\r\n", "\r\nContent-Length: 0\r\n\r\n"));
            assertEquals(400, raw.readHead().status());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    @Test
    void anotherWebSocketVersionIsUpgradeRequiredNaming13() throws Exception {
        try (Raw raw = new Raw(server)) {
            raw.write(request(CHANGES + QUERY, SAMPLE_KEY, "8", ""));
            Head head = raw.readHead();
            assertEquals(426, head.status(), head.text());
            assertEquals("13", head.header("Sec-WebSocket-Version"), head.text());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    @Test
    void aMissingKeyIsABadRequest() throws Exception {
        try (Raw raw = new Raw(server)) {
            raw.write(request(CHANGES + QUERY, null, "13", ""));
            assertEquals(400, raw.readHead().status());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    /**
     * The bytes after an upgrade request's head are the client's first frames: a body would be read
     * as frames. The chunked body is empty but well formed, so the header alone must be refused.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Content-Length: 5\r\n|hello", "Transfer-Encoding: chunked\r\n|0\r\n\r\n"})
    void anUpgradeWithABodyIsABadRequest(String headerAndBody) throws Exception {
        String[] parts = headerAndBody.split("\\|", 2);
        try (Raw raw = new Raw(server)) {
            raw.write(request(CHANGES + QUERY, SAMPLE_KEY, "13", parts[0]) + parts[1]);
            Head head = raw.readHead();
            assertEquals(400, head.status(), head.text());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    /** §4.1: the key is 16 random bytes in base64; anything else is not a WebSocket client. */
    @ParameterizedTest
    @ValueSource(strings = {"not-base64!", "AAECAwQFBgc=", "AAECAwQFBgcICQoLDA0O", "AAECAwQFBgcICQoLDA0ODxA="})
    void aKeyThatIsNotSixteenBytesOfBase64IsABadRequest(String key) throws Exception {
        try (Raw raw = new Raw(server)) {
            raw.write(request(CHANGES + QUERY, key, "13", ""));
            Head head = raw.readHead();
            assertEquals(400, head.status(), head.text());
        }
        assertTrue(server.streamer.subscriptions.isEmpty());
    }

    /**
     * RFC 7230 §3.2.2: a list-valued header may come as one comma-separated line or as several
     * lines; browsers send {@code keep-alive, Upgrade}, and proxies may split it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Connection: keep-alive, Upgrade\r\n", "Connection: keep-alive\r\nConnection: Upgrade\r\n",
        "Connection: upgrade ,keep-alive\r\n"})
    void theUpgradeTokenIsFoundInAnyConnectionLineOrList(String connection) throws Exception {
        String request = request(CHANGES + QUERY, SAMPLE_KEY, "13", "");
        assertTrue(request.contains("Connection: Upgrade\r\n"));
        try (Raw raw = new Raw(server)) {
            raw.write(request.replace("Connection: Upgrade\r\n", connection));
            Head head = raw.readHead();
            assertEquals(101, head.status(), head.text());
            assertEquals(SAMPLE_ACCEPT, head.header("Sec-WebSocket-Accept"));
            FakeSubscription sub = server.streamer.nextSubscription();
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            assertEquals(0x81, raw.readFrame().b0());
        }
    }

    // ------------------------------------------------------------------ server frames

    /**
     * Payload sizes at each edge of the three length encodings (§5.2), plus 1,000 and 70,000
     * bytes; each must use the shortest encoding and arrive unmasked, whole and in order.
     */
    @Test
    void messagesGoOutAsFinalUnmaskedTextFramesWithTheShortestLength() throws Exception {
        int[] payloadLengths = {20, 125, 126, 1000, 0xFFFF, 0x10000, 70_000};
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            for (int i = 0; i < payloadLengths.length; i++) {
                String msg = "\"" + "x".repeat(payloadLengths[i] - FRAMING - 2) + "\"";
                sub.push(msg);
                Frame f = raw.readFrame();
                assertEquals(0x81, f.b0(), "FIN and text, no RSV bits");
                assertFalse(f.masked(), "a server must not mask");
                int len7 = payloadLengths[i] <= 125 ? payloadLengths[i] : payloadLengths[i] <= 0xFFFF ? 126 : 127;
                assertEquals(len7, f.len7(), "length encoding of " + payloadLengths[i] + " bytes");
                assertEquals("{\"id\":" + (i + 1) + ",\"msg\":" + msg + "}", f.text());
            }
        }
    }

    @Test
    void nonAsciiMessagesArriveAsUtf8WithTheirByteLength() throws Exception {
        String msg = "[\"data\",{\"text\":\"caf\u00e9 \ud83d\ude00 \u4e16\u754c\"}]";
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            server.streamer.nextSubscription().push(msg);
            Frame f = raw.readFrame();
            assertEquals(0x81, f.b0());
            byte[] expected = ("{\"id\":1,\"msg\":" + msg + "}").getBytes(StandardCharsets.UTF_8);
            assertTrue(expected.length > ("{\"id\":1,\"msg\":" + msg + "}").length(), "the test needs multi-byte chars");
            assertArrayEquals(expected, f.payload());
        }
    }

    // ------------------------------------------------------------------ client frames

    @Test
    void aMaskedAckConsumesTheMessage() throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage m = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            raw.readFrame();
            raw.write(masked(0x81, ack(1)));
            assertTrue(m.awaitConsumed());
        }
    }

    @Test
    void severalAcksInOneWriteAreAllRead() throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeMessage[] m = threeFramesRead(raw);
            raw.write(concat(masked(0x81, ack(1)), masked(0x81, ack(2)), masked(0x81, ack(3))));
            assertTrue(m[2].awaitConsumed());
            assertTrue(m[0].isConsumed());
            assertTrue(m[1].isConsumed());
        }
    }

    /** Pushes three messages to the connection's subscription and reads their frames. */
    private FakeMessage[] threeFramesRead(Raw raw) throws Exception {
        FakeSubscription sub = server.streamer.nextSubscription();
        FakeMessage[] m = new FakeMessage[3];
        for (int i = 0; i < 3; i++) {
            m[i] = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            raw.readFrame();
        }
        return m;
    }

    /**
     * Acks are settled once per read, for the newest id, yet each is still checked: in one write,
     * acks that are valid are settled before the first that is not (repeated, or beyond the frames
     * sent) closes the connection with 1002, naming it as one ack at a time would.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 9})
    void aBadAckAmongGoodOnesInOneWriteSettlesTheGoodOnesFirst(int bad) throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeMessage[] m = threeFramesRead(raw);
            raw.write(concat(masked(0x81, ack(1)), masked(0x81, ack(2)), masked(0x81, ack(bad)),
                    masked(0x81, ack(3))));
            Frame close = raw.readFrame();
            assertEquals(0x88, close.b0());
            assertEquals(1002, close.closeCode());
            assertEquals("Error: Unexpected ack for 3: " + bad, close.closeReason());
            assertTrue(m[0].isConsumed());
            assertTrue(m[1].isConsumed());
            assertFalse(m[2].isConsumed(), "nothing after the bad ack is settled");
        }
    }

    /**
     * An ack cut after 1 byte (the wire needs 2 to know the header length), after 2 (it needs
     * the header), after the header and inside the payload (it needs the whole frame).
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 5, 6, 9})
    void anAckSplitAcrossTwoTcpWritesIsPutTogether(int cut) throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage m = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            raw.readFrame();
            byte[] frame = masked(0x81, ack(1));
            raw.write(Arrays.copyOfRange(frame, 0, cut));
            // Only to make the two halves separate segments; nothing is asserted about timing.
            Thread.sleep(50);
            raw.write(Arrays.copyOfRange(frame, cut, frame.length));
            assertTrue(m.awaitConsumed());
        }
    }

    @Test
    void aFrameLargerThanTheReadBufferIsReadAndTheConnectionGoesOn() throws Exception {
        // The wire reads into 1 KiB and grows it for one larger frame, then shrinks it again.
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            FakeMessage first = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            FakeMessage second = sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            raw.readFrame();
            raw.readFrame();
            byte[] padded = ("{\"ack\":" + " ".repeat(5000) + "1}").getBytes(StandardCharsets.UTF_8);
            raw.write(masked(0x81, padded));
            assertTrue(first.awaitConsumed());
            raw.write(masked(0x81, ack(2)));
            assertTrue(second.awaitConsumed());
        }
    }

    @Test
    void aPingIsAnsweredWithAPongCarryingItsPayload() throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            raw.write(masked(0x89, "hi".getBytes(StandardCharsets.US_ASCII)));
            Frame pong = raw.readFrame();
            assertEquals(0x8A, pong.b0());
            assertFalse(pong.masked());
            assertEquals("hi", pong.text());
        }
    }

    @ParameterizedTest(name = "client code {0} is answered with {1}")
    @CsvSource({"1000,1000", "1001,1001", "4000,4000", "-1,1000"})
    void aCloseFrameIsAnsweredAndThenTheServerClosesTheSocket(int sent, int answered) throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            // -1: a close frame without a code, which the server answers as a normal close.
            byte[] payload = sent < 0 ? new byte[0] : ByteBuffer.allocate(2).putShort((short) sent).array();
            raw.write(masked(0x88, payload));
            Frame close = raw.readFrame();
            assertEquals(0x88, close.b0());
            assertEquals(answered, close.closeCode());
            assertEquals(-1, raw.in.read(), "the server closes the socket once both close frames are sent");
            assertTrue(sub.awaitClosed());
        }
    }

    @Test
    void anUnmaskedClientFrameIsAProtocolErrorThatEndsTheConnection() throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            byte[] payload = ack(1);
            raw.write(concat(new byte[] {(byte) 0x81, (byte) payload.length}, payload));
            Frame close = raw.readFrame();
            assertEquals(0x88, close.b0());
            assertEquals(1002, close.closeCode());
            assertEquals("Client frame is not masked", close.closeReason());
            assertEquals(-1, raw.in.read(), "the server sends nothing after its close frame");
            assertTrue(sub.awaitClosed());
            assertEquals(1, server.metrics.protocolErrors());
        }
    }

    @Test
    void aDataFrameAboveTheBoundIsClosedFromItsHeaderAlone() throws Exception {
        long max = Settings.DEFAULTS.maxIncomingMessageBytes();
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            // Only the header: a server that waited for the payload would never answer.
            raw.write(ByteBuffer.allocate(14).put((byte) 0x81).put((byte) (0x80 | 127)).putLong(max + 1)
                    .putInt(0x01020304).array());
            Frame close = raw.readFrame();
            assertEquals(0x88, close.b0());
            assertEquals(1009, close.closeCode());
            assertEquals("Text message too large: more than " + max + " bytes", close.closeReason());
            assertTrue(sub.awaitClosed());
        }
    }

    @Test
    void aFramePipelinedBehindTheUpgradeRequestIsNotLost() throws Exception {
        try (Raw raw = new Raw(server)) {
            raw.write(concat(request(CHANGES + QUERY, SAMPLE_KEY, "13", "").getBytes(StandardCharsets.US_ASCII),
                    masked(0x89, "early".getBytes(StandardCharsets.US_ASCII))));
            assertEquals(101, raw.readHead().status());
            Frame pong = raw.readFrame();
            assertEquals(0x8A, pong.b0());
            assertEquals("early", pong.text());
        }
    }

    @Test
    void aFramePartlyPipelinedBehindTheUpgradeRequestIsCompletedByTheNextRead() throws Exception {
        try (Raw raw = new Raw(server)) {
            byte[] ping = masked(0x89, "split".getBytes(StandardCharsets.US_ASCII));
            raw.write(concat(request(CHANGES + QUERY, SAMPLE_KEY, "13", "").getBytes(StandardCharsets.US_ASCII),
                    Arrays.copyOfRange(ping, 0, 4)));
            assertEquals(101, raw.readHead().status());
            raw.write(Arrays.copyOfRange(ping, 4, ping.length));
            Frame pong = raw.readFrame();
            assertEquals(0x8A, pong.b0());
            assertEquals("split", pong.text());
        }
    }

    /**
     * A client that pings without reading must not make the server queue a pong per ping (that
     * would be unbounded memory per connection): once the socket's buffers are full one pong is
     * pending and further pings go unanswered. 200,000 pings of 125 bytes are about 26 MB, well
     * beyond what loopback socket buffers hold in pongs (with Linux's default 4 MB send-buffer
     * ceiling, about 33,000 pongs), so some pings must go unanswered.
     */
    @Test
    void aClientThatPingsWithoutReadingGetsAtMostOnePendingPong() throws Exception {
        int pings = 200_000;
        byte[] payload = new byte[WebSocketFrames.MAX_CONTROL_PAYLOAD];
        Arrays.fill(payload, (byte) 'p');
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            raw.socket.setSoTimeout(30_000);
            FakeSubscription sub = server.streamer.nextSubscription();
            Future<?> written = writer.submit(() -> {
                ByteArrayOutputStream batch = new ByteArrayOutputStream();
                for (int i = 0; i < pings; i++) {
                    batch.writeBytes(masked(0x89, payload));
                    if (batch.size() >= 1 << 20) {
                        raw.write(batch.toByteArray());
                        batch.reset();
                    }
                }
                batch.writeBytes(masked(0x88, ByteBuffer.allocate(2).putShort((short) 1000).array()));
                raw.write(batch.toByteArray());
                return null;
            });
            // On its own thread and bounded: a server that stopped reading while its pongs are
            // blocked would block these writes for ever, and this test would hang instead of fail.
            written.get(30, TimeUnit.SECONDS);

            int pongs = 0;
            Frame f = raw.readFrame();
            while (f.b0() == 0x8A) {
                assertArrayEquals(payload, f.payload());
                pongs++;
                f = raw.readFrame();
            }
            assertEquals(0x88, f.b0(), "after the pongs, the close frame's answer");
            assertEquals(1000, f.closeCode());
            assertTrue(pongs >= 1, "the first ping is answered");
            assertTrue(pongs < pings, "one pong pending at most, not one per ping: " + pongs + " pongs");
            assertEquals(-1, raw.in.read(), "nothing after the close frame");
            assertTrue(sub.awaitClosed());
        } finally {
            writer.shutdownNow();
        }
    }

    /**
     * An exception from the code that handles an ack (here the streamer's {@code consumed()}) is
     * a server bug: the connection must end with 1011 rather than stop reading acks for ever,
     * and other connections must not notice.
     */
    @Test
    void aFailureWhileHandlingAnAckClosesWith1011AndSparesOtherConnections() throws Exception {
        try (Raw failing = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription failingSub = server.streamer.nextSubscription();
            try (Raw neighbour = Raw.upgraded(server, CHANGES + QUERY.replace("id=foo", "id=bar"))) {
                FakeSubscription neighbourSub = server.streamer.nextSubscription();
                FakeMessage bad = failingSub.push(new FakeMessage("[\"rollback\",{\"tag\":\"rollback\"}]", null,
                        new IllegalStateException("consumer blew up")));
                failing.readFrame();
                failing.write(masked(0x81, ack(1)));
                assertTrue(bad.awaitConsumed());
                Frame close = failing.readFrame();
                assertEquals(0x88, close.b0());
                assertEquals(1011, close.closeCode());
                assertTrue(close.closeReason().startsWith("Error: "), close.closeReason());
                assertTrue(close.closeReason().contains("consumer blew up"), close.closeReason());
                assertEquals(-1, failing.in.read(), "nothing after the close frame");
                assertTrue(failingSub.awaitClosed());

                FakeMessage good = neighbourSub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
                assertEquals("{\"id\":1,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", neighbour.readFrame().text());
                neighbour.write(masked(0x81, ack(1)));
                assertTrue(good.awaitConsumed());
                assertFalse(neighbourSub.isClosed());
            }
        }
    }

    /**
     * After its close frame the server half-closes, so the client reads end-of-stream at once;
     * what must not happen is that a client which keeps sending (resetting the idle timer) and
     * never closes holds the socket for ever. The server's full close shows as a reset on the
     * client's next write.
     */
    @Test
    void aClientThatNeverClosesLosesTheSocketAfterTheCloseTimeout() throws Exception {
        try (Raw raw = Raw.upgraded(server, CHANGES + QUERY)) {
            FakeSubscription sub = server.streamer.nextSubscription();
            byte[] payload = ack(1);
            raw.write(concat(new byte[] {(byte) 0x81, (byte) payload.length}, payload));
            Frame close = raw.readFrame();
            assertEquals(0x88, close.b0());
            assertEquals(1002, close.closeCode());
            assertEquals(-1, raw.in.read(), "half-closed after the close frame");
            assertTrue(sub.awaitClosed());

            CompletableFuture<IOException> writeFailed = new CompletableFuture<>();
            Thread pinger = new Thread(() -> {
                try {
                    while (true) {
                        raw.write(masked(0x89, "still here".getBytes(StandardCharsets.US_ASCII)));
                        Thread.sleep(100);
                    }
                } catch (IOException e) {
                    writeFailed.complete(e);
                } catch (InterruptedException e) {
                    // the test is over
                }
            }, "never-closing-client");
            pinger.setDaemon(true);
            pinger.start();
            long bound = WebSocketWire.CLOSE_TIMEOUT_MILLIS + 15_000;
            try {
                writeFailed.get(bound, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("the socket was open " + bound + " ms after the server's close frame", e);
            } finally {
                pinger.interrupt();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** A server frame; {@code len7} is the 7-bit length field as sent (126 and 127 name the longer encodings). */
    record Frame(int b0, boolean masked, int len7, byte[] payload) {

        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        int closeCode() {
            return ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
        }

        String closeReason() {
            return new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
        }
    }

    /** A response head: the status line and headers, names as sent. */
    record Head(int status, Map<String, String> headers, String text) {

        String header(String name) {
            for (Map.Entry<String, String> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue();
                }
            }
            return null;
        }
    }

    /** A plain TCP client; every read times out after 10 s so that a failure never hangs. */
    static final class Raw implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;
        final OutputStream out;

        Raw(TestServer server) throws IOException {
            socket = new Socket("127.0.0.1", server.port());
            socket.setSoTimeout(10_000);
            socket.setTcpNoDelay(true);
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            out = socket.getOutputStream();
        }

        static Raw upgraded(TestServer server, String path) throws IOException {
            Raw raw = new Raw(server);
            try {
                raw.write(request(path, SAMPLE_KEY, "13", ""));
                Head head = raw.readHead();
                assertEquals(101, head.status(), head.text());
                return raw;
            } catch (IOException | RuntimeException | AssertionError e) {
                raw.close();
                throw e;
            }
        }

        void write(String ascii) throws IOException {
            write(ascii.getBytes(StandardCharsets.US_ASCII));
        }

        void write(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        Head readHead() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            while (!bytes.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new EOFException("connection closed inside the response head: " + bytes);
                }
                bytes.write(b);
            }
            String text = bytes.toString(StandardCharsets.ISO_8859_1);
            String[] lines = text.split("\r\n");
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.put(lines[i].substring(0, colon).trim(), lines[i].substring(colon + 1).trim());
            }
            return new Head(Integer.parseInt(lines[0].split(" ")[1]), headers, text);
        }

        Frame readFrame() throws IOException {
            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            int len7 = b1 & 0x7F;
            long length = len7 == 126 ? in.readUnsignedShort() : len7 == 127 ? in.readLong() : len7;
            boolean masked = (b1 & 0x80) != 0;
            byte[] mask = new byte[4];
            if (masked) {
                in.readFully(mask);
            }
            assertTrue(length >= 0 && length < (16 << 20), "frame length " + length);
            byte[] payload = new byte[(int) length];
            in.readFully(payload);
            for (int i = 0; masked && i < payload.length; i++) {
                payload[i] ^= mask[i & 3];
            }
            return new Frame(b0, masked, len7, payload);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private static final Random MASKS = new Random(6455);

    /** A client frame with first byte {@code b0}, masked with a fresh mask as §5.3 asks of clients. */
    static byte[] masked(int b0, byte[] payload) {
        byte[] mask = new byte[4];
        synchronized (MASKS) {
            MASKS.nextBytes(mask);
        }
        return ClientFrameParserTest.frame(b0, payload, mask, true);
    }

    static byte[] ack(long id) {
        return ("{\"ack\":" + id + "}").getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] concat(byte[]... parts) {
        return ClientFrameParserTest.concat(parts);
    }

    /** An upgrade request; {@code key} {@code null} leaves the key out, {@code extra} adds header lines. */
    static String request(String path, String key, String version, String extra) {
        return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + (key == null ? "" : "Sec-WebSocket-Key: " + key + "\r\n") + "Sec-WebSocket-Version: " + version
                + "\r\n" + extra + "\r\n";
    }
}

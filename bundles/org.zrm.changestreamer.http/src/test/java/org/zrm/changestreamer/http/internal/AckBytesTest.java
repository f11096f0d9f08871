package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeMessage;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeSubscription;

/**
 * Acks are read from the frames' bytes, without Jetty building a String per message
 * ({@link WsConnection#onWebSocketFrame}): what Jetty used to do for text messages is done there,
 * and tested here. A split ack is put together; a split message over {@code receive.maxMessageBytes}
 * closes with 1009; bytes that are not UTF-8 close with 1007 (a raw client, since a Java WebSocket
 * client cannot send them).
 */
class AckBytesTest {

    private static final String CHANGES = "/replication/v6/changes";
    private static final String QUERY = "?id=foo&taskID=foo-task&mode=serving&replicaVersion=abc&watermark=123&initial=false";
    private static final String ROLLBACK = "[\"rollback\",{\"tag\":\"rollback\"}]";

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(Settings.DEFAULTS);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

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
}

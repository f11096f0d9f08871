package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeSubscription;

/** Pings every interval; a client that answers none is terminated (upstream {@code sendPingsForLiveness}). */
class LivenessTest {

    private static final String QUERY = "?id=foo&replicaVersion=abc&watermark=123";

    private TestServer server;

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void pongsKeepTheConnectionAlive() throws Exception {
        // Long enough for a pong round trip on a loaded machine.
        server = new TestServer(Settings.DEFAULTS.withPingInterval(Duration.ofMillis(1000)));
        try (TestClient client = new TestClient(server.ws("/replication/v6/changes" + QUERY))) {
            FakeSubscription sub = server.streamer.nextSubscription();
            // java.net.http answers every ping with a pong; four intervals pass without termination.
            assertTrue(client.pings.tryAcquire(4, 10, TimeUnit.SECONDS));
            assertFalse(client.closed.isDone());
            assertFalse(sub.isClosed());
            sub.push("[\"rollback\",{\"tag\":\"rollback\"}]");
            assertEquals("{\"id\":1,\"msg\":[\"rollback\",{\"tag\":\"rollback\"}]}", client.next());
            assertEquals(0, server.metrics.livenessTimeouts());
        }
    }

    @Test
    void clientThatNeverAnswersIsTerminated() throws Exception {
        server = new TestServer(Settings.DEFAULTS.withPingInterval(Duration.ofMillis(200)));
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /replication/v6/changes" + QUERY + " HTTP/1.1\r\n"
                    + "Host: 127.0.0.1:" + server.port() + "\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String head = readHead(in);
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            FakeSubscription sub = server.streamer.nextSubscription();

            // Read (pings arrive) but never answer: the server drops the connection without a close frame.
            byte[] buffer = new byte[1024];
            int pingFrames = 0;
            int n;
            while ((n = in.read(buffer)) != -1) {
                for (int i = 0; i < n; i++) {
                    if ((buffer[i] & 0xff) == 0x89) {
                        pingFrames++;
                    }
                }
            }
            assertTrue(pingFrames >= 1, "pings seen: " + pingFrames);
            assertTrue(sub.awaitClosed());
            assertEquals(1, server.metrics.livenessTimeouts());
        }
    }

    private static String readHead(InputStream in) throws Exception {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c == -1) {
                break;
            }
            head.append((char) c);
        }
        return head.toString();
    }
}

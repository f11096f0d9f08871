package org.zrm.bench.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fan-out limit's writer against the benchmark's own client: what the writer serves is what a
 * capturing client reads back, byte for byte, to every client, through a window smaller than one
 * frame's worth of the stream (so acks must release it) and with a frame larger than its buffer.
 */
class MinimalFanoutWriterTest {

    private static List<byte[]> stream(int inserts, String bigValue) {
        List<byte[]> m = new ArrayList<>();
        m.add(utf8("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"0a\"}]"));
        for (int i = 1; i <= inserts; i++) {
            m.add(utf8("[\"data\",{\"tag\":\"insert\",\"relation\":{},\"new\":{\"id\":" + i + ",\"v\":\"é"
                    + (i == 2 ? bigValue : "") + "\"}}]"));
        }
        m.add(utf8("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"0a\"}]"));
        return m;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyClientReadsBackExactlyTheMessagesServedThroughASmallWindow() throws Exception {
        List<byte[]> messages = stream(200, "x".repeat(300 * 1024)); // one frame beyond the 256 KiB buffer
        try (MinimalFanoutWriter writer = new MinimalFanoutWriter(messages, 4096)) {
            List<byte[]> captured = new ArrayList<>();
            WsSubscriber capturing = WsSubscriber.connectCapturing(writer.port(), "c", "-", "-", captured);
            WsSubscriber plain = WsSubscriber.connect(writer.port(), "p", "-", "-", "serving", null);
            try {
                capturing.awaitInserts(200, 30_000);
                plain.awaitInserts(200, 30_000);
                assertEquals(messages.size(), plain.frames());
            } finally {
                capturing.close();
                plain.close();
            }
            assertEquals(messages.size(), captured.size());
            for (int i = 0; i < messages.size(); i++) {
                assertArrayEquals(messages.get(i), captured.get(i), "message " + i);
            }
            assertEquals(2L * messages.size(), writer.framesSent());
            assertTrue(writer.cpuNanos() > 0, "the writer's threads used some CPU");
        }
    }

    @Test
    void acceptKeyIsRfc6455s() {
        // RFC 6455 section 1.3's example.
        assertEquals("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", MinimalFanoutWriter.accept("dGhlIHNhbXBsZSBub25jZQ=="));
        assertEquals(20, Base64.getDecoder().decode(MinimalFanoutWriter.accept("x")).length);
    }
}

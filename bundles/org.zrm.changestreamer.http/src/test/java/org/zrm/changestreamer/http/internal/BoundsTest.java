package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The pieces that bound and validate a connection's traffic ({@link SendWindow} has {@code SendWindowTest}). */
class BoundsTest {

    @Test
    void sendThreadsAreValidated() {
        assertEquals(Runtime.getRuntime().availableProcessors(), Settings.perProcessor(0));
        assertEquals(3, Settings.DEFAULTS.withSenderThreads(3).senderThreads());
        assertEquals("send.threads must be between 0 (one per processor) and 256, got 257",
                assertThrows(IllegalArgumentException.class, () -> Settings.DEFAULTS.withSenderThreads(257)).getMessage());
    }

    @Test
    void closeReasonsAreElidedLikeUpstream() {
        assertEquals("short", WsConnection.elide("short", 123));
        String exact = "x".repeat(123);
        assertEquals(exact, WsConnection.elide(exact, 123));
        assertEquals("x".repeat(120) + "...", WsConnection.elide("x".repeat(124), 123));
        // Multi-byte characters count as their UTF-8 length.
        String elided = WsConnection.elide("\u00e9".repeat(100), 123);
        assertEquals("\u00e9".repeat(60) + "...", elided);
    }

    @Test
    void settingsRejectNonsense() {
        assertEquals("ping.intervalMs must be positive, got 0", assertThrows(IllegalArgumentException.class,
                () -> Settings.DEFAULTS.withPingInterval(Duration.ZERO)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Settings.DEFAULTS.withMaxUnackedChars(0));
        assertThrows(IllegalArgumentException.class, () -> Settings.DEFAULTS.withMaxQueuedChars(-1));
        assertEquals(Duration.ofSeconds(90), Settings.DEFAULTS.idleTimeout());
    }
}

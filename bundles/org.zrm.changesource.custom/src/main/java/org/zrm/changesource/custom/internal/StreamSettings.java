package org.zrm.changesource.custom.internal;

import java.time.Duration;

/**
 * Limits and timers of one custom-source stream.
 *
 * @param connectTimeout how long opening the WebSocket may take
 * @param pingInterval how often a ping is sent; a socket that delivered neither a pong nor a
 *     message during one interval is terminated (upstream: 30 s)
 * @param maxMessageChars the largest text message accepted, in characters; a longer one fails the
 *     stream
 * @param bufferMessages messages decoded ahead of the consumer; at this bound (or
 *     {@code bufferChars}) no more frames are read, so the source is throttled through TCP
 * @param bufferChars characters of decoded messages held ahead of the consumer
 */
record StreamSettings(Duration connectTimeout, Duration pingInterval, int maxMessageChars, int bufferMessages,
        long bufferChars) {

    StreamSettings {
        if (pingInterval.isZero() || pingInterval.isNegative()) {
            throw new IllegalArgumentException("pingIntervalMs must be > 0");
        }
        if (maxMessageChars <= 0 || bufferMessages <= 0 || bufferChars <= 0) {
            throw new IllegalArgumentException("maxMessageChars, bufferMessages and bufferChars must be > 0");
        }
    }

    static StreamSettings defaults() {
        return new StreamSettings(Duration.ofSeconds(10), Duration.ofSeconds(30), 256 << 20, 1024, 16L << 20);
    }
}

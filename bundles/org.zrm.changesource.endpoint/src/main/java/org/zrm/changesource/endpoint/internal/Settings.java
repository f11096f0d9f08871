package org.zrm.changesource.endpoint.internal;

import java.time.Duration;

/**
 * The endpoint's bounds and timers.
 *
 * @param pingInterval ping period; a client silent (no pong, no frame) for a whole period is disconnected
 * @param maxQueuedChars per connection: characters handed to the socket but not yet written (see {@link ByteWindow})
 * @param maxIncomingChars largest upstream frame; Jetty closes a connection that sends more with 1009
 */
record Settings(Duration pingInterval, long maxQueuedChars, int maxIncomingChars) {

    Settings {
        if (pingInterval.isNegative() || pingInterval.isZero() || maxQueuedChars < 1 || maxIncomingChars < 1) {
            throw new IllegalArgumentException("invalid endpoint settings: " + pingInterval + ", " + maxQueuedChars
                    + ", " + maxIncomingChars);
        }
    }
}

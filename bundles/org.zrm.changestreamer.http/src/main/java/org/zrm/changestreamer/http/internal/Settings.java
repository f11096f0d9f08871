package org.zrm.changestreamer.http.internal;

import java.time.Duration;

/**
 * Validated settings of the WebSocket endpoints.
 *
 * @param pingInterval how often connections are pinged; a connection silent for a whole interval
 *     is terminated
 * @param maxUnackedChars bound on the characters sent to one client and not yet acknowledged
 * @param maxQueuedChars bound on the characters handed to the connection's {@link WebSocketWire} and not yet
 *     written
 * @param maxIncomingMessageBytes largest text message accepted from a client
 * @param senderThreads threads that send the frames of every {@code /changes} connection
 *     ({@code send.threads}; 0 in the configuration means one per available processor)
 */
record Settings(Duration pingInterval, long maxUnackedChars, long maxQueuedChars, long maxIncomingMessageBytes,
        int senderThreads) {

    /** Upstream's {@code PING_INTERVAL_MS}. */
    static final long DEFAULT_PING_INTERVAL_MS = 30_000;
    /** Enough to keep a fast client's pipeline full, small enough to bound one connection's share of heap. */
    static final long DEFAULT_MAX_UNACKED_CHARS = 16L << 20;
    static final long DEFAULT_MAX_QUEUED_CHARS = 1L << 20;
    /** Incoming messages are {@code {"ack":n}}; anything near this size is garbage. */
    static final long DEFAULT_MAX_INCOMING_MESSAGE_BYTES = 64L << 10;

    /** The largest ping interval whose idle timeout (three intervals) fits Jetty's milliseconds. */
    static final Duration MAX_PING_INTERVAL = Duration.ofMillis(Long.MAX_VALUE / 3);

    /** More would only add context switches: a drain never blocks, so a thread per core keeps them busy. */
    static final int MAX_SENDER_THREADS = 256;

    static final Settings DEFAULTS = new Settings(Duration.ofMillis(DEFAULT_PING_INTERVAL_MS),
            DEFAULT_MAX_UNACKED_CHARS, DEFAULT_MAX_QUEUED_CHARS, DEFAULT_MAX_INCOMING_MESSAGE_BYTES,
            perProcessor(0));

    /** @throws IllegalArgumentException naming the offending property */
    Settings {
        if (pingInterval.isNegative() || pingInterval.isZero()) {
            throw new IllegalArgumentException("ping.intervalMs must be positive, got " + pingInterval.toMillis());
        }
        // Jetty's idle timeout is three intervals, in milliseconds: beyond this it overflows, and
        // the servlet would fail on its first request instead of the configuration being rejected.
        if (pingInterval.compareTo(MAX_PING_INTERVAL) > 0) {
            throw new IllegalArgumentException("ping.intervalMs must be at most " + MAX_PING_INTERVAL.toMillis()
                    + ", got " + pingInterval.toMillis());
        }
        if (maxUnackedChars < 1) {
            throw new IllegalArgumentException("send.maxUnackedChars must be positive, got " + maxUnackedChars);
        }
        if (maxQueuedChars < 1) {
            throw new IllegalArgumentException("send.maxQueuedChars must be positive, got " + maxQueuedChars);
        }
        if (maxIncomingMessageBytes < 64) {
            throw new IllegalArgumentException(
                    "receive.maxMessageBytes must be at least 64, got " + maxIncomingMessageBytes);
        }
        if (senderThreads < 1 || senderThreads > MAX_SENDER_THREADS) {
            throw new IllegalArgumentException("send.threads must be between 0 (one per processor) and "
                    + MAX_SENDER_THREADS + ", got " + senderThreads);
        }
    }

    static Settings of(ChangeStreamerHttpConfig config) {
        return new Settings(Duration.ofMillis(config.ping_intervalMs()), config.send_maxUnackedChars(),
                config.send_maxQueuedChars(), config.receive_maxMessageBytes(), perProcessor(config.send_threads()));
    }

    /**
     * @return {@code configured}, or one thread per available processor for 0; any other value
     *     is passed on unchanged for the constructor to accept or reject
     */
    static int perProcessor(int configured) {
        return configured == 0 ? Math.min(MAX_SENDER_THREADS, Runtime.getRuntime().availableProcessors()) : configured;
    }

    Settings withPingInterval(Duration interval) {
        return new Settings(interval, maxUnackedChars, maxQueuedChars, maxIncomingMessageBytes, senderThreads);
    }

    Settings withMaxUnackedChars(long chars) {
        return new Settings(pingInterval, chars, maxQueuedChars, maxIncomingMessageBytes, senderThreads);
    }

    Settings withMaxQueuedChars(long chars) {
        return new Settings(pingInterval, maxUnackedChars, chars, maxIncomingMessageBytes, senderThreads);
    }

    Settings withSenderThreads(int threads) {
        return new Settings(pingInterval, maxUnackedChars, maxQueuedChars, maxIncomingMessageBytes, threads);
    }

    /**
     * Jetty's own idle timeout is only a safety net behind the ping liveness check, which normally
     * terminates a silent connection after at most two intervals.
     */
    Duration idleTimeout() {
        return pingInterval.multipliedBy(3);
    }
}

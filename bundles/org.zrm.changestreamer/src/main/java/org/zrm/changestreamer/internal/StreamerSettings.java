package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * Validated settings of the change streamer (PID {@code org.zrm.changestreamer}).
 *
 * @param taskID this node's task id, the change log's owner id
 * @param ownerAddress the discovery address published in {@code replicationState.ownerAddress}
 * @param autoReset whether a replica that cannot continue its lineage is re-synced automatically
 * @param flowControlConsensusPaddingSeconds grace period after a majority of subscribers caught up
 *     with a flushed message; negative disables early release
 * @param subscriberMaxBufferedBytes per-subscriber bound on buffered (unconsumed) characters
 * @param startupDelay how long to wait before taking ownership unless a serving subscriber arrives
 * @param cleanupDelay delay of a purge cycle (upstream 30 s)
 * @param progressInterval how often the flow-control progress monitor runs (upstream 1 s)
 * @param flushBytesThreshold forwarded characters after which the stream loop waits for
 *     subscribers (upstream 64 KiB)
 * @param initialBackoff first retry delay (upstream 25 ms, doubling)
 * @param maxBackoff longest retry delay (upstream 10 s)
 * @param catchupThreads threads serving catch-up snapshots
 */
record StreamerSettings(String taskID, String ownerAddress, boolean autoReset,
        double flowControlConsensusPaddingSeconds, long subscriberMaxBufferedBytes, Duration startupDelay,
        Duration cleanupDelay, Duration progressInterval, int flushBytesThreshold, Duration initialBackoff,
        Duration maxBackoff, int catchupThreads) {

    static final long DEFAULT_SUBSCRIBER_MAX_BUFFERED_BYTES = 64L << 20;
    static final int FLUSH_BYTES_THRESHOLD = 65536;

    StreamerSettings {
        Objects.requireNonNull(taskID, "taskID");
        Objects.requireNonNull(ownerAddress, "ownerAddress");
        if (taskID.isBlank()) {
            throw new IllegalArgumentException("task.id must not be blank");
        }
        // Live changes are forwarded without waiting until flushBytesThreshold has accumulated, so a
        // healthy subscriber can briefly hold that much; a smaller bound would drop healthy ones.
        if (subscriberMaxBufferedBytes < 2L * flushBytesThreshold) {
            throw new IllegalArgumentException("changeStreamer.subscriberMaxBufferedBytes must be at least "
                    + (2L * flushBytesThreshold) + " (twice the flow-control flush threshold): " + subscriberMaxBufferedBytes);
        }
        if (Double.isNaN(flowControlConsensusPaddingSeconds)) {
            throw new IllegalArgumentException("changeStreamer.flowControlConsensusPaddingSeconds must be a number");
        }
        if (startupDelay.isNegative()) {
            throw new IllegalArgumentException("changeStreamer.startupDelayMs must be >= 0: " + startupDelay.toMillis());
        }
        if (catchupThreads < 1) {
            throw new IllegalArgumentException("changeStreamer.catchupThreads must be >= 1: " + catchupThreads);
        }
        if (flushBytesThreshold < 1) {
            throw new IllegalArgumentException("flushBytesThreshold must be >= 1: " + flushBytesThreshold);
        }
    }

    /** The smallest accepted {@code subscriberMaxBufferedBytes} with the default flush threshold. */
    static final long MIN_SUBSCRIBER_MAX_BUFFERED_BYTES = 2L * FLUSH_BYTES_THRESHOLD;

    /** Upstream's defaults (auto-reset on, as {@code ZERO_AUTO_RESET}), for the given identity. */
    static StreamerSettings defaults(String taskID, String ownerAddress) {
        return new StreamerSettings(taskID, ownerAddress, true, 1, DEFAULT_SUBSCRIBER_MAX_BUFFERED_BYTES,
                Duration.ofMillis(15_000), Duration.ofSeconds(30), Duration.ofSeconds(1), FLUSH_BYTES_THRESHOLD,
                Duration.ofMillis(25), Duration.ofSeconds(10), 4);
    }

    StreamerSettings withAutoReset(boolean v) {
        return new StreamerSettings(taskID, ownerAddress, v, flowControlConsensusPaddingSeconds, subscriberMaxBufferedBytes,
                startupDelay, cleanupDelay, progressInterval, flushBytesThreshold, initialBackoff, maxBackoff, catchupThreads);
    }

    StreamerSettings withStartupDelay(Duration v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, v, cleanupDelay, progressInterval, flushBytesThreshold, initialBackoff,
                maxBackoff, catchupThreads);
    }

    StreamerSettings withSubscriberMaxBufferedBytes(long v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds, v,
                startupDelay, cleanupDelay, progressInterval, flushBytesThreshold, initialBackoff, maxBackoff, catchupThreads);
    }

    StreamerSettings withFlowControl(double paddingSeconds, int flushThreshold, Duration progress) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, paddingSeconds, subscriberMaxBufferedBytes,
                startupDelay, cleanupDelay, progress, flushThreshold, initialBackoff, maxBackoff, catchupThreads);
    }

    StreamerSettings withCatchupThreads(int v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, startupDelay, cleanupDelay, progressInterval, flushBytesThreshold,
                initialBackoff, maxBackoff, v);
    }

    StreamerSettings withCleanupDelay(Duration v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, startupDelay, v, progressInterval, flushBytesThreshold, initialBackoff,
                maxBackoff, catchupThreads);
    }
}

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
 * @param flowControlWindow tracked broadcasts (one per flush threshold of forwarded characters)
 *     that may be unsettled while the stream loop goes on; upstream waits for each one before
 *     forwarding more, which is a window of 1 (see {@link #effectiveFlowControlWindow()})
 */
record StreamerSettings(String taskID, String ownerAddress, boolean autoReset,
        double flowControlConsensusPaddingSeconds, long subscriberMaxBufferedBytes, Duration startupDelay,
        Duration cleanupDelay, Duration progressInterval, int flushBytesThreshold, Duration initialBackoff,
        Duration maxBackoff, int catchupThreads, int flowControlWindow) {

    static final long DEFAULT_SUBSCRIBER_MAX_BUFFERED_BYTES = 64L << 20;
    static final int FLUSH_BYTES_THRESHOLD = 65536;
    /** Default {@link #flowControlWindow}: 16 × 64 KiB = 1 MiB in flight per subscriber. */
    static final int DEFAULT_FLOW_CONTROL_WINDOW = 16;
    static final int MAX_FLOW_CONTROL_WINDOW = 1024;

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
        if (flowControlWindow < 1 || flowControlWindow > MAX_FLOW_CONTROL_WINDOW) {
            throw new IllegalArgumentException("changeStreamer.flowControlWindow must be in 1.." + MAX_FLOW_CONTROL_WINDOW
                    + ": " + flowControlWindow);
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
                Duration.ofMillis(25), Duration.ofSeconds(10), 4,
                DEFAULT_FLOW_CONTROL_WINDOW);
    }

    StreamerSettings withAutoReset(boolean v) {
        return new StreamerSettings(taskID, ownerAddress, v, flowControlConsensusPaddingSeconds, subscriberMaxBufferedBytes,
                startupDelay, cleanupDelay, progressInterval, flushBytesThreshold, initialBackoff, maxBackoff, catchupThreads, flowControlWindow);
    }

    StreamerSettings withStartupDelay(Duration v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, v, cleanupDelay, progressInterval, flushBytesThreshold, initialBackoff,
                maxBackoff, catchupThreads, flowControlWindow);
    }

    StreamerSettings withSubscriberMaxBufferedBytes(long v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds, v,
                startupDelay, cleanupDelay, progressInterval, flushBytesThreshold, initialBackoff, maxBackoff, catchupThreads, flowControlWindow);
    }

    StreamerSettings withFlowControl(double paddingSeconds, int flushThreshold, Duration progress) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, paddingSeconds, subscriberMaxBufferedBytes,
                startupDelay, cleanupDelay, progress, flushThreshold, initialBackoff, maxBackoff, catchupThreads, flowControlWindow);
    }

    StreamerSettings withCatchupThreads(int v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, startupDelay, cleanupDelay, progressInterval, flushBytesThreshold,
                initialBackoff, maxBackoff, v, flowControlWindow);
    }

    StreamerSettings withFlowControlWindow(int v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, startupDelay, cleanupDelay, progressInterval, flushBytesThreshold,
                initialBackoff, maxBackoff, catchupThreads, v);
    }

    /**
     * The window actually used: the configured one, but never more than a subscriber's byte bound
     * can hold. Unsettled broadcasts are characters a healthy subscriber holds unconsumed, so a
     * window of {@code subscriberMaxBufferedBytes / flushBytesThreshold - 1} or more would let
     * flow control itself push a keeping-up subscriber over its bound.
     */
    int effectiveFlowControlWindow() {
        long fits = subscriberMaxBufferedBytes / flushBytesThreshold - 1;
        return (int) Math.max(1, Math.min(flowControlWindow, fits));
    }

    StreamerSettings withCleanupDelay(Duration v) {
        return new StreamerSettings(taskID, ownerAddress, autoReset, flowControlConsensusPaddingSeconds,
                subscriberMaxBufferedBytes, startupDelay, v, progressInterval, flushBytesThreshold, initialBackoff,
                maxBackoff, catchupThreads, flowControlWindow);
    }
}

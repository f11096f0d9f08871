package org.zrm.changestreamer.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The change streamer's running totals and last watermarks. Writers are the stream thread (per
 * transaction and change), the storer thread (stored and acked watermarks) and subscriber threads;
 * readers take a {@link StreamerSnapshot}, never these fields one by one, so that {@code /status}
 * and {@code /metrics} show the same figures.
 *
 * <p>The per-message cost is one uncontended atomic increment, as before the streamer was cut into
 * parts.
 */
final class StreamerCounters {

    private final AtomicLong transactions = new AtomicLong();
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong subscriptions = new AtomicLong();
    private final AtomicLong droppedSubscribers = new AtomicLong();
    private final AtomicLong repeatedCatchups = new AtomicLong();
    private final AtomicLong flowControlWaits = new AtomicLong();
    private final AtomicLong flowControlWaitNanos = new AtomicLong();
    private volatile String lastStoredWatermark;
    private volatile String lastAckedWatermark;
    private volatile String lastForwardedCommit;
    private final LagTracker lag = new LagTracker();
    private final CommitTimeline timeline = new CommitTimeline();

    void transactionForwarded(String commitWatermark) {
        transactions.incrementAndGet();
        lastForwardedCommit = commitWatermark;
        timeline.forwarded(commitWatermark, System.currentTimeMillis());
    }

    /** A lag report arrived on the stream (stream thread). */
    void lagReportReceived(org.zrm.protocol.LagReport report) {
        lag.reportReceived(report, System.currentTimeMillis(), lastForwardedCommit, lastStoredWatermark);
    }

    /** The change source's lag reporter started; its first report is due at {@code nextSendTimeMs}. */
    void lagReporterStarted(long nextSendTimeMs) {
        lag.expect(nextSendTimeMs);
    }

    LagTracker.View lag(long nowMs) {
        return lag.view(nowMs);
    }

    CommitTimeline timeline() {
        return timeline;
    }

    String lastForwardedCommit() {
        return lastForwardedCommit;
    }

    void changeForwarded() {
        changes.incrementAndGet();
    }

    void restarted() {
        restarts.incrementAndGet();
    }

    /** @return the number of this re-sync, counting from 1 */
    long resetStarted() {
        return resets.incrementAndGet();
    }

    void subscribed() {
        subscriptions.incrementAndGet();
    }

    void subscriberDropped() {
        droppedSubscribers.incrementAndGet();
    }

    /** A subscriber fell more than its byte bound behind while catching up, and is caught up again. */
    void catchupRepeated() {
        repeatedCatchups.incrementAndGet();
    }

    void flowControlWaited(long nanos) {
        flowControlWaits.incrementAndGet();
        flowControlWaitNanos.addAndGet(nanos);
    }

    void stored(String commitWatermark) {
        lastStoredWatermark = commitWatermark;
        lag.stored(commitWatermark, System.currentTimeMillis());
    }

    void acked(String watermark) {
        lastAckedWatermark = watermark;
    }

    String lastStoredWatermark() {
        return lastStoredWatermark;
    }

    String lastAckedWatermark() {
        return lastAckedWatermark;
    }

    long transactions() {
        return transactions.get();
    }

    long changes() {
        return changes.get();
    }

    long restarts() {
        return restarts.get();
    }

    long resets() {
        return resets.get();
    }

    long subscriptions() {
        return subscriptions.get();
    }

    long repeatedCatchups() {
        return repeatedCatchups.get();
    }

    long droppedSubscribers() {
        return droppedSubscribers.get();
    }

    long flowControlWaits() {
        return flowControlWaits.get();
    }

    long flowControlWaitNanos() {
        return flowControlWaitNanos.get();
    }
}

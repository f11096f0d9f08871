package org.zrm.changestreamer.internal;

import org.zrm.protocol.LagReport;
import org.zrm.protocol.Timings;
import org.zrm.watermark.Watermarks;

/**
 * The upstream lag measured by the change source's lag reports (a logical message written
 * upstream with its send time, received back through the replication stream):
 *
 * <ul>
 *   <li><b>replication</b>: send → received by the change source (zero-cache's {@code upstream_lag});</li>
 *   <li><b>storage</b>: received → the change log durably holds every transaction forwarded before
 *       the report arrived;</li>
 *   <li><b>end to end</b>: send → stored. Like zero-cache's {@code total_lag}, the current figure
 *       keeps growing once the next report is overdue ({@code now - nextSendTime}), so a stalled
 *       pipeline reads as stalled, while {@link View#lastEndToEndMs()} stays the last measured
 *       round trip: a large current figure with a small last one means stalled, both large means slow.</li>
 * </ul>
 *
 * <p>Thread-safe: reports arrive on the stream thread, stores on the storer thread, reads on HTTP
 * threads; every method holds this object's monitor for a few field accesses.
 */
final class LagTracker {

    /**
     * One reading.
     *
     * @param reports lag reports received
     * @param replicationMs the last report's send → receive, {@code null} before the first
     * @param storageMs the last stored report's receive → stored, {@code null} before the first
     * @param lastEndToEndMs the last stored report's send → stored, {@code null} before the first
     * @param endToEndMs {@code max(lastEndToEndMs, now - nextSendTime)}: grows while reports are overdue;
     *     {@code null} while nothing is known
     * @param msSinceLastReport since the last report arrived, {@code null} before the first
     */
    record View(long reports, Long replicationMs, Long storageMs, Long lastEndToEndMs, Long endToEndMs,
            Long msSinceLastReport) {
        static final View NONE = new View(0, null, null, null, null, null);
    }

    private long reports;
    private Long replicationMs;
    private Long storageMs;
    private Long lastEndToEndMs;
    private long nextSendTimeMs;      // 0: no report expected
    private long lastReportAtMs;
    // The report waiting for the change log to catch up, if any.
    private String pendingWatermark;
    private double pendingSendMs;
    private double pendingReceiveMs;

    /** The lag reporter started: its first report is due at {@code nextSendTimeMs}. */
    synchronized void expect(long nextSendTimeMs) {
        this.nextSendTimeMs = nextSendTimeMs;
    }

    /**
     * A lag report arrived on the stream.
     *
     * @param lastForwardedCommit the last commit forwarded before it, {@code null} if none
     * @param lastStoredCommit the last commit the change log holds, {@code null} if none
     */
    synchronized void reportReceived(LagReport report, long nowMs, String lastForwardedCommit, String lastStoredCommit) {
        nextSendTimeMs = (long) report.nextSendTimeMs();
        Timings t = report.lastTimings();
        if (t == null) {
            return;
        }
        reports++;
        lastReportAtMs = nowMs;
        replicationMs = Math.max(0, Math.round(t.receiveTimeMs() - t.sendTimeMs()));
        if (lastForwardedCommit == null || (lastStoredCommit != null
                && Watermarks.compare(lastStoredCommit, lastForwardedCommit) >= 0)) {
            settle(t.sendTimeMs(), t.receiveTimeMs(), nowMs);
        } else {
            // A newer report replaces an unsettled one: the newer figure is the one operators need.
            pendingWatermark = lastForwardedCommit;
            pendingSendMs = t.sendTimeMs();
            pendingReceiveMs = t.receiveTimeMs();
        }
    }

    /** The change log now durably holds everything up to {@code commitWatermark}. */
    synchronized void stored(String commitWatermark, long nowMs) {
        if (pendingWatermark != null && Watermarks.compare(commitWatermark, pendingWatermark) >= 0) {
            settle(pendingSendMs, pendingReceiveMs, nowMs);
        }
    }

    private void settle(double sendMs, double receiveMs, long nowMs) {
        storageMs = Math.max(0, Math.round(nowMs - receiveMs));
        lastEndToEndMs = Math.max(0, Math.round(nowMs - sendMs));
        pendingWatermark = null;
    }

    synchronized View view(long nowMs) {
        Long estimate = null;
        if (nextSendTimeMs > 0) {
            long overdue = Math.max(0, nowMs - nextSendTimeMs);
            estimate = lastEndToEndMs == null ? overdue : Math.max(lastEndToEndMs, overdue);
        } else if (lastEndToEndMs != null) {
            estimate = lastEndToEndMs;
        }
        // An unsettled report is at least as old as its time since sending.
        if (pendingWatermark != null) {
            long pendingAge = Math.max(0, Math.round(nowMs - pendingSendMs));
            estimate = estimate == null ? pendingAge : Math.max(estimate, pendingAge);
        }
        return new View(reports, replicationMs, storageMs, lastEndToEndMs, estimate,
                reports == 0 ? null : Math.max(0, nowMs - lastReportAtMs));
    }
}

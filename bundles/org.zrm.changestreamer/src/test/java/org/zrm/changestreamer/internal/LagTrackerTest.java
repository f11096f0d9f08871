package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Timings;

class LagTrackerTest {

    private static LagReport report(double send, double receive, double nextSend) {
        return new LagReport(new Timings(send, send + 1, receive, Passthrough.NONE), nextSend, Passthrough.NONE);
    }

    @Test
    void nothingIsKnownBeforeTheFirstReport() {
        LagTracker.View v = new LagTracker().view(1_000);
        assertEquals(0, v.reports());
        assertNull(v.replicationMs());
        assertNull(v.endToEndMs());
        assertNull(v.msSinceLastReport());
    }

    @Test
    void aReportArrivingWithTheLogCaughtUpSettlesAtOnce() {
        LagTracker t = new LagTracker();
        t.reportReceived(report(1_000, 1_040, 31_000), 1_050, "0b", "0b");
        LagTracker.View v = t.view(1_060);
        assertEquals(1, v.reports());
        assertEquals(40L, v.replicationMs());
        assertEquals(10L, v.storageMs());
        assertEquals(50L, v.lastEndToEndMs());
        assertEquals(50L, v.endToEndMs());
        assertEquals(10L, v.msSinceLastReport());
    }

    @Test
    void storageLagRunsUntilTheLogHoldsWhatWasForwardedBeforeTheReport() {
        LagTracker t = new LagTracker();
        t.reportReceived(report(1_000, 1_100, 31_000), 1_100, "0f", "0c");
        assertNull(t.view(1_200).storageMs(), "not stored yet");
        assertEquals(200L, t.view(1_200).endToEndMs(), "an unsettled report is at least as old as its send time");
        t.stored("0d", 1_300);
        assertNull(t.view(1_300).storageMs(), "0d is still before 0f");
        t.stored("0f", 1_600);
        LagTracker.View v = t.view(1_600);
        assertEquals(500L, v.storageMs());
        assertEquals(600L, v.lastEndToEndMs());
        assertEquals(100L, v.replicationMs());
    }

    @Test
    void aStalledStreamGrowsTheEndToEndFigureWhileTheLastMeasuredOneStays() {
        LagTracker t = new LagTracker();
        t.reportReceived(report(1_000, 1_020, 31_000), 1_030, null, null);
        assertEquals(30L, t.view(20_000).endToEndMs(), "next report not due yet: the last measurement");
        LagTracker.View stalled = t.view(91_000);
        assertEquals(60_000L, stalled.endToEndMs(), "a minute past the due time of the next report");
        assertEquals(30L, stalled.lastEndToEndMs());
    }

    @Test
    void theFirstReportBeingOverdueAlreadyCounts() {
        LagTracker t = new LagTracker();
        t.expect(5_000);
        assertEquals(0L, t.view(4_000).endToEndMs());
        assertEquals(7_000L, t.view(12_000).endToEndMs());
    }
}

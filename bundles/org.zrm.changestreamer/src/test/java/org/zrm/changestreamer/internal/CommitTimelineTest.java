package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CommitTimelineTest {

    @Test
    void lagIsTheAgeOfTheOldestUnacknowledgedCommit() {
        CommitTimeline t = new CommitTimeline(8);
        assertNull(t.lagOf("01", 0), "no commit forwarded yet");
        t.forwarded("02", 1_000);
        t.forwarded("04", 2_000);
        t.forwarded("06", 3_000);
        assertEquals(new CommitTimeline.Lag(4_000, false), t.lagOf("01", 5_000));
        assertEquals(new CommitTimeline.Lag(3_000, false), t.lagOf("02", 5_000));
        assertEquals(new CommitTimeline.Lag(3_000, false), t.lagOf("03", 5_000), "between commits");
        assertEquals(new CommitTimeline.Lag(0, false), t.lagOf("06", 5_000), "caught up");
        assertEquals(new CommitTimeline.Lag(4_000, false), t.lagOf(null, 5_000), "never acked");
        assertEquals("06", t.newest());
    }

    @Test
    void aFullTimelineForgetsTheOldestAndThenReportsALowerBound() {
        CommitTimeline t = new CommitTimeline(3);
        t.forwarded("02", 1_000);
        t.forwarded("04", 2_000);
        t.forwarded("06", 3_000);
        t.forwarded("08", 4_000);   // "02" is overwritten
        CommitTimeline.Lag behindAll = t.lagOf("01", 10_000);
        assertEquals(8_000, behindAll.ms());
        assertTrue(behindAll.atLeast());
        CommitTimeline.Lag inside = t.lagOf("05", 10_000);
        assertEquals(7_000, inside.ms());
        assertFalse(inside.atLeast());
    }
}

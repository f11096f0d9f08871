package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AckTrackerTest {

    private final AckTracker acks = new AckTracker();
    /** How many message frames each ack settled, one entry per ack that settled any. */
    private final List<Integer> runs = new ArrayList<>();
    private final AckTracker.Settled record = runs::add;

    @Test
    void acksAreCumulativeAndUnexpectedOnesAreRejected() throws Exception {
        assertEquals("Unexpected ack for 1: 1",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(1, record)).getMessage());
        for (long id = 1; id <= 4; id++) {
            sent(id, true, 10 * id);
        }
        assertEquals(10, acks.ack(1, record));
        assertEquals(List.of(1), runs);
        assertEquals(50, acks.ack(3, record));
        assertEquals(List.of(1, 2), runs, "the frames one ack settles are reported in one call");
        assertEquals("Unexpected ack for 4: 2",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(2, record)).getMessage());
        assertEquals("Unexpected ack for 4: 5",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(5, record)).getMessage());
        assertEquals(1, acks.pendingCount());
        assertEquals(40, acks.ack(4, record));
        assertEquals("Unexpected ack for 5: 4",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(4, record)).getMessage());
        assertEquals(0, acks.pendingCount());
        assertEquals(List.of(1, 2, 1), runs);
    }

    @Test
    void framesWithoutAMessageAreSettledButNotCounted() throws Exception {
        sent(1, false, 7);
        assertEquals(7, acks.ack(1, record));
        assertEquals(List.of(), runs, "nothing to report, no call");
        sent(2, true, 3);
        sent(3, false, 4);
        sent(4, true, 5);
        assertEquals(12, acks.ack(4, record));
        assertEquals(List.of(2), runs, "two of the three frames carried a message");
        assertEquals(0, acks.pendingCount());
    }

    @Test
    void framesMustBeRecordedInIdOrder() {
        sent(1, false, 1);
        assertEquals("frame 3 sent after frame 1",
                assertThrows(IllegalStateException.class, () -> sent(3, false, 1)).getMessage());
        assertEquals(1, acks.pendingCount());
    }

    /**
     * Far more frames than the rings start with, sent and acknowledged in uneven steps, so that the
     * rings grow while their oldest frame sits anywhere in them: every message frame is counted
     * once, and each ack releases exactly its frames' sizes.
     */
    @Test
    void theRingsGrowAndWrapWithoutLosingOrder() throws Exception {
        long nextId = 1;
        long acked = 0;
        List<Integer> expected = new ArrayList<>();
        for (int round = 0; round < 40; round++) {
            int send = 1 + (round * 37) % 200;
            for (int i = 0; i < send; i++, nextId++) {
                sent(nextId, nextId % 3 != 0, nextId); // every third frame carries no message
            }
            long upTo = round % 3 == 2 ? nextId - 1 : acked + (nextId - 1 - acked) / 2;
            if (upTo <= acked) {
                continue;
            }
            long sum = 0;
            int messages = 0;
            for (long id = acked + 1; id <= upTo; id++) {
                sum += id;
                messages += id % 3 != 0 ? 1 : 0;
            }
            if (messages > 0) {
                expected.add(messages);
            }
            assertEquals(sum, acks.ack(upTo, record));
            acked = upTo;
            assertEquals(nextId - 1 - acked, acks.pendingCount());
        }
        assertEquals(expected, runs);
    }

    @Test
    void aBatchIsRecordedAsConsecutiveFrames() throws Exception {
        sent(1, true, 1);
        long[] chars = new long[150];
        for (int i = 0; i < 150; i++) {
            chars[i] = i + 10;
        }
        acks.sentAll(2, true, chars, 150); // more than the rings start with: they grow
        assertEquals(151, acks.pendingCount());
        assertEquals(1 + 10 + 11, acks.ack(3, record));
        assertEquals(List.of(3), runs);
        assertEquals("frame 150 sent after frame 151",
                assertThrows(IllegalStateException.class, () -> acks.sentAll(150, true, chars, 1)).getMessage());
        long rest = 0;
        for (int i = 12; i < 160; i++) {
            rest += i;
        }
        assertEquals(rest, acks.ack(151, record));
        assertEquals(0, acks.pendingCount());
        assertEquals(List.of(3, 148), runs);
    }

    private void sent(long id, boolean carriesMessage, long frameChars) {
        acks.sentAll(id, carriesMessage, new long[] {frameChars}, 1);
    }
}

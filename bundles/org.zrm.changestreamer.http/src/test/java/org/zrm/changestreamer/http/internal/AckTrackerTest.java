package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.SubscriptionMessage;

class AckTrackerTest {

    /** A message that only has a name; the tracker never asks it anything. */
    private record Named(String json) implements SubscriptionMessage {
        @Override
        public void consumed() {
            throw new AssertionError("the tracker hands messages back, it does not consume them");
        }
    }

    private final AckTracker acks = new AckTracker();
    private final List<String> settled = new ArrayList<>();
    /** How many messages each ack handed out, one entry per ack that handed out any. */
    private final List<Integer> runs = new ArrayList<>();
    private final AckTracker.Settled record = (messages, n) -> {
        runs.add(n);
        for (int i = 0; i < n; i++) {
            settled.add(messages[i].json());
        }
    };

    @Test
    void acksAreCumulativeAndUnexpectedOnesAreRejected() throws Exception {
        assertEquals("Unexpected ack for 1: 1",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(1, record)).getMessage());
        for (long id = 1; id <= 4; id++) {
            sent(id, new Named("m" + id), 10 * id);
        }
        assertEquals(10, acks.ack(1, record));
        assertEquals(List.of("m1"), settled);
        assertEquals(50, acks.ack(3, record));
        assertEquals(List.of("m1", "m2", "m3"), settled);
        assertEquals(List.of(1, 2), runs, "the frames one ack settles are handed out in one call");
        assertEquals("Unexpected ack for 4: 2",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(2, record)).getMessage());
        assertEquals("Unexpected ack for 4: 5",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(5, record)).getMessage());
        assertEquals(1, acks.pendingCount());
        assertEquals(40, acks.ack(4, record));
        assertEquals("Unexpected ack for 5: 4",
                assertThrows(AckTracker.UnexpectedAckException.class, () -> acks.ack(4, record)).getMessage());
        assertEquals(0, acks.pendingCount());
    }

    @Test
    void framesWithoutAMessageAreSettledButNotHandedOut() throws Exception {
        sent(1, null, 7);
        assertEquals(7, acks.ack(1, record));
        assertEquals(List.of(), runs, "nothing to hand out, no call");
        sent(2, new Named("m2"), 3);
        sent(3, null, 4);
        sent(4, new Named("m4"), 5);
        assertEquals(12, acks.ack(4, record));
        assertEquals(List.of("m2", "m4"), settled);
        assertEquals(List.of(2), runs);
        assertEquals(0, acks.pendingCount());
    }

    @Test
    void framesMustBeRecordedInIdOrder() {
        sent(1, null, 1);
        assertEquals("frame 3 sent after frame 1",
                assertThrows(IllegalStateException.class, () -> sent(3, null, 1)).getMessage());
        assertEquals(1, acks.pendingCount());
    }

    /**
     * Far more frames than the rings start with, sent and acknowledged in uneven steps, so that the
     * rings grow while their oldest frame sits anywhere in them: every frame is settled once, in
     * order, and each ack releases exactly its frames' sizes.
     */
    @Test
    void theRingsGrowAndWrapWithoutLosingOrder() throws Exception {
        long nextId = 1;
        long acked = 0;
        List<String> expected = new ArrayList<>();
        for (int round = 0; round < 40; round++) {
            int send = 1 + (round * 37) % 200;
            for (int i = 0; i < send; i++, nextId++) {
                sent(nextId, new Named("m" + nextId), nextId);
            }
            long upTo = round % 3 == 2 ? nextId - 1 : acked + (nextId - 1 - acked) / 2;
            if (upTo <= acked) {
                continue;
            }
            long sum = 0;
            for (long id = acked + 1; id <= upTo; id++) {
                expected.add("m" + id);
                sum += id;
            }
            assertEquals(sum, acks.ack(upTo, record));
            acked = upTo;
            assertEquals(nextId - 1 - acked, acks.pendingCount());
        }
        assertEquals(expected, settled);
    }

    @Test
    void settledMessagesAreNotHeldOn() throws Exception {
        sent(1, new Named("m1"), 1);
        sent(2, new Named("m2"), 1);
        acks.ack(2, record);
        Field f = AckTracker.class.getDeclaredField("messages");
        f.setAccessible(true);
        for (Object slot : (Object[]) f.get(acks)) {
            assertNull(slot);
        }
    }

    @Test
    void aBatchIsRecordedAsConsecutiveFrames() throws Exception {
        sent(1, new Named("m1"), 1);
        SubscriptionMessage[] batch = new SubscriptionMessage[200];
        long[] chars = new long[200];
        for (int i = 0; i < 200; i++) {
            batch[i] = i % 2 == 0 ? new Named("b" + i) : null;
            chars[i] = i + 10; // the sizes are indexed from 0, the messages from where the batch resumes
        }
        acks.sentAll(2, batch, 10, chars, 150); // more than the rings start with: they grow
        assertEquals(151, acks.pendingCount());
        assertEquals(1 + 10 + 11, acks.ack(3, record));
        assertEquals(List.of("m1", "b10"), settled);
        assertEquals("frame 150 sent after frame 151",
                assertThrows(IllegalStateException.class, () -> acks.sentAll(150, batch, 0, chars, 1)).getMessage());
        long rest = 0;
        for (int i = 12; i < 160; i++) {
            rest += i;
        }
        assertEquals(rest, acks.ack(151, record));
        assertEquals(0, acks.pendingCount());
        assertEquals("b158", settled.get(settled.size() - 1));
    }

    private void sent(long id, SubscriptionMessage message, long frameChars) {
        acks.sentAll(id, new SubscriptionMessage[] {message}, 0, new long[] {frameChars}, 1);
    }
}

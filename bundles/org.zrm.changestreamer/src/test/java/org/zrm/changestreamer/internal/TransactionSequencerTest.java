package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.zrm.changestreamer.internal.Msgs.begin;
import static org.zrm.changestreamer.internal.Msgs.commit;
import static org.zrm.changestreamer.internal.Msgs.insert;
import static org.zrm.changestreamer.internal.Msgs.rollback;

import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.internal.StreamFailure.UnrecoverableStreamException;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;

/** The ordering contract of one upstream stream (spec §1.3 step 5), without a streamer around it. */
class TransactionSequencerTest {

    private final TransactionSequencer seq = new TransactionSequencer("01");

    /** Checks and accepts {@code m} as the session does; @return its watermark. */
    private String accept(ChangeStreamMessage m) throws UnrecoverableStreamException {
        ChangeStreamData d = (ChangeStreamData) m;
        String w = seq.watermarkOf(d);
        seq.accepted(d, w);
        return w;
    }

    private String rejected(ChangeStreamMessage m) {
        return assertThrows(UnrecoverableStreamException.class, () -> seq.watermarkOf((ChangeStreamData) m))
                .getMessage();
    }

    @Test
    void everyMessageOfATransactionCarriesTheCommitWatermark() throws Exception {
        assertNull(seq.openTransaction());
        assertEquals("05", accept(begin("05")));
        assertEquals("05", seq.openTransaction());
        assertEquals("05", accept(insert(1)));
        assertEquals("05", accept(insert(2)));
        assertEquals("05", accept(commit("05")));
        assertNull(seq.openTransaction());
        assertEquals("05", seq.lastCommit());
        assertEquals("07", accept(begin("07")));
    }

    @Test
    void commitMustMatchItsBegin() throws Exception {
        accept(begin("05"));
        assertEquals("commit watermark 06 does not match 'begin' watermark 05", rejected(commit("06")));
        assertEquals("05", seq.openTransaction(), "a rejected message changes nothing");
    }

    @Test
    void dataCommitAndRollbackOnlyInsideATransaction() {
        assertEquals("data change (insert) received before 'begin' message", rejected(insert(1)));
        assertEquals("commit change (commit) received before 'begin' message", rejected(commit("05")));
        assertEquals("rollback change (rollback) received before 'begin' message", rejected(rollback()));
    }

    @Test
    void beginInsideATransactionIsRefused() throws Exception {
        accept(begin("05"));
        assertEquals("'begin' 06 received in the middle of transaction 05", rejected(begin("06")));
    }

    @Test
    void commitWatermarksMustMoveForward() throws Exception {
        assertEquals("commit watermark 01 is not after the previous commit 01", rejected(begin("01")));
        accept(begin("05"));
        accept(commit("05"));
        assertEquals("commit watermark 04 is not after the previous commit 05", rejected(begin("04")));
    }

    @Test
    void rollbackEndsTheTransactionWithoutMovingTheLastCommit() throws Exception {
        accept(begin("05"));
        accept(insert(1));
        accept(rollback());
        assertNull(seq.openTransaction());
        assertEquals("01", seq.lastCommit());
        assertEquals("05", accept(begin("05")), "a rolled-back watermark may be replayed");
    }

    @Test
    void aCheckedButUnacceptedBeginLeavesNoOpenTransaction() throws Exception {
        // The storer refused the begin (e.g. interrupted while applying back-pressure): nothing was
        // forwarded, so there is nothing to roll back.
        assertEquals("05", seq.watermarkOf((ChangeStreamData) begin("05")));
        assertNull(seq.openTransaction());
    }
}

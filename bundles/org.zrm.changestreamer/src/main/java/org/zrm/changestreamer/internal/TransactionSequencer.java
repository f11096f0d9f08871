package org.zrm.changestreamer.internal;

import org.zrm.changestreamer.internal.StreamFailure.UnrecoverableStreamException;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;

/**
 * Checks that one upstream stream keeps the ordering contract (spec §1, {@code begin, data*,
 * (commit|rollback)} in commit order) and tells which transaction each message belongs to: every
 * row of a transaction is stored and forwarded under its commit watermark.
 *
 * <p>A violation is an {@link UnrecoverableStreamException}, which stops the streamer, because
 * restarting the same source from the same watermark would replay the same broken stream. The
 * texts of upstream's two checks are kept; the two further checks (a {@code begin} inside a
 * transaction, a commit watermark that does not move forward) are the port's.
 *
 * <p>Checking ({@link #watermarkOf}) and recording ({@link #accepted}) are separate steps, so that
 * a message that failed to be stored leaves the sequencer where it was and an interrupted
 * transaction is rolled back only if its {@code begin} really went out. One instance per stream,
 * used by the stream's thread only; no allocation per message.
 */
final class TransactionSequencer {

    private String lastCommit;
    private String open;

    /** @param resumeWatermark the watermark the stream starts after; later commits must be greater */
    TransactionSequencer(String resumeWatermark) {
        this.lastCommit = resumeWatermark;
    }

    /**
     * Checks {@code data} against the transaction state without changing it.
     *
     * @return the commit watermark of the transaction {@code data} belongs to
     * @throws UnrecoverableStreamException if {@code data} breaks the ordering contract
     */
    String watermarkOf(ChangeStreamData data) throws UnrecoverableStreamException {
        if (data instanceof BeginMessage b) {
            if (open != null) {
                throw new UnrecoverableStreamException("'begin' " + b.commitWatermark()
                        + " received in the middle of transaction " + open);
            }
            if (b.commitWatermark().compareTo(lastCommit) <= 0) {
                throw new UnrecoverableStreamException("commit watermark " + b.commitWatermark()
                        + " is not after the previous commit " + lastCommit);
            }
            return b.commitWatermark();
        }
        if (open == null) {
            throw new UnrecoverableStreamException(data.type() + " change (" + data.change().tag()
                    + ") received before 'begin' message");
        }
        if (data instanceof CommitMessage c && !c.watermark().equals(open)) {
            throw new UnrecoverableStreamException("commit watermark " + c.watermark()
                    + " does not match 'begin' watermark " + open);
        }
        return open;
    }

    /**
     * Records that {@code data}, checked by {@link #watermarkOf}, has been stored and forwarded.
     *
     * @param watermark what {@link #watermarkOf} returned for it
     */
    void accepted(ChangeStreamData data, String watermark) {
        if (data instanceof BeginMessage) {
            open = watermark;
        } else if (data instanceof CommitMessage) {
            open = null;
            lastCommit = watermark;
        } else if (data instanceof RollbackMessage) {
            open = null;
        }
    }

    /** @return the commit watermark of the open transaction, or {@code null} between transactions */
    String openTransaction() {
        return open;
    }

    /** @return the watermark of the last accepted commit, or the resume watermark */
    String lastCommit() {
        return lastCommit;
    }
}

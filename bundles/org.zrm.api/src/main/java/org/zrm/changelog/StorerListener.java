package org.zrm.changelog;

import org.zrm.changelog.ChangeLogException;
import org.zrm.protocol.ChangeSourceUpstream;

/**
 * What the storer queue reports to the change streamer. All calls come from the queue's writer
 * thread, in stream order; implementations must not block (the writer stalls meanwhile) and
 * should not throw (an exception from a callback stops the writer like a database failure).
 */
public interface StorerListener {

    /**
     * An upstream transaction is durable: the database transaction that holds it has committed.
     * Called once per upstream transaction, in commit order, and before any later status echo.
     *
     * @param commitWatermark the transaction's commit watermark
     * @param ack the upstream acknowledgement {@code ["status", <commit body>, {"watermark": W}]}
     *     to forward to the change source, or {@code null} if the transaction's {@code begin} had
     *     {@code skipAck}
     */
    void stored(String commitWatermark, ChangeSourceUpstream ack);

    /**
     * Echo of a {@code status} message whose {@code ack} was true (or absent), released once every
     * transaction queued before it is durable. Forward it to the change source.
     *
     * @param echo {@code ["status", <status body>, {"watermark": W, …}]}
     */
    void statusAcked(ChangeSourceUpstream echo);

    /**
     * The writer stopped because storing failed. Nothing after the last {@link #stored} is
     * durable; the stream must restart from the change log's last stored watermark. Called at most
     * once; no further callbacks follow.
     *
     * @param cause the failure; an {@link org.zrm.changelog.OwnershipLostException} means another
     *     node owns the log and the streamer must stop rather than retry
     */
    void failed(ChangeLogException cause);
}

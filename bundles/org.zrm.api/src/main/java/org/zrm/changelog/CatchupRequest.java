package org.zrm.changelog;

/**
 * A subscriber waiting to be caught up, queued in stream order with
 * {@link Storer#enqueueCatchup}. The storer hands it to the {@link CatchupHandler} together
 * with a snapshot pinned at its position in the stream, or fails it.
 */
public interface CatchupRequest {

    /**
     * The request will not be served: the storer failed, stopped, or could not open the snapshot.
     * Called on whichever thread detected it; must not block and should not throw.
     *
     * @param cause why; the subscriber should be disconnected so that it reconnects
     */
    void fail(Exception cause);
}

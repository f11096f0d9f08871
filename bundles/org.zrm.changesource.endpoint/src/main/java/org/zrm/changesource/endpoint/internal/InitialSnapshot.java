package org.zrm.changesource.endpoint.internal;

/**
 * Produces the first transaction for a client that has no replica: {@code begin}, the
 * {@code create-table}/{@code create-index} of every table, every row as an {@code insert}, and
 * {@code commit}, all at one consistent watermark.
 */
interface InitialSnapshot {

    /** Receives the snapshot's frames in order. */
    interface Sink {
        /**
         * @param json one frame
         * @param commitWatermark its watermark if it is the commit, else {@code null}
         * @return {@code false} if the connection ended and the snapshot should stop
         */
        boolean frame(String json, String commitWatermark) throws InterruptedException;
    }

    /**
     * Streams the snapshot.
     *
     * @return the snapshot's watermark (begin and commit), or {@code null} if the sink stopped it
     * @throws Exception if the replica cannot be read; the connection is closed with 1011
     */
    String stream(Sink sink) throws Exception;
}

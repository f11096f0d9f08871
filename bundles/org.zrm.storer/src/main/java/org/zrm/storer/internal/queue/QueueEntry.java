package org.zrm.storer.internal.queue;

import org.zrm.changelog.CatchupRequest;
import java.util.concurrent.CompletableFuture;
import org.zrm.protocol.ChangeSourceUpstream;

/**
 * One element of the storer queue. Change entries hold only what the writer needs (the change
 * text, its tag, the ack to release), never the decoded message, to keep queued memory close to
 * the counted bytes.
 */
sealed interface QueueEntry {

    /** Fixed per-entry overhead added to the byte count (object headers, references). */
    long ENTRY_OVERHEAD = 64;

    /** @return the bytes this entry adds to the back-pressure count */
    default long bytes() {
        return ENTRY_OVERHEAD;
    }

    /** How a queued transaction ends, once the producer knows it. */
    enum End { COMMIT, DISCARD }

    /**
     * {@code begin}. {@link #end} is set under the queue lock when the producer queues the
     * transaction's commit, rollback or abort, so the writer can tell a complete transaction from
     * one still streaming in without scanning the queue.
     */
    final class Begin implements QueueEntry {
        final String watermark;
        final String change;
        final boolean skipAck;
        volatile End end;

        Begin(String watermark, String change, boolean skipAck) {
            this.watermark = watermark;
            this.change = change;
            this.skipAck = skipAck;
        }

        @Override
        public long bytes() {
            return ENTRY_OVERHEAD + change.length();
        }
    }

    /** {@code data}: a data or schema change row. */
    record Data(String tag, String change) implements QueueEntry {
        @Override
        public long bytes() {
            return ENTRY_OVERHEAD + change.length();
        }
    }

    /** {@code commit}, with the ack to release once durable ({@code null} for skipAck). */
    record Commit(Begin begin, String watermark, String change, ChangeSourceUpstream ack) implements QueueEntry {
        @Override
        public long bytes() {
            return ENTRY_OVERHEAD + change.length();
        }
    }

    /** A rollback from the source ({@code explicit}) or an abort of an interrupted transaction. */
    record Discard(Begin begin, boolean explicit) implements QueueEntry {
    }

    /** A status echo to release in order. */
    record Status(ChangeSourceUpstream echo) implements QueueEntry {
    }

    /** A subscriber to catch up from a snapshot pinned at this position. */
    record Catchup(CatchupRequest request) implements QueueEntry {
    }

    /** Completes once every earlier entry is processed (the barrier ends a group). */
    record Barrier(CompletableFuture<Void> done) implements QueueEntry {
    }

    /** Ends the writer after everything queued before it. */
    record Stop() implements QueueEntry {
    }
}

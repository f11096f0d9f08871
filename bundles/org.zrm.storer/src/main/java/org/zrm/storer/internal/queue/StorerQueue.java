package org.zrm.storer.internal.queue;

import org.zrm.changelog.StorerStats;
import org.zrm.changelog.StorerListener;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.CatchupRequest;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.Storer;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;

/**
 * The storer's queue (spec §1.4): the change streamer's stream loop enqueues every message in
 * stream order, and one writer thread stores the transactions in the change log, acks them after
 * their database transaction has committed, echoes statuses, and pins catch-up snapshots between
 * database transactions.
 *
 * <h2>Producer side</h2>
 * One stream-loop thread calls {@link #enqueue} (and {@link #abort()}) in stream order; it is
 * validated there, so a malformed stream fails the caller before anything is queued. Catch-up
 * requests, barriers and {@link #stop()} may come from any thread. {@link #enqueue} <b>blocks</b>
 * while the queue is over its byte or message bound (see {@link StorerQueueSettings}) until the
 * writer has drained it below 80 %; this is the storer's back-pressure on the stream loop, which
 * in turn stops reading from the change source.
 *
 * <h2>Writer side</h2>
 * Rows are streamed into the open {@link org.zrm.changelog.ChangeLogTransaction} as they are
 * dequeued, so the queue never holds a whole transaction: memory is the queue's bound plus what the
 * change-log transaction keeps in flight. After a transaction's commit row, further complete
 * transactions that are already queued join the same database transaction (group commit) until a
 * bound of {@link StorerQueueSettings} is reached; then the group commits, and only then are its
 * transactions reported to the {@link StorerListener}. A failed group reports nothing: the stream
 * restarts from the last stored watermark.
 *
 * <p>The queue is single-use: after {@link #stop()} or a failure, create a new one for the next
 * stream. Entries still queued then are dropped; catch-up requests among them are failed.
 */
public final class StorerQueue implements Storer {

    private static final Logger LOG = LoggerFactory.getLogger(StorerQueue.class);

    private final EntryQueue queue;
    private final QueueWriter writer;
    private final Thread thread;

    // Producer-side stream state, guarded by "this": the transaction being enqueued.
    private QueueEntry.Begin openBegin;
    private String lastCommitted;

    /**
     * Creates the queue and starts its writer thread.
     *
     * @param changeLog the change log to write to
     * @param taskID this node's task id, checked by the change log at commit
     * @param settings bounds
     * @param listener receives stored transactions, status echoes and the failure
     * @param catchupHandler serves catch-up requests from pinned snapshots
     */
    public StorerQueue(ChangeLog changeLog, String taskID, StorerQueueSettings settings,
            StorerListener listener, CatchupHandler catchupHandler) {
        Objects.requireNonNull(changeLog, "changeLog");
        Objects.requireNonNull(taskID, "taskID");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(catchupHandler, "catchupHandler");
        long limitBytes = settings.limitBytes(Runtime.getRuntime());
        this.queue = new EntryQueue(limitBytes, settings.maxQueuedMessages());
        this.writer = new QueueWriter(queue, changeLog, taskID, settings, listener, catchupHandler);
        LOG.info("storer-queue: using up to {} MB ({} of max heap {} MB{}) and {} entries to absorb upstream spikes;"
                        + " group commit up to {} transactions / {} MB / {} ms",
                String.format(java.util.Locale.ROOT, "%.2f", limitBytes / 1048576.0),
                settings.backPressureLimitHeapProportion(), Runtime.getRuntime().maxMemory() / 1048576,
                settings.backPressureLimitBytes() > 0 ? ", capped at " + settings.backPressureLimitBytes() + " bytes" : "",
                settings.maxQueuedMessages(), settings.maxGroupTransactions(),
                String.format(java.util.Locale.ROOT, "%.2f", settings.maxGroupBytes() / 1048576.0),
                settings.maxGroupDelay().toMillis());
        this.thread = new Thread(writer, "zrm-storer-writer");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Queues one message of the change stream, in stream order.
     *
     * <ul>
     *   <li>{@code begin}, {@code data}, {@code commit}, {@code rollback}: stored; {@code json} must
     *       be the message's complete serialised text (as forwarded to subscribers), from which the
     *       inner change is stored byte-identical.</li>
     *   <li>{@code status}: echoed upstream, in order, if its {@code ack} is true or absent;
     *       {@code json} is ignored and may be {@code null}.</li>
     *   <li>{@code control}: rejected; the change streamer handles it.</li>
     * </ul>
     * Blocks while the queue is over its bounds (back-pressure).
     *
     * @throws IllegalArgumentException for a control message, or text that is not the message's
     * @throws IllegalStateException if the message breaks the stream's order: a {@code begin}
     *     inside a transaction, a change outside one, a commit whose watermark is not the
     *     begin's, or a commit watermark not above the previous one; nothing is queued then
     * @throws ChangeLogException if the writer has stopped or failed (the cause says why)
     * @throws InterruptedException if interrupted while blocked by back-pressure; the message
     *     was queued
     */
    @Override
    public void enqueue(ChangeStreamMessage message, String json) throws ChangeLogException, InterruptedException {
        Objects.requireNonNull(message, "message");
        QueueEntry entry;
        boolean overBound;
        synchronized (this) {
            entry = toEntry(message, json);
            if (entry == null) {
                return;
            }
            overBound = queue.add(entry);
            // Producer state moves only once the entry is really queued.
            if (entry instanceof QueueEntry.Begin b) {
                openBegin = b;
            } else if (entry instanceof QueueEntry.Commit c) {
                openBegin = null;
                lastCommitted = c.watermark();
            } else if (entry instanceof QueueEntry.Discard) {
                openBegin = null;
            }
        }
        if (overBound && !(entry instanceof QueueEntry.Status)) {
            queue.awaitCapacity();
        }
    }

    private QueueEntry toEntry(ChangeStreamMessage message, String json) {
        if (message instanceof StatusMessage s) {
            return s.status().ackRequested()
                    ? new QueueEntry.Status(new ChangeSourceUpstream(s.status(), s.watermark(), s.trailerExtra()))
                    : null;
        }
        if (message instanceof ControlMessage) {
            throw new IllegalArgumentException("control messages are handled by the change streamer, not stored");
        }
        Objects.requireNonNull(json, "json");
        if (message instanceof BeginMessage b) {
            if (openBegin != null) {
                throw new IllegalStateException("received 'begin' " + b.commitWatermark()
                        + " in the middle of transaction " + openBegin.watermark);
            }
            if (lastCommitted != null && b.commitWatermark().compareTo(lastCommitted) <= 0) {
                throw new IllegalStateException("commit watermark " + b.commitWatermark()
                        + " is not after the previous commit " + lastCommitted);
            }
            return new QueueEntry.Begin(b.commitWatermark(),
                    ChangeText.extract(json, BeginMessage.TYPE, b.commitWatermark()), b.begin().skipsAck());
        }
        String tag = ((org.zrm.protocol.ChangeStreamData) message).change().tag();
        if (openBegin == null) {
            throw new IllegalStateException(message.type() + " change (" + tag + ") received before 'begin' message");
        }
        if (message instanceof DataMessage) {
            return new QueueEntry.Data(tag, ChangeText.extract(json, DataMessage.TYPE, null));
        }
        if (message instanceof CommitMessage c) {
            if (!c.watermark().equals(openBegin.watermark)) {
                throw new IllegalStateException("commit watermark " + c.watermark()
                        + " does not match 'begin' watermark " + openBegin.watermark);
            }
            // The ack echoes the commit body with a plain {watermark} trailer, as upstream does.
            ChangeSourceUpstream ack = openBegin.skipAck ? null : new ChangeSourceUpstream(c.commit(), c.watermark());
            return new QueueEntry.Commit(openBegin, c.watermark(),
                    ChangeText.extract(json, CommitMessage.TYPE, c.watermark()), ack);
        }
        if (message instanceof RollbackMessage) {
            ChangeText.extract(json, RollbackMessage.TYPE, null); // validates the text; rollbacks are not stored
            return new QueueEntry.Discard(openBegin, true);
        }
        throw new IllegalArgumentException("unsupported message type " + message.type());
    }

    /**
     * Discards the transaction being enqueued, if any, because the stream was interrupted in its
     * middle (upstream {@code storer.abort()}). Nothing of it is stored; subscribers waiting for it
     * to end are caught up afterwards. No-op between transactions. Never blocks.
     *
     * @throws ChangeLogException if the writer has stopped or failed
     */
    @Override
    public synchronized void abort() throws ChangeLogException {
        if (openBegin == null) {
            return;
        }
        queue.add(new QueueEntry.Discard(openBegin, false));
        openBegin = null;
    }

    /**
     * Queues a subscriber's catch-up at the current stream position: it is handed to the
     * {@link CatchupHandler} with a snapshot pinned after the transaction in progress (if any) has
     * been stored or discarded. Never blocks. On a stopped queue the request is failed at once.
     */
    @Override
    public void enqueueCatchup(CatchupRequest request) {
        Objects.requireNonNull(request, "request");
        try {
            queue.add(new QueueEntry.Catchup(request));
        } catch (ChangeLogException e) {
            request.fail(e);
        }
    }

    /**
     * @return a future completed once every entry queued before this call is processed: complete
     *     transactions among them are durable and acked (a transaction still open is written but not
     *     committed). Completed exceptionally if the writer stops or fails first.
     */
    @Override
    public CompletableFuture<Void> barrier() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            queue.add(new QueueEntry.Barrier(done));
        } catch (ChangeLogException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * Asks the writer to stop after everything queued so far. A transaction that is still open then
     * is rolled back (its rest never arrived). Non-blocking and idempotent; see
     * {@link #awaitTermination(Duration)}.
     */
    @Override
    public void stop() {
        try {
            queue.add(new QueueEntry.Stop());
        } catch (ChangeLogException e) {
            LOG.debug("storer-queue: stop requested on a closed queue", e);
        }
    }

    /**
     * @return {@code true} if the writer thread ended within {@code timeout}
     */
    @Override
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeout.toNanos())));
        return !thread.isAlive();
    }

    /**
     * Stops after the queued work and waits for the writer; if it has not ended within 30 s it is
     * interrupted, which rolls back its open transaction.
     */
    @Override
    public void close() {
        stop();
        try {
            if (!awaitTermination(Duration.ofSeconds(30))) {
                LOG.warn("storer-queue: writer did not stop within 30 s; interrupting it");
                thread.interrupt();
                thread.join(10_000);
            }
        } catch (InterruptedException e) {
            thread.interrupt();
            Thread.currentThread().interrupt();
        }
    }

    /** @return bytes currently counted against the back-pressure bound */
    @Override
    public long queuedBytes() {
        return queue.queuedBytes();
    }

    /** @return entries currently queued */
    public int queuedEntries() {
        return queue.size();
    }

    /** @return the byte bound in force */
    @Override
    public long limitBytes() {
        return queue.limitBytes();
    }

    /** @return whether back-pressure is applied now, i.e. a producer is (or will be) held in {@link #enqueue} */
    @Override
    public boolean isApplyingBackPressure() {
        return queue.pressured();
    }

    /** @return the queued bytes at the moment back-pressure was last released, or -1 if never */
    long bytesAtLastRelease() {
        return queue.bytesAtLastRelease();
    }

    /** @return how many times the producer was held back so far */
    @Override
    public long backPressureEvents() {
        return queue.pressureEvents();
    }

    /** @return counters of the writer (groups, transactions) */
    @Override
    public StorerStats stats() {
        return writer.stats();
    }
}

package org.zrm.storer.internal.queue;

import org.zrm.changelog.StorerStats;
import org.zrm.changelog.StorerListener;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.CatchupRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogTransaction;

/**
 * The storer's writer loop (upstream {@code Storer.#processQueue}, spec §1.4), run on the queue's
 * own thread. All fields below the constructor's are confined to that thread.
 *
 * <p>Invariants the loop keeps:
 * <ul>
 *   <li>Between upstream transactions, a database transaction is open only while the group
 *       decision runs; when the next entry is not a complete upstream transaction (or a bound is
 *       reached) the group is committed first. So an upstream transaction that is still streaming
 *       in is always the first of its database transaction, and a rollback or abort of it rolls
 *       back nothing else.</li>
 *   <li>Acks and status echoes that follow a not-yet-committed upstream commit wait in
 *       {@link #pendingReleases} and are released, in order, after the database commit.</li>
 *   <li>Catch-up snapshots are only opened while no database transaction is open, so each sees
 *       exactly the transactions before the request's position.</li>
 * </ul>
 */
final class QueueWriter implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(QueueWriter.class);

    private final EntryQueue queue;
    private final ChangeLog changeLog;
    private final String taskID;
    private final StorerQueueSettings settings;
    private final StorerListener listener;
    private final CatchupHandler catchupHandler;
    private final long maxGroupDelayNanos;

    private final AtomicLong groups = new AtomicLong();
    private final AtomicLong transactions = new AtomicLong();
    private final AtomicLong rows = new AtomicLong();
    private final AtomicLong largestGroup = new AtomicLong();

    private ChangeLogTransaction dbTx;
    /** The upstream transaction being written, or {@code null} between transactions. */
    private QueueEntry.Begin current;
    /** Skipping a transaction that was already known to be rolled back when its begin was taken. */
    private boolean discarding;
    private long pos;
    private long txBytes;
    private int groupTransactions;
    private long groupBytes;
    private long groupFirstCommitNanos;
    private String groupFirstWatermark;
    private final List<QueueEntry> pendingReleases = new ArrayList<>();
    private final List<CatchupRequest> pendingCatchups = new ArrayList<>();

    QueueWriter(EntryQueue queue, ChangeLog changeLog, String taskID, StorerQueueSettings settings,
            StorerListener listener, CatchupHandler catchupHandler) {
        this.queue = queue;
        this.changeLog = changeLog;
        this.taskID = taskID;
        this.settings = settings;
        this.listener = listener;
        this.catchupHandler = catchupHandler;
        this.maxGroupDelayNanos = settings.maxGroupDelay().toNanos();
    }

    StorerStats stats() {
        return new StorerStats(groups.get(), transactions.get(), rows.get(), largestGroup.get());
    }

    @Override
    public void run() {
        ChangeLogException failure = null;
        Error fatal = null;
        try {
            loop();
        } catch (ChangeLogException e) {
            failure = e;
        } catch (InterruptedException e) {
            failure = new ChangeLogException("storer writer interrupted", e);
        } catch (RuntimeException e) {
            failure = new ChangeLogException("storer writer failed: " + e, e);
        } catch (Error e) {
            fatal = e;
            failure = new ChangeLogException("storer writer failed: " + e, e);
        } finally {
            finish(failure);
        }
        if (fatal != null) {
            throw fatal;
        }
    }

    private void loop() throws ChangeLogException, InterruptedException {
        while (true) {
            if (current == null && !discarding && dbTx != null && !continueGroup()) {
                commitGroup();
            }
            QueueEntry entry = queue.take();
            if (entry instanceof QueueEntry.Begin b) {
                onBegin(b);
            } else if (entry instanceof QueueEntry.Data d) {
                onData(d);
            } else if (entry instanceof QueueEntry.Commit c) {
                onCommit(c);
            } else if (entry instanceof QueueEntry.Discard d) {
                onDiscard(d);
            } else if (entry instanceof QueueEntry.Status s) {
                onStatus(s);
            } else if (entry instanceof QueueEntry.Catchup c) {
                onCatchup(c.request());
            } else if (entry instanceof QueueEntry.Barrier b) {
                b.done().complete(null);
            } else if (entry instanceof QueueEntry.Stop) {
                return;
            }
        }
    }

    /**
     * Decides, between two upstream transactions, whether the next one joins the open database
     * transaction. Status entries in between are consumed (they wait for the group's commit).
     *
     * @return {@code true} if the head of the queue is a begin whose transaction is complete and
     *     no bound is reached; {@code false} to commit the group now
     */
    private boolean continueGroup() throws InterruptedException {
        if (groupTransactions >= settings.maxGroupTransactions()
                || groupBytes >= settings.maxGroupBytes()
                || !pendingCatchups.isEmpty()) {
            return false;
        }
        long deadline = groupFirstCommitNanos + maxGroupDelayNanos;
        while (true) {
            QueueEntry head = queue.peek();
            if (head instanceof QueueEntry.Status) {
                onStatus((QueueEntry.Status) queue.take());
                continue;
            }
            if (head instanceof QueueEntry.Begin b) {
                if (b.end != null) {
                    return true; // complete: a commit joins, a rollback is skipped without database work
                }
            } else if (head != null) {
                return false; // catch-up, barrier or stop: a group boundary
            }
            if (!queue.awaitChange(deadline)) {
                return false;
            }
        }
    }

    private void onBegin(QueueEntry.Begin b) throws ChangeLogException {
        if (current != null || discarding) {
            throw new IllegalStateException("received 'begin' " + b.watermark + " in the middle of a transaction");
        }
        if (b.end == QueueEntry.End.DISCARD) {
            discarding = true;
            return;
        }
        if (dbTx == null) {
            dbTx = changeLog.beginTransaction(taskID);
            groupTransactions = 0;
            groupBytes = 0;
            groupFirstWatermark = b.watermark;
        }
        current = b;
        pos = 0;
        txBytes = b.change.length();
        append(new ChangeLogEntry(b.watermark, 0, "begin", b.change, null));
    }

    private void onData(QueueEntry.Data d) throws ChangeLogException {
        if (discarding) {
            return;
        }
        requireCurrent(d.tag());
        txBytes += d.change().length();
        append(new ChangeLogEntry(current.watermark, ++pos, d.tag(), d.change(), null));
    }

    private void onCommit(QueueEntry.Commit c) throws ChangeLogException {
        requireCurrent("commit");
        txBytes += c.change().length();
        append(new ChangeLogEntry(c.watermark(), ++pos, "commit", c.change(), current.watermark));
        if (groupTransactions++ == 0) {
            groupFirstCommitNanos = System.nanoTime();
        }
        groupBytes += txBytes;
        pendingReleases.add(c);
        current = null;
    }

    private void onDiscard(QueueEntry.Discard d) throws ChangeLogException {
        String what = d.explicit() ? "rollback" : "abort";
        if (discarding) {
            discarding = false;
            LOG.debug("storer-queue: skipped transaction {} ({} already queued)", d.begin().watermark, what);
        } else {
            if (current == null) {
                return;
            }
            if (groupTransactions > 0) {
                // continueGroup() only lets complete transactions join a group, so this cannot happen.
                throw new IllegalStateException("internal: " + what + " of " + current.watermark
                        + " inside a group of " + groupTransactions + " stored transactions");
            }
            dbTx.close();
            dbTx = null;
            LOG.info("storer-queue: rolled back transaction {} ({}, {} rows discarded)", current.watermark, what, pos + 1);
            current = null;
        }
        if (dbTx == null) {
            startPendingCatchups();
        }
    }

    private void onStatus(QueueEntry.Status s) {
        if (groupTransactions > 0 || !pendingReleases.isEmpty()) {
            pendingReleases.add(s); // after a commit that is not durable yet
        } else {
            // Nothing earlier is waiting: echo at once, even inside a transaction (upstream behaviour;
            // the source never sends an ack:true status past an in-flight commit).
            listener.statusAcked(s.echo());
        }
    }

    private void onCatchup(CatchupRequest request) throws ChangeLogException {
        if (dbTx != null || current != null || discarding) {
            pendingCatchups.add(request); // after the transaction in progress ends
        } else {
            startCatchup(List.of(request));
        }
    }

    private void commitGroup() throws ChangeLogException {
        int size = groupTransactions;
        long started = System.nanoTime();
        dbTx.commit();
        dbTx = null;
        groups.incrementAndGet();
        transactions.addAndGet(size);
        largestGroup.accumulateAndGet(size, Math::max);
        if (LOG.isDebugEnabled()) {
            LOG.debug("storer-queue: committed {} transaction(s) {}..{} in {} µs", size, groupFirstWatermark,
                    lastCommitWatermark(), (System.nanoTime() - started) / 1000);
        }
        groupTransactions = 0;
        groupBytes = 0;
        for (QueueEntry released : pendingReleases) {
            if (released instanceof QueueEntry.Commit c) {
                listener.stored(c.watermark(), c.ack());
            } else {
                listener.statusAcked(((QueueEntry.Status) released).echo());
            }
        }
        pendingReleases.clear();
        startPendingCatchups();
    }

    private String lastCommitWatermark() {
        for (int i = pendingReleases.size() - 1; i >= 0; i--) {
            if (pendingReleases.get(i) instanceof QueueEntry.Commit c) {
                return c.watermark();
            }
        }
        return groupFirstWatermark;
    }

    private void startPendingCatchups() throws ChangeLogException {
        if (pendingCatchups.isEmpty()) {
            return;
        }
        List<CatchupRequest> requests = List.copyOf(pendingCatchups);
        pendingCatchups.clear();
        startCatchup(requests);
    }

    /** Pins a snapshot before anything else is stored, then hands it over (upstream {@code #startCatchup}). */
    private void startCatchup(List<CatchupRequest> requests) throws ChangeLogException {
        CatchupSnapshot snapshot;
        try {
            snapshot = changeLog.openCatchupSnapshot();
        } catch (ChangeLogException e) {
            requests.forEach(r -> r.fail(e));
            throw e;
        }
        try {
            catchupHandler.startCatchup(snapshot, requests);
        } catch (RuntimeException e) {
            // A broken handler must not stop storing; its subscribers are disconnected and reconnect.
            LOG.error("storer-queue: catch-up handler failed for {} subscriber(s) at {}", requests.size(),
                    snapshot.lastWatermark(), e);
            snapshot.close();
            requests.forEach(r -> r.fail(e));
        }
    }

    private void append(ChangeLogEntry entry) throws ChangeLogException {
        dbTx.append(entry);
        rows.incrementAndGet();
    }

    private void requireCurrent(String tag) {
        if (current == null) {
            throw new IllegalStateException("change (" + tag + ") received outside of a transaction");
        }
    }

    /** Rolls back what is open, closes the queue and fails or completes what is left in it. */
    private void finish(ChangeLogException failure) {
        if (dbTx != null) {
            LOG.info("storer-queue: rolling back open transaction {} on {}", groupFirstWatermark,
                    failure == null ? "stop" : "failure");
            dbTx.close();
            dbTx = null;
        }
        ChangeLogException cause = failure != null ? failure : new ChangeLogException("storer stopped");
        List<QueueEntry> rest = queue.close(cause);
        for (CatchupRequest r : pendingCatchups) {
            r.fail(cause);
        }
        pendingCatchups.clear();
        for (QueueEntry e : rest) {
            if (e instanceof QueueEntry.Catchup c) {
                c.request().fail(cause);
            } else if (e instanceof QueueEntry.Barrier b) {
                b.done().completeExceptionally(cause);
            }
        }
        if (failure != null) {
            LOG.error("storer-queue: storing failed; {} unacknowledged commit(s) dropped, the stream restarts"
                    + " from the last stored watermark: {}", pendingCommits(), failure.getMessage(), failure);
            pendingReleases.clear();
            listener.failed(failure);
        } else {
            LOG.info("storer-queue: writer stopped");
        }
    }

    private long pendingCommits() {
        return pendingReleases.stream().filter(QueueEntry.Commit.class::isInstance).count();
    }
}

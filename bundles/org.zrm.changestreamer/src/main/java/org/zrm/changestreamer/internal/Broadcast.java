package org.zrm.changestreamer.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fan-out of a change (upstream {@code Broadcast}). Untracked sends are fire-and-forget;
 * a tracked broadcast's {@link #done()} completes when every subscriber has settled the change
 * (consumed it, filtered it, put it in its catch-up backlog, or disconnected), or earlier by the
 * consensus rule in {@link #checkProgress}.
 */
final class Broadcast {

    private static final Logger LOG = LoggerFactory.getLogger(Broadcast.class);

    private final String watermark;
    private final int majority;
    private final LongSupplier clockMillis;
    private final long startMillis;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    // Guarded by this.
    private final Set<Subscriber> pending;
    private int completed;
    private long latestCompletionMillis = Long.MAX_VALUE;

    /** Sends {@code changes[0..n)} to every subscriber without tracking, a run per subscriber. */
    static void withoutTracking(Iterable<Subscriber> subscribers, WatermarkedChange[] changes, int n) {
        for (Subscriber sub : subscribers) {
            sub.sendUntracked(changes, n);
        }
    }

    /**
     * Sends {@code change} to {@code subscribers} and tracks their completion.
     *
     * @param clockMillis a monotonic millisecond clock
     */
    Broadcast(Collection<Subscriber> subscribers, WatermarkedChange change, LongSupplier clockMillis) {
        this.watermark = change.watermark();
        this.clockMillis = clockMillis;
        this.startMillis = clockMillis.getAsLong();
        this.pending = new HashSet<>(subscribers);
        this.majority = pending.size() / 2 + 1;
        List<Subscriber> targets = new ArrayList<>(pending);
        if (targets.isEmpty()) {
            done.complete(null);
        }
        for (Subscriber sub : targets) {
            sub.send(change).whenComplete((r, e) -> markCompleted(sub));
        }
    }

    private void markCompleted(Subscriber sub) {
        boolean finished;
        synchronized (this) {
            if (!pending.remove(sub)) {
                return;
            }
            completed++;
            latestCompletionMillis = clockMillis.getAsLong();
            finished = pending.isEmpty();
        }
        if (finished) {
            done.complete(null);
        }
    }

    /** @return completes when the stream loop may continue */
    CompletableFuture<Void> done() {
        return done;
    }

    boolean isDone() {
        return done.isDone();
    }

    /** Releases the broadcast without waiting (shutdown). */
    void release() {
        done.complete(null);
    }

    /**
     * The consensus rule (spec §1.6): once a majority ({@code floor(n/2)+1}) of the subscribers has
     * completed and {@code paddingMillis} have passed since the latest completion, the broadcast is
     * released even though a minority is still pending; so one slow or dead subscriber delays the
     * stream by the padding at most per flush, while a lagging majority still throttles it.
     *
     * @param paddingMillis the padding; negative disables early release
     * @return {@code true} if the broadcast is (now) done
     */
    boolean checkProgress(long paddingMillis) {
        long now = clockMillis.getAsLong();
        int stillPending;
        synchronized (this) {
            stillPending = pending.size();
            if (stillPending == 0 || done.isDone()) {
                return true;
            }
            long elapsed = now - startMillis;
            if (completed < majority) {
                if (elapsed >= 1000) {
                    LOG.info("change-streamer: flow control at {} waiting for at least {} subscriber(s) to finish"
                            + " ({} done, {} pending, {} ms)", watermark, majority, completed, stillPending, elapsed);
                }
                return false;
            }
            if (paddingMillis < 0 || now - latestCompletionMillis < paddingMillis) {
                return false;
            }
            LOG.info("change-streamer: flow control at {} continuing with {} subscriber(s) still pending ({} ms)",
                    watermark, stillPending, elapsed);
        }
        done.complete(null);
        return true;
    }

    synchronized int pendingCount() {
        return pending.size();
    }
}

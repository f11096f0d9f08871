package org.zrm.changestreamer.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;

/**
 * Keeps the subscribers that receive live changes (upstream {@code Forwarder}).
 *
 * <p>A subscriber added while a transaction is being forwarded is <em>queued</em>: it gets no part
 * of that transaction and becomes <em>active</em> when the transaction's commit or rollback is
 * forwarded. This mirrors the storer, which catches it up from a snapshot pinned after the same
 * transaction, so the two views of "is a transaction open" agree (lock-step, spec §1.5).
 *
 * <p><b>Threading.</b> {@link #add}, {@link #forward}, {@link #forwardWithFlowControl} and
 * {@link #sendStatus} are called by one thread at a time under the streamer's stream lock;
 * {@link #remove}, {@link #acks()} and {@link #checkProgress} may come from any thread, so the sets
 * are concurrent and a subscriber removed while being promoted is removed again.
 */
final class Forwarder {

    /** The longest run of changes {@link #forward(WatermarkedChange[], int)} takes at once. */
    static final int MAX_RUN = 64;

    private final Set<Subscriber> active = ConcurrentHashMap.newKeySet();
    private final Set<Subscriber> queued = ConcurrentHashMap.newKeySet();
    private final LongSupplier clockMillis;
    private volatile boolean inTransaction;
    /**
     * Tracked broadcasts not yet known to be settled, oldest first. The stream loop adds one per
     * flush and waits for the oldest once more than the window are in flight; the progress monitor
     * applies the consensus rule to all of them. Bounded by the window plus one.
     */
    private final ConcurrentLinkedDeque<Broadcast> inFlight = new ConcurrentLinkedDeque<>();

    Forwarder(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
    }

    /** Registers a subscriber; queued if a transaction is open (CS-2, under the stream lock). */
    void add(Subscriber sub) {
        (inTransaction ? queued : active).add(sub);
        if (sub.isClosed()) {
            remove(sub);
        }
    }

    /** Drops a subscriber; safe from any thread, idempotent. */
    void remove(Subscriber sub) {
        active.remove(sub);
        queued.remove(sub);
    }

    /** Fire-and-forget fan-out (CS-1, under the stream lock). */
    void forward(WatermarkedChange change) {
        forward(new WatermarkedChange[] {change}, 1);
    }

    /**
     * Fire-and-forget fan-out of a run of changes (CS-1, under the stream lock): each subscriber
     * takes the run under one lock instead of one per change. Only the last change may end a
     * transaction, because queued subscribers join after the commit or rollback that ends it.
     *
     * @param n at most {@link #MAX_RUN}
     * @throws IllegalArgumentException if a change before the last ends a transaction
     */
    void forward(WatermarkedChange[] changes, int n) {
        if (n > MAX_RUN) {
            throw new IllegalArgumentException("a run of " + n + " changes, more than " + MAX_RUN);
        }
        for (int i = 0; i < n - 1; i++) {
            if (changes[i].endsTransaction()) {
                throw new IllegalArgumentException("change " + (i + 1) + " of a run of " + n + " ends a transaction");
            }
        }
        if (n == 0) {
            return;
        }
        Broadcast.withoutTracking(active, changes, n);
        for (int i = 0; i < n; i++) {
            updateActive(changes[i].tag());
        }
    }

    /**
     * Tracked fan-out (CS-1, under the stream lock); the caller waits for the returned broadcast
     * <em>after</em> leaving the lock.
     */
    Broadcast forwardWithFlowControl(WatermarkedChange change) {
        Broadcast b = new Broadcast(List.copyOf(active), change, clockMillis);
        updateActive(change.tag());
        inFlight.addLast(b);
        return b;
    }

    /**
     * Waits until at most {@code window} tracked broadcasts are unsettled (called by the stream
     * loop after a tracked forward, outside the stream lock). With a window of 1 this is upstream's
     * lock-step: wait for the broadcast just made.
     *
     * @return nanoseconds spent waiting
     */
    long awaitWindow(int window) throws InterruptedException, ExecutionException {
        long waited = 0;
        while (true) {
            Broadcast oldest = inFlight.peekFirst();
            if (oldest == null) {
                return waited;
            }
            if (oldest.isDone()) {
                inFlight.remove(oldest);
                continue;
            }
            if (inFlight.size() <= window - 1) {
                return waited;
            }
            long t0 = System.nanoTime();
            oldest.done().get();
            waited += System.nanoTime() - t0;
        }
    }

    /** Called by the progress monitor every second: the consensus rule for every broadcast in flight. */
    void checkProgress(long paddingMillis) {
        for (Broadcast b : inFlight) {
            if (b.checkProgress(paddingMillis)) {
                inFlight.remove(b);
            }
        }
    }

    /** Releases the broadcasts the stream loop may wait for (shutdown, end of a stream). */
    void releaseBroadcast() {
        Broadcast b;
        while ((b = inFlight.pollFirst()) != null) {
            b.release();
        }
    }

    /** @return tracked broadcasts not yet known to be settled */
    int broadcastsInFlight() {
        return inFlight.size();
    }

    /** Sends a lag-report status to the active subscribers. */
    void sendStatus(String statusJson) {
        for (Subscriber sub : active) {
            sub.sendStatus(statusJson);
        }
    }

    private void updateActive(String tag) {
        switch (tag) {
            case "begin" -> inTransaction = true;
            case "commit", "rollback" -> {
                inTransaction = false;
                for (Subscriber sub : List.copyOf(queued)) {
                    active.add(sub);
                    queued.remove(sub);
                    if (sub.isClosed()) {
                        active.remove(sub);
                    }
                }
            }
            default -> { }
        }
    }

    boolean inTransaction() {
        return inTransaction;
    }

    /** @return the acked watermark of every connected subscriber (active and queued) */
    List<String> acks() {
        List<String> acks = new ArrayList<>();
        active.forEach(s -> acks.add(s.acked()));
        queued.forEach(s -> acks.add(s.acked()));
        return acks;
    }

    /** @return all connected subscribers */
    List<Subscriber> subscribers() {
        List<Subscriber> all = new ArrayList<>(active);
        all.addAll(queued);
        return all;
    }

    boolean isActive(Subscriber sub) {
        return active.contains(sub);
    }

    boolean isQueued(Subscriber sub) {
        return queued.contains(sub);
    }
}

package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.OwnershipLostException;

/**
 * Purge scheduling (upstream {@code scheduleCleanup}/{@code #purgeOldChanges}, spec §5.1).
 *
 * <p>Backed-up watermarks are collected; a cycle runs {@code cleanupDelay} after the first one
 * (30 s, longer than the 10 s maximum reconnect back-off, so recently disconnected replicas are
 * back and counted). A cycle purges below the earliest collected watermark W only if every
 * connected subscriber has acknowledged a commit at or after W, handles one watermark, and
 * reschedules while watermarks remain.
 *
 * <p>BUG H2 fixed: with no subscriber connected, upstream returned without rescheduling, so purging
 * stopped until a restart. Here that cycle is rescheduled like any other that cannot purge yet.
 * A cycle is also skipped (and rescheduled) while a {@code /snapshot} reservation is open.
 */
final class Purger {

    private static final Logger LOG = LoggerFactory.getLogger(Purger.class);

    private final ChangeLog changeLog;
    private final String taskID;
    private final Supplier<List<String>> acks;
    private final Reservations reservations;
    private final CleanupTimer timer;
    private final Duration delay;

    /**
     * Held for a whole cycle. {@link #clear()} takes it too, so when a backup-monitor swap clears
     * the pending watermarks, a purge that was already running on the retired monitor's
     * confirmation has finished, and no later one can start on it. Always taken before "this".
     */
    private final ReentrantLock cycling = new ReentrantLock();

    // Guarded by this.
    private final TreeSet<String> watermarks = new TreeSet<>();
    private CleanupTimer.Scheduled scheduled;
    private volatile long purgedRows;
    private volatile String lastPurgedBelow;

    Purger(ChangeLog changeLog, String taskID, Supplier<List<String>> acks, Reservations reservations,
            CleanupTimer timer, Duration delay) {
        this.changeLog = changeLog;
        this.taskID = taskID;
        this.acks = acks;
        this.reservations = reservations;
        this.timer = timer;
        this.delay = delay;
    }

    synchronized void schedule(String watermark) {
        boolean wasEmpty = watermarks.isEmpty();
        watermarks.add(watermark);
        if (wasEmpty && scheduled == null) {
            scheduled = timer.schedule(this::cycle, delay);
        }
    }

    /** Forgets the pending watermarks; returns once a cycle in flight has finished. */
    void clear() {
        cycling.lock();
        try {
            synchronized (this) {
                watermarks.clear();
                if (scheduled != null) {
                    scheduled.cancel();
                    scheduled = null;
                }
            }
        } finally {
            cycling.unlock();
        }
    }

    synchronized List<String> pending() {
        return List.copyOf(watermarks);
    }

    long purgedRows() {
        return purgedRows;
    }

    String lastPurgedBelow() {
        return lastPurgedBelow;
    }

    /**
     * The next cycle's decision, with the rows counted instead of deleted: the same bound and the
     * same conditions as {@link #runCycle()}, read without its lock, so a cycle running meanwhile may
     * have moved on by the time this returns.
     */
    org.zrm.operator.PurgePreview preview() throws ChangeLogException {
        String earliest;
        synchronized (this) {
            earliest = watermarks.isEmpty() ? null : watermarks.first();
        }
        List<String> current = acks.get();
        String earliestAck = current.stream().min(String::compareTo).orElse(null);
        String blocked = null;
        if (earliest == null) {
            blocked = "no backed-up watermark is waiting to be purged";
        } else if (reservations.anyOpen()) {
            blocked = "snapshot reservation(s) " + reservations.taskIDs() + " are open";
        } else if (earliestAck == null) {
            blocked = "no subscriber to confirm the cleanup";
        } else if (earliestAck.compareTo(earliest) < 0) {
            blocked = "a subscriber is behind the backup (acked " + earliestAck + ")";
        }
        long rows = blocked == null ? changeLog.countPurgeable(earliest) : 0;
        return new org.zrm.operator.PurgePreview(earliest, blocked, rows, earliestAck);
    }

    /** One purge cycle; runs on the timer. */
    void cycle() {
        cycling.lock();
        try {
            runCycle();
        } finally {
            cycling.unlock();
        }
    }

    private void runCycle() {
        String earliest;
        synchronized (this) {
            scheduled = null;
            if (watermarks.isEmpty()) {
                LOG.warn("change-streamer: purge cycle ran with no backed-up watermark");
                return;
            }
            earliest = watermarks.first();
        }
        try {
            if (reservations.anyOpen()) {
                LOG.info("change-streamer: purge to {} paused while snapshot reservation(s) {} are open", earliest,
                        reservations.taskIDs());
                return;
            }
            List<String> current = acks.get();
            if (current.isEmpty()) {
                LOG.warn("change-streamer: no subscribers to confirm cleanup to {}; retrying in {} s", earliest,
                        delay.toSeconds());
                return;
            }
            String earliestAck = current.stream().min(String::compareTo).orElseThrow();
            if (earliestAck.compareTo(earliest) < 0) {
                LOG.info("change-streamer: at least one subscriber is behind backup {} (acked {}); not purging yet",
                        earliest, earliestAck);
                return;
            }
            long start = System.nanoTime();
            long deleted = changeLog.purgeBefore(earliest, taskID);
            purgedRows += deleted;
            lastPurgedBelow = earliest;
            LOG.info("change-streamer: purged {} change-log rows below {} in {} ms", deleted, earliest,
                    (System.nanoTime() - start) / 1_000_000);
            synchronized (this) {
                watermarks.remove(earliest);
            }
        } catch (OwnershipLostException e) {
            LOG.warn("change-streamer: purge to {} aborted: {}", earliest, e.getMessage());
        } catch (ChangeLogException | RuntimeException e) {
            LOG.error("change-streamer: purge to {} failed: {}", earliest, e.getMessage(), e);
        } finally {
            synchronized (this) {
                if (!watermarks.isEmpty() && scheduled == null) {
                    scheduled = timer.schedule(this::cycle, delay);
                }
            }
        }
    }
}

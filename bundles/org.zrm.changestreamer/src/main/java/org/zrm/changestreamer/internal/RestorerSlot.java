package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.ReplicaRestorer;

/**
 * The change streamer's restore step (zero-cache restores before it initializes the change
 * source): with a backup URL configured, waits up to {@code awaitRestorer} for the
 * {@link ReplicaRestorer} service (the litestream bundle may start after this one) and calls it.
 * The wait is on a signal (the service's registration); when it runs out, the start continues
 * without a restore, with a warning, and the change source syncs a missing replica.
 */
final class RestorerSlot implements StreamSupervisor.RestoreStep {

    private static final Logger LOG = LoggerFactory.getLogger(RestorerSlot.class);

    private final boolean backupConfigured;
    private final Duration awaitRestorer;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private ReplicaRestorer current;
    private boolean cancelled;

    RestorerSlot(boolean backupConfigured, Duration awaitRestorer) {
        this.backupConfigured = backupConfigured;
        this.awaitRestorer = awaitRestorer;
    }

    void set(ReplicaRestorer r) {
        lock.lock();
        try {
            current = r;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void clear(ReplicaRestorer r) {
        lock.lock();
        try {
            if (current == r) {
                current = null;
            }
        } finally {
            lock.unlock();
        }
    }

    /** The streamer is stopping: a wait for the restorer ends at once, without a restore. */
    void cancel() {
        lock.lock();
        try {
            cancelled = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void restore(String replicaVersion, String minWatermark) throws InterruptedException {
        if (!backupConfigured) {
            return;
        }
        ReplicaRestorer r;
        lock.lock();
        try {
            long nanos = awaitRestorer.toNanos();
            while (current == null && nanos > 0 && !cancelled) {
                nanos = changed.awaitNanos(nanos);
            }
            if (cancelled) {
                return;
            }
            r = current;
        } finally {
            lock.unlock();
        }
        if (r == null) {
            LOG.warn("change-streamer: a backup URL is set but no replica restorer (bundle org.zrm.litestream) appeared"
                    + " within {} ms; starting without a restore", awaitRestorer.toMillis());
            return;
        }
        try {
            boolean restored = r.restoreIfMissing(replicaVersion, minWatermark);
            LOG.info("change-streamer: restore step done ({})", restored ? "the replica was restored from the backup"
                    : "nothing restored");
        } catch (RuntimeException e) {
            LOG.error("change-streamer: restoring the replica failed; the change source syncs it if it is missing: {}",
                    e.toString(), e);
        }
    }
}

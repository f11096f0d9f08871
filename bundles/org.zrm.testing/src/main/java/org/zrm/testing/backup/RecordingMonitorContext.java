package org.zrm.testing.backup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.zrm.backup.BackupMonitorContext;

/**
 * A {@link BackupMonitorContext} that records what a monitor reports, for monitor unit tests. The
 * cleanup delay and the open reservations are set by the test; {@link #retire()} makes it refuse
 * scheduling as the coordinator does for a retired monitor.
 */
public final class RecordingMonitorContext implements BackupMonitorContext {

    private final List<String> scheduled = new CopyOnWriteArrayList<>();
    private final List<String> refused = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicLong> purgeBlocked = new ConcurrentHashMap<>();
    private final Set<String> reservations = ConcurrentHashMap.newKeySet();
    private final List<Throwable> fatal = new CopyOnWriteArrayList<>();
    private volatile Duration cleanupDelay;
    private volatile Duration lastBackupLag;
    private volatile boolean retired;

    /** @param cleanupDelay the initial cleanup delay */
    public RecordingMonitorContext(Duration cleanupDelay) {
        this.cleanupDelay = cleanupDelay;
    }

    @Override
    public boolean scheduleCleanup(String watermark) {
        if (retired) {
            refused.add(watermark);
            return false;
        }
        scheduled.add(watermark);
        return true;
    }

    @Override
    public Duration cleanupDelay() {
        return cleanupDelay;
    }

    @Override
    public Set<String> openReservations() {
        return Set.copyOf(reservations);
    }

    @Override
    public void purgeBlocked(String reason) {
        purgeBlocked.computeIfAbsent(reason, r -> new AtomicLong()).incrementAndGet();
    }

    @Override
    public void backupLag(Duration lag) {
        lastBackupLag = lag;
    }

    @Override
    public void reportFatal(Throwable cause) {
        fatal.add(cause);
    }

    /** Sets the delay the monitor reads at its next check (the coordinator grows it on reservations). */
    public void setCleanupDelay(Duration delay) {
        this.cleanupDelay = delay;
    }

    /** Opens a reservation for {@code taskID}. */
    public void reserve(String taskID) {
        reservations.add(taskID);
    }

    /** Ends {@code taskID}'s reservation. */
    public void endReservation(String taskID) {
        reservations.remove(taskID);
    }

    /** From now on, scheduling is refused (a retired activation). */
    public void retire() {
        retired = true;
    }

    /** @return the watermarks accepted so far, in order */
    public List<String> scheduled() {
        return new ArrayList<>(scheduled);
    }

    /** @return the watermarks refused after {@link #retire()} */
    public List<String> refused() {
        return new ArrayList<>(refused);
    }

    /** @return how often {@code reason} was reported */
    public long purgeBlockedCount(String reason) {
        AtomicLong n = purgeBlocked.get(reason);
        return n == null ? 0 : n.get();
    }

    /** @return the last reported backup lag, or {@code null} */
    public Duration lastBackupLag() {
        return lastBackupLag;
    }

    /** @return the fatal reports so far */
    public List<Throwable> fatal() {
        return new ArrayList<>(fatal);
    }
}

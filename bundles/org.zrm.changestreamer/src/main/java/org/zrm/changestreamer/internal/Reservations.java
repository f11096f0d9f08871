package org.zrm.changestreamer.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.zrm.backup.SnapshotReservation;

/**
 * Open {@code /snapshot} reservations by task id. While any is open, purging pauses, so a node
 * restoring a backup can still catch up from the backup's watermark. Without a backup monitor no
 * reservation is ever accepted (see {@link ChangeStreamerService#reserveSnapshot}), so this stays
 * empty; it is the seam the backup-monitor coordinator plugs into.
 */
final class Reservations {

    private final Map<String, SnapshotReservation> open = new ConcurrentHashMap<>();

    /** Registers {@code reservation}, closing an earlier one of the same task. */
    void add(SnapshotReservation reservation) {
        SnapshotReservation previous = open.put(reservation.taskID(), reservation);
        if (previous != null && previous != reservation) {
            previous.close();
        }
    }

    /** Ends the task's reservation, if any. */
    void end(String taskID) {
        if (taskID == null) {
            return;
        }
        SnapshotReservation r = open.remove(taskID);
        if (r != null) {
            r.close();
        }
    }

    /** @return whether a reservation is open; reservations whose connection closed are dropped */
    boolean anyOpen() {
        open.values().removeIf(SnapshotReservation::isClosed);
        return !open.isEmpty();
    }

    int size() {
        return open.size();
    }
}

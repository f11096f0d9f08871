package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.zrm.backup.SnapshotReservation;

/**
 * Open {@code /snapshot} reservations by task id. While any is open, nothing is scheduled for
 * cleanup and no purge cycle runs, so a node restoring a backup can still catch up from the
 * backup's watermark. Held by the backup-monitor coordinator, not by a monitor, so reservations
 * survive a swap of the monitor (upstream's monitor cancelled them on stop, silently removing the
 * protection from restores in flight, spec §8.1 item 3).
 *
 * <p>Bounded by the connections the HTTP endpoint accepts; a reservation whose connection closed
 * is dropped at the next query.
 */
final class Reservations {

    private final Map<String, SnapshotReservation> open = new ConcurrentHashMap<>();

    /**
     * Registers {@code reservation}, closing an earlier one of the same task (only the latest
     * attempt of a task counts; the earlier one ends without raising the cleanup delay).
     */
    void add(SnapshotReservation reservation) {
        SnapshotReservation previous = open.put(reservation.taskID(), reservation);
        if (previous != null && previous != reservation) {
            previous.close();
        }
    }

    /**
     * Ends the task's reservation, if any, and closes its connection.
     *
     * @return how long the reservation was held, if there was one
     */
    Optional<Duration> end(String taskID, Instant now) {
        if (taskID == null) {
            return Optional.empty();
        }
        SnapshotReservation r = open.remove(taskID);
        if (r == null) {
            return Optional.empty();
        }
        r.close();
        return Optional.of(Duration.between(r.startedAt(), now));
    }

    /** @return whether a reservation is open; reservations whose connection closed are dropped */
    boolean anyOpen() {
        return !taskIDs().isEmpty();
    }

    /** @return the open reservations' task ids, sorted; closed ones are dropped first */
    Set<String> taskIDs() {
        open.values().removeIf(SnapshotReservation::isClosed);
        return Set.copyOf(new TreeSet<>(open.keySet()));
    }
}

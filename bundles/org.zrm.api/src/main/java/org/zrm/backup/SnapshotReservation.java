package org.zrm.backup;

import java.time.Instant;
import org.osgi.annotation.versioning.ProviderType;
import org.zrm.protocol.subscriber.SnapshotStatus;

/**
 * The connection side of one {@code /snapshot} reservation: an open WebSocket whose existence
 * blocks cleanup while a new node restores a backup. Created by the HTTP endpoint and registered
 * through {@link org.zrm.changestreamer.ChangeStreamer#reserveSnapshot}; the backup-monitor
 * coordinator owns it, sends its status and keeps it across monitor swaps, while the active
 * monitor only sees that it is open ({@link BackupMonitorContext#openReservations()}).
 *
 * <p>All methods are thread-safe and non-blocking (sends are queued on the connection).
 */
@ProviderType
public interface SnapshotReservation {

    /** @return the restoring task's id */
    String taskID();

    /**
     * @return when the reservation started; preserved across monitor swaps so the learned cleanup
     *     delay ({@code now - startedAt} when the reservation ends) stays correct
     */
    Instant startedAt();

    /**
     * Sends the single {@code ["status",{"tag":"status","backupURL":…,"replicaVersion":…,
     * "minWatermark":…}]} message. Only the first call sends anything; later calls are ignored,
     * because clients read exactly one status and must not see a second one.
     *
     * @param status the status to send
     * @return {@code true} if this call sent the status, {@code false} if one was already sent or
     *     the reservation is closed
     */
    boolean sendStatus(SnapshotStatus status);

    /**
     * Ends the reservation because preparing the status failed; the connection is closed and the
     * client retries. Idempotent.
     *
     * @param cause the failure, logged by the endpoint
     */
    void fail(Throwable cause);

    /** Ends the reservation and closes the connection normally. Idempotent. */
    void close();

    /** @return {@code true} once the reservation has ended, by either side */
    boolean isClosed();
}

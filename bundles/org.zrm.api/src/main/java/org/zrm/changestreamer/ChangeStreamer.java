package org.zrm.changestreamer;

import org.osgi.annotation.versioning.ProviderType;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;

/**
 * The component between one change source and any number of subscribers (replicators), the Java
 * counterpart of Zero's {@code ChangeStreamerService}.
 *
 * <p>Every change from the source is <b>forwarded</b> at once to the subscribers that are caught
 * up, <b>stored</b> in the change log so that subscribers that are behind can catch up, and
 * <b>acknowledged</b> upstream only after its change-log transaction has committed. Subscribers
 * that connect behind the live position are served from the change log and then switched to the
 * live stream with no gap and no duplicate.
 *
 * <p><b>Threading.</b> All methods are thread-safe and return without waiting for the stream: a
 * subscription is registered at a consistent point between two transactions by the streamer's own
 * threads. {@link #getChangeLogState()} is the only method that performs I/O on the caller's
 * thread.
 *
 * <p><b>Back-pressure.</b> The streamer never lets one slow subscriber stall the others for long:
 * after roughly every 64 KiB of forwarded messages it waits until all subscribers (or a majority,
 * after a configurable grace period) have consumed the latest message, and catch-up is paced by
 * each subscriber's own consumption acknowledgements. A subscriber that never acknowledges
 * therefore only delays forwarding by the grace period, but it holds back purging, because the log
 * is purged only below what every connected subscriber has acknowledged.
 */
@ProviderType
public interface ChangeStreamer {

    /** The newest subscriber protocol version served ({@code /replication/v6/...}). */
    int PROTOCOL_VERSION = 6;

    /** The oldest subscriber protocol version served. */
    int MIN_PROTOCOL_VERSION = 1;

    /**
     * Registers a subscriber and returns its message stream. Never blocks and never throws for a
     * bad subscription: protocol-level rejections are delivered in-band, as upstream does:
     * <ul>
     *   <li>a different replica version yields one {@code ["error",{"type":1,...}]} frame and the
     *       subscription ends;</li>
     *   <li>a purged watermark yields {@code ["error",{"type":2,...}]} for serving subscribers, and
     *       a reset of the pipeline for backup subscribers;</li>
     *   <li>otherwise the first frame is a {@code status} (protocol v2 and later), followed by the
     *       catch-up transactions and then the live stream.</li>
     * </ul>
     * Other failures (change-log errors, shutdown) end the subscription without an error frame;
     * clients reconnect from their own watermark. Subscriptions made before the streamer has
     * started are queued and served once it runs.
     *
     * @param context the parsed subscription request
     * @return the subscription, owned by the caller, who must close it when the connection ends
     */
    Subscription subscribe(SubscriberContext context);

    /**
     * Reports the replica version served and the earliest watermark a subscriber can catch up
     * from. Used to answer {@code /snapshot} requests.
     *
     * @return the state
     * @throws ChangeLogException if the change log could not be read
     */
    ChangeLogState getChangeLogState() throws ChangeLogException;

    /**
     * Starts a {@code /snapshot} reservation for {@code taskID}: while any reservation is open no
     * cleanup is scheduled, so a new node can restore the backup and catch up from it. The active
     * backup monitor sends the {@code status} message (backup URL, replica version, minimum
     * watermark) through {@code reservation}. A previous reservation of the same task is closed.
     * Reservations are held by the streamer's coordinator, so they survive a swap of the backup
     * monitor.
     *
     * @param taskID the restoring task's id, non-empty
     * @param reservation the connection-side handle of the reservation
     * @throws SnapshotUnavailableException if no backup monitor with a backup location is active;
     *     the message is upstream's text, and clients retry
     */
    void reserveSnapshot(String taskID, SnapshotReservation reservation) throws SnapshotUnavailableException;

    /**
     * Ends {@code taskID}'s reservation because the task has subscribed with
     * {@code initial=true}; the reservation's duration may raise the learned cleanup delay. Called
     * right after {@link #subscribe(SubscriberContext)}, whatever the subscription's outcome. No-op
     * if there is no such reservation.
     *
     * @param taskID the task id from the subscription
     */
    void endReservation(String taskID);
}

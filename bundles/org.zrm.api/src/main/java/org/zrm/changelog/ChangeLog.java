package org.zrm.changelog;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;
import org.zrm.changesource.SubscriptionState;

/**
 * The durable change log shared by the change streamer's storer (the single writer), its catch-up
 * readers and its purge job.
 *
 * <p><b>Threading.</b> Implementations are thread-safe services: the storer thread, several
 * catch-up threads and the purge timer call them concurrently. Each call that needs the database
 * takes its own connection from a bounded pool, so calls may block while the pool is exhausted.
 * The objects they return ({@link ChangeLogTransaction}, {@link CatchupSnapshot},
 * {@link CatchupCursor}, {@link PurgeLock}) hold one connection each and are <em>not</em>
 * thread-safe: confine each to one thread at a time (handing it to another thread through a
 * happens-before edge, such as an executor submission, is fine).
 *
 * <p><b>Ownership.</b> Exactly one replication manager, identified by its task id, owns the log.
 * Writes and purges verify ownership inside their own database transaction and fail with
 * {@link OwnershipLostException} if another task has taken over, so a superseded node can never
 * write behind its successor's back.
 *
 * <p><b>Ordering.</b> Watermarks are compared as strings (see {@link org.zrm.watermark.Watermarks}).
 * Rows are keyed by {@code (watermark, pos)}; all rows of a transaction share its commit
 * watermark.
 */
@ProviderType
public interface ChangeLog {

    /**
     * Service property naming the storage backend, used in target filters, e.g.
     * {@code "postgres"}. Type {@code String}.
     */
    String KIND = "zrm.changelog.kind";

    /**
     * Makes the log's replication configuration match the local replica (upstream
     * {@code ensureReplicationConfig}), in one transaction.
     *
     * <ul>
     *   <li>No configuration yet: store {@code replicaVersion} and {@code publications}, set
     *       {@code lastWatermark = replicaVersion} and write the two initial rows at
     *       {@code replicaVersion}.</li>
     *   <li>Different replica version or publication set: if the replica has not moved past its
     *       initial sync ({@code watermark == replicaVersion}), reset the log (truncate all tables
     *       in the documented lock order) and initialise it as above; otherwise throw
     *       {@link ResetRequiredException}.</li>
     *   <li>Same configuration but flagged {@code resetRequired}: throw
     *       {@link ResetRequiredException} if {@code autoReset}, else log a prominent error and
     *       continue.</li>
     * </ul>
     *
     * @param state the replica's subscription state
     * @param autoReset whether the operator allows automatic re-syncs
     * @throws ResetRequiredException if the replica must be re-synced before streaming
     * @throws ChangeLogException if the store cannot be read or written
     */
    void ensureReplicationConfig(SubscriptionState state, boolean autoReset) throws ChangeLogException;

    /**
     * Flags the configuration as {@code resetRequired}, so that the next start re-syncs (with
     * auto-reset) or warns. Called on a {@code reset-required} control message from the source and
     * when a backup-mode subscriber has fallen behind the log.
     *
     * @throws ChangeLogException if the flag could not be stored
     */
    void markResetRequired() throws ChangeLogException;

    /**
     * Makes {@code taskID} the owner of the log and publishes its discovery address. Blocks while
     * the previous owner's write transaction is open; the previous owner then fails its next
     * commit with {@link OwnershipLostException}.
     *
     * @param taskID the new owner's task id
     * @param ownerAddress the address subscribers discover, {@code host:port} for {@code ws}, else
     *     {@code <protocol>://host:port}
     * @throws ChangeLogException if the update failed
     */
    void assumeOwnership(String taskID, String ownerAddress) throws ChangeLogException;

    /**
     * Reads the single replication-state row.
     *
     * @return last stored watermark, owner and owner address
     * @throws ChangeLogException if the read failed
     */
    ReplicationState replicationState() throws ChangeLogException;

    /**
     * Reads, in one read-only snapshot, where the next upstream stream must start and which
     * backfills are unfinished (upstream {@code getStartStreamInitializationParameters}).
     *
     * @return the parameters for {@link org.zrm.changesource.ChangeSource#startStream}
     * @throws ChangeLogException if the read failed
     */
    StreamStartParameters streamStartParameters() throws ChangeLogException;

    /**
     * Opens the write transaction for one upstream transaction and locks the ownership row, which
     * serialises writers against {@link #assumeOwnership}. Called by the storer on {@code begin}.
     *
     * @param taskID the writer's task id; checked against the owner at commit
     * @return the open transaction; the caller must commit it or close it
     * @throws ChangeLogException if the transaction could not be opened
     */
    ChangeLogTransaction beginTransaction(String taskID) throws ChangeLogException;

    /**
     * Opens a read-only snapshot for catching subscribers up. The method returns only after the
     * snapshot is pinned, i.e. its first read (the last stored watermark) has completed: the storer
     * calls it between two stored transactions and must not store the next one before the
     * snapshot exists, otherwise a subscriber could miss or double-receive a transaction.
     *
     * @return the pinned snapshot; the caller must close it
     * @throws ChangeLogException if the snapshot could not be opened
     */
    CatchupSnapshot openCatchupSnapshot() throws ChangeLogException;

    /**
     * Deletes the rows strictly below {@code watermark}, always keeping the newest stored
     * transaction (so a subscriber at it can still be found, even when the backup is ahead of the
     * durable log). Fails fast if a {@link PurgeLock} is held by another node, and rolls back if
     * ownership has moved to another task.
     *
     * @param watermark the purge bound; rows at it are kept
     * @param taskID the caller's task id
     * @return the number of rows deleted
     * @throws OwnershipLostException if another task owns the log
     * @throws ChangeLogException if the purge failed, including when the log is purge-locked
     */
    long purgeBefore(String watermark, String taskID) throws ChangeLogException;

    /**
     * Reports the configured replica version and the earliest watermark a subscriber can resume
     * from ({@code min(watermark)} of the log, or the replica version if the log is empty, which
     * implementations log as unexpected). Served to {@code /snapshot} clients.
     *
     * @return the state
     * @throws ChangeLogException if the read failed
     */
    ChangeLogState changeLogState() throws ChangeLogException;

    /**
     * Counts the log's rows and reads its oldest and newest watermark. Reads the whole table
     * index: callers sample it at an interval, never per request.
     *
     * @return the size
     * @throws ChangeLogException if the read failed
     * @since 1.3
     */
    ChangeLogSize size() throws ChangeLogException;

    /**
     * Counts the rows {@link #purgeBefore(String, String) purgeBefore(watermark, ...)} would delete
     * now, without deleting anything or taking locks: a dry run of a purge.
     *
     * @param watermark the purge bound; rows at it are kept, and so is the newest transaction
     * @return the number of rows a purge to {@code watermark} would delete
     * @throws ChangeLogException if the read failed
     * @since 1.3
     */
    long countPurgeable(String watermark) throws ChangeLogException;

    /**
     * Takes a shared lock on the oldest row, which blocks a previous owner's purges while this node
     * restores a backup and takes over (upstream {@code PurgeLocker}). Release it after
     * {@link #assumeOwnership}, if the restore failed, or before re-syncing.
     *
     * @return the lock with the log's replica version and minimum watermark, or empty if the log
     *     has no rows (nothing to protect)
     * @throws ChangeLogException if the lock could not be taken
     */
    Optional<PurgeLock> acquirePurgeLock() throws ChangeLogException;
}

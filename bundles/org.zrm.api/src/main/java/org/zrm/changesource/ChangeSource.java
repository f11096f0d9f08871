package org.zrm.changesource;

import java.util.List;
import java.util.OptionalLong;
import org.osgi.annotation.versioning.ConsumerType;
import org.zrm.protocol.BackfillRequest;

/**
 * An upstream-specific producer of committed transactions, the Java counterpart of Zero's
 * {@code ChangeSource} (plus the initialisation step that upstream performs before constructing
 * it).
 *
 * <p><b>Registration.</b> Implementations are OSGi services carrying the {@link #TYPE} property,
 * e.g. {@code zrm.changesource.type=pg}; the change streamer selects one with a target filter.
 * Activation must not block: connecting, migrating the upstream schema and initial sync happen in
 * {@link #initialize(boolean)}, which the streamer calls on its own worker thread.
 *
 * <p><b>Life cycle and threading.</b> The change streamer calls, from one worker thread at a time:
 * {@link #initialize(boolean)} once (again with {@code true} after an {@link AutoResetException}),
 * {@link #startLagReporter()} once, then {@link #startStream(String, List)} in a reconnect loop,
 * at most one open {@link ChangeStream} at a time. {@link #stop()} may be called from any thread,
 * including while another method is blocked, and must make that call return promptly (with a
 * {@link ChangeSourceException}). Blocking methods must also respond to thread interruption.
 *
 * <p><b>Errors.</b> All failures are reported as {@link ChangeSourceException}. Its subtypes tell
 * the streamer what to do: a plain {@code ChangeSourceException} is retried with back-off from the
 * last stored watermark; a {@link ChangeSourceAbortedException} stops the pipeline (for example
 * because another replication manager took over the replication slot); an
 * {@link AutoResetException} asks for the local replica to be discarded and re-synced.
 *
 * <p>This is a consumer type: third parties implement it, so new methods will only be added as
 * {@code default} methods within a major version.
 */
@ConsumerType
public interface ChangeSource {

    /**
     * Service property naming the kind of source, used in the change streamer's target filter:
     * {@code "pg"} for Postgres logical replication, {@code "custom"} for Zero's custom
     * change-source protocol, or a third party's own value. Type {@code String}.
     */
    String TYPE = "zrm.changesource.type";

    /**
     * Prepares the upstream and the local replica and reports the replica's subscription state.
     *
     * <p>This covers upstream's {@code initializePostgresChangeSource}/
     * {@code initializeCustomChangeSource}: migrate the local replica, run initial sync if the
     * replica is new, then verify that the upstream still matches it (shard schema, publications,
     * replication slot). It can take a long time (initial sync copies every table) and should
     * report progress in its log.
     *
     * @param resetReplica {@code true} to first discard the local replica and start over with a
     *     fresh initial sync; the streamer passes {@code true} exactly once, after a previous call
     *     failed with {@link AutoResetException}
     * @return the replica's replica version, publications and current watermark; the streamer
     *     checks it against the change log with
     *     {@link org.zrm.changelog.ChangeLog#ensureReplicationConfig}
     * @throws AutoResetException if the replica cannot continue its lineage (slot missing or
     *     invalidated, publications changed, corrupt replica file) and must be re-synced
     * @throws ChangeSourceAbortedException if the pipeline must stop without retrying
     * @throws ChangeSourceException for retryable failures, such as a connection error
     * @throws InterruptedException if the calling thread was interrupted
     */
    SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException;

    /**
     * Starts periodic replication-lag reports, which later arrive in the stream as {@code status}
     * messages carrying a {@code lagReport}. Called once, after {@link #initialize(boolean)}.
     *
     * @return the epoch-millisecond time at which the first report is expected to be sent, or
     *     empty if this source does not support lag reporting or it is disabled
     * @throws ChangeSourceException if the reporter could not be started; the streamer logs it and
     *     continues without lag reports
     */
    OptionalLong startLagReporter() throws ChangeSourceException;

    /**
     * Opens a stream of the transactions committed after {@code afterWatermark}.
     *
     * <p>The call returns once the upstream stream is established (for Postgres: the previous
     * subscriber of the slot was terminated and {@code START_REPLICATION} was sent at
     * {@code major(afterWatermark) + 1}). Transactions are then pulled from the returned stream.
     *
     * @param afterWatermark the last commit watermark durably stored in the change log; the stream
     *     must start with the first transaction whose commit watermark is greater than it
     * @param backfillRequests unfinished column backfills recorded in the change log, to be
     *     resumed by the source; empty if none (never {@code null})
     * @return an open stream, owned by the caller, who must {@link ChangeStream#close() close} it
     * @throws ChangeSourceAbortedException if streaming can never succeed from this node, e.g. the
     *     replication slot is gone because another replication manager now owns the upstream
     * @throws ChangeSourceException for retryable failures
     * @throws InterruptedException if the calling thread was interrupted
     */
    ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException;

    /**
     * Releases everything this source holds: the open stream (as if closed), the lag reporter,
     * timers and connection pools. Idempotent; may be called from any thread. After it returns no
     * other method may be called, except that a source registered as a service may be
     * re-initialised only after OSGi re-activates it.
     */
    void stop();
}

package org.zrm.replicator.internal;

import org.zrm.replica.apply.ChangeProcessor;
import org.zrm.replica.apply.CommitResult;
import org.zrm.replica.apply.ChangeProcessingException;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.protocol.subscriber.SubscriberProtocol;
import org.zrm.protocol.subscriber.SubscriptionError;
import org.zrm.replica.ReplicaState;
import org.zrm.replica.ReplicaStateReader;

/**
 * The backup-mode replicator (upstream {@code IncrementalSyncer} in mode {@code backup}): keeps
 * the replica file up to date from a change streamer, on one thread of its own.
 *
 * <ol>
 *   <li>Waits, with backoff, until the change source's initial sync has produced the replica.</li>
 *   <li>Subscribes from the replica's own {@code stateVersion} ({@code initial=true} while it is
 *       still the watermark the replicator started from) and applies each transaction in one
 *       SQLite transaction, acknowledging every message once processed.</li>
 *   <li>On a connection failure, a malformed message or a failed change, discards the open
 *       transaction and resubscribes after a backoff from the replica's watermark, so nothing is
 *       lost or applied twice.</li>
 *   <li>On a {@code WrongReplicaVersion} or {@code WatermarkTooOld} error frame, stops: this
 *       replica cannot be continued. The change streamer resets in that case and the change
 *       source re-syncs the replica file; the replicator resumes once the file holds a different
 *       replica version.</li>
 * </ol>
 */
final class Replicator {

    private static final Logger LOG = LoggerFactory.getLogger(Replicator.class);

    private final ReplicaFile replica;
    private final ChangeStreamClient client;
    private final ProtocolCodec codec;
    private final String taskId;
    private final String subscriberId;
    private final Backoff retryBackoff;
    private final Backoff replicaWaitBackoff;
    private final ReplicatorStatus status = new ReplicatorStatus();
    private final DiskFullNotice diskFull;
    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile StreamConnection current;
    private Thread thread;

    /**
     * @param taskId the task id sent as {@code taskID}; {@code null} for none
     * @param subscriberId the subscriber {@code id}, for the change streamer's logs
     */
    Replicator(ReplicaFile replica, ChangeStreamClient client, ProtocolCodec codec, String taskId, String subscriberId,
            long retryInitialMs, long retryMaxMs) {
        this.replica = replica;
        this.client = client;
        this.codec = codec;
        this.taskId = taskId == null || taskId.isEmpty() ? null : taskId;
        this.subscriberId = subscriberId;
        this.retryBackoff = new Backoff(retryInitialMs, retryMaxMs);
        this.replicaWaitBackoff = new Backoff(retryInitialMs, retryMaxMs);
        this.diskFull = new DiskFullNotice(replica.path());
    }

    ReplicatorStatus status() {
        return status;
    }

    String target() {
        return client.target();
    }

    synchronized void start() {
        if (thread != null) {
            throw new IllegalStateException("already started");
        }
        thread = new Thread(this::run, "zrm-replicator");
        thread.start();
    }

    /** Stops and waits (bounded) for the thread; an open transaction is rolled back. */
    void stop() throws InterruptedException {
        stopping = true;
        stopSignal.countDown();
        StreamConnection c = current;
        if (c != null) {
            c.close();
        }
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            t.join(TimeUnit.SECONDS.toMillis(30));
            if (t.isAlive()) {
                LOG.warn("replicator: thread did not stop within 30 s");
            }
        }
        status.phase(ReplicatorStatus.Phase.STOPPED);
    }

    private void run() {
        String replicaVersion = null;
        String initialWatermark = null;
        String rejectedReplicaVersion = null;
        try {
            while (!stopping) {
                Optional<ReplicaState> ready = awaitReplica(rejectedReplicaVersion);
                if (ready.isEmpty()) {
                    break;
                }
                rejectedReplicaVersion = null;
                ReplicaState state = ready.get();
                if (!state.replicaVersion().equals(replicaVersion)) {
                    replicaVersion = state.replicaVersion();
                    initialWatermark = state.stateVersion();
                    LOG.info("replicator: replica {} at replicaVersion {} stateVersion {}", replica.path(),
                            replicaVersion, initialWatermark);
                }
                status.replica(state);
                try {
                    replicate(replicaVersion, initialWatermark);
                    status.error("change streamer ended the subscription");
                    LOG.info("replicator: change streamer at {} ended the subscription; resubscribing", client.target());
                } catch (FatalSubscriptionException e) {
                    status.error(e.getMessage());
                    status.phase(ReplicatorStatus.Phase.STOPPED_ON_ERROR);
                    LOG.error("replicator: stopped: {}; waiting for the replica file to be re-synced", e.getMessage());
                    rejectedReplicaVersion = replicaVersion;
                    continue;
                } catch (IOException | SQLException | ChangeProcessingException | RuntimeException e) {
                    if (stopping) {
                        break;
                    }
                    status.error(String.valueOf(e.getMessage()));
                    if (DiskFullNotice.isDiskFull(e)) {
                        String line = diskFull.failed(status.stateVersion());
                        if (line != null) {
                            LOG.error(line);
                        } else {
                            LOG.debug("replicator: replica filesystem still full at stateVersion {}: {}",
                                    status.stateVersion(), e.toString());
                        }
                    } else {
                        LOG.warn("replicator: replication from {} failed at stateVersion {}: {}", client.target(),
                                status.stateVersion(), e.toString());
                    }
                }
                if (!stopping) {
                    status.phase(ReplicatorStatus.Phase.BACKING_OFF);
                    status.reconnecting();
                    if (pause(retryBackoff.next())) {
                        break;
                    }
                }
            }
        } catch (InterruptedException e) {
            if (!stopping) {
                LOG.error("replicator: interrupted unexpectedly; stopping");
                status.error("interrupted");
            }
        } catch (Error e) {
            status.error(e.toString());
            throw e;
        }
        status.connected(false);
        status.phase(ReplicatorStatus.Phase.STOPPED);
        LOG.info("replicator: stopped at stateVersion {}", status.stateVersion());
    }

    /** Waits without polling tightly; returns {@code true} if stopped meanwhile. */
    private boolean pause(long ms) throws InterruptedException {
        return stopSignal.await(ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Waits until the replica file is complete and, after a rejection, until it holds a different
     * replica version. The initial sync runs in another component and signals nothing the
     * replicator could wait on, so this polls the file with backoff (up to the retry maximum).
     */
    private Optional<ReplicaState> awaitReplica(String rejectedReplicaVersion) throws InterruptedException {
        replicaWaitBackoff.reset();
        boolean logged = false;
        while (!stopping) {
            try {
                Optional<ReplicaState> state = replica.readIfReady();
                if (state.isPresent() && !state.get().replicaVersion().equals(rejectedReplicaVersion)) {
                    return state;
                }
            } catch (SQLException e) {
                status.error("cannot read replica " + replica.path() + ": " + e.getMessage());
                LOG.warn("replicator: cannot read replica {}: {}", replica.path(), e.getMessage());
            }
            if (rejectedReplicaVersion == null) {
                status.phase(ReplicatorStatus.Phase.WAITING_FOR_REPLICA);
            }
            if (!logged) {
                LOG.info("replicator: waiting for {} replica at {}", rejectedReplicaVersion == null ? "a completed"
                        : "a re-synced (replicaVersion other than " + rejectedReplicaVersion + ")", replica.path());
                logged = true;
            }
            if (pause(replicaWaitBackoff.next())) {
                break;
            }
        }
        return Optional.empty();
    }

    /** One subscription: returns when the streamer ends it normally, throws on failure. */
    private void replicate(String replicaVersion, String initialWatermark) throws IOException, SQLException,
            ChangeProcessingException, FatalSubscriptionException, InterruptedException {
        status.phase(ReplicatorStatus.Phase.CONNECTING);
        Connection db = replica.openWriter();
        Object fileKey;
        ChangeProcessor opened;
        try {
            fileKey = replica.fileKey();
            opened = new ChangeProcessor(db, codec);
        } catch (IOException | SQLException | RuntimeException e) {
            try {
                db.close();
            } catch (SQLException ce) {
                e.addSuppressed(ce);
            }
            throw e;
        }
        try (ChangeProcessor processor = opened) {
            ReplicaState state = ReplicaStateReader.read(db)
                    .orElseThrow(() -> new SQLException("replica " + replica.path() + " has no replication state"));
            if (!state.replicaVersion().equals(replicaVersion)) {
                throw new IOException("replica " + replica.path() + " was replaced (replicaVersion "
                        + state.replicaVersion() + ", expected " + replicaVersion + ")");
            }
            status.replica(state);
            String watermark = state.stateVersion();
            SubscriberContext context = new SubscriberContext(SubscriberProtocol.PROTOCOL_VERSION, subscriberId, taskId,
                    ReplicatorMode.BACKUP, replicaVersion, watermark, watermark.equals(initialWatermark));
            try (StreamConnection stream = client.subscribe(context)) {
                current = stream;
                if (stopping) {
                    return;
                }
                status.connected(true);
                status.phase(ReplicatorStatus.Phase.REPLICATING);
                LOG.info("replicator: replicating from {} at watermark {} (initial={})", client.target(), watermark,
                        context.initial());
                consume(stream, processor, fileKey);
            } finally {
                current = null;
                status.connected(false);
            }
        }
    }

    private void consume(StreamConnection stream, ChangeProcessor processor, Object fileKey) throws IOException,
            ChangeProcessingException, FatalSubscriptionException, InterruptedException {
        StreamMessage message;
        while ((message = stream.take()) != null) {
            Downstream downstream;
            try {
                downstream = codec.decodeDownstream(message.json());
            } catch (ProtocolException e) {
                throw new IOException("malformed message from change streamer: " + e.getMessage() + ": "
                        + abbreviate(message.json()), e);
            }
            if (downstream instanceof Downstream.StatusMessage) {
                message.consumed();
            } else if (downstream instanceof Downstream.ErrorMessage err) {
                message.consumed();
                throwErrorFrame(err.error());
            } else {
                Downstream.ChangeMessage change = (Downstream.ChangeMessage) downstream;
                if (change.data() instanceof BeginMessage && fileKey != null && !fileKey.equals(replica.fileKey())) {
                    // Writing on would go to the unlinked old file, whose WAL shares the new file's
                    // "-wal" path: close everything and start over with the re-synced replica.
                    throw new IOException("replica file " + replica.path() + " was replaced (re-synced); reopening it");
                }
                CommitResult result = processor.process(change.data());
                if (result != null) {
                    status.committed(result.watermark(), commitLagMs((CommitMessage) change.data()));
                    retryBackoff.reset();
                    String resumed = diskFull.applied(result.watermark());
                    if (resumed != null) {
                        LOG.info(resumed);
                    }
                } else if (change.data() instanceof RollbackMessage) {
                    status.rolledBack();
                }
                // Acknowledged only once processed: a commit's ack follows its SQLite COMMIT, which is
                // what the streamer's purge gating relies on. Earlier messages of the transaction are
                // acknowledged as they are applied (as upstream does), so the streamer's per-subscriber
                // buffer and flow control see progress within large transactions too.
                message.consumed();
            }
        }
    }

    private static void throwErrorFrame(SubscriptionError error) throws IOException, FatalSubscriptionException {
        String text = (error.type() == ErrorType.WRONG_REPLICA_VERSION ? "WrongReplicaVersion"
                : error.type() == ErrorType.WATERMARK_TOO_OLD ? "WatermarkTooOld" : "Unknown") + ": "
                + (error.message() == null ? "" : error.message());
        if (error.type() == ErrorType.UNKNOWN) {
            // Upstream never sends type 0 (it just closes the socket); treat it like a closed socket.
            throw new IOException("change streamer reported " + text);
        }
        throw new FatalSubscriptionException("change streamer rejected the subscription: " + text);
    }

    /** Upstream commit time (µs, the Postgres source's {@code commitTime}) to now, or -1. */
    private static long commitLagMs(CommitMessage commit) {
        Object t = commit.commit().extra().get("commitTime");
        if (t instanceof Number n) {
            return Math.max(0, System.currentTimeMillis() - n.longValue() / 1000);
        }
        return -1;
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }
}

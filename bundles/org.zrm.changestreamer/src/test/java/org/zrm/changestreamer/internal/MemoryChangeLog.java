package org.zrm.changestreamer.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.CatchupRequest;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.PurgeLock;
import org.zrm.changelog.ReplicationState;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changelog.StorerListener;
import org.zrm.changelog.StorerStats;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;

/**
 * An in-memory change log and storer for tests of the streamer's parts without Postgres. It keeps
 * what the supervisor relies on: the replica version (reset when a new one is configured), the
 * reset-required flag (a second configuration of the same version then fails, as the real log
 * does), the owner and the last stored watermark. Stored rows are kept as {@code "<watermark>,<tag>"}.
 */
final class MemoryChangeLog implements ChangeLog, StorerFactory {

    private String replicaVersion;
    private String lastWatermark;
    private boolean resetRequired;
    final List<String> rows = new ArrayList<>();
    /** The task id of every successful assumeOwnership. */
    final BlockingQueue<String> ownerships = new LinkedBlockingQueue<>();
    /** Failures thrown by the next assumeOwnership calls, one each. */
    final BlockingQueue<ChangeLogException> ownershipFailures = new LinkedBlockingQueue<>();
    /** Every storer started, in order. */
    final BlockingQueue<MemoryStorer> storers = new LinkedBlockingQueue<>();
    volatile int resetMarks;
    /** If set, the next commit is not stored: the storer reports this failure instead. */
    volatile ChangeLogException failNextCommit;

    @Override
    public synchronized void ensureReplicationConfig(SubscriptionState state, boolean autoReset)
            throws ChangeLogException {
        if (state.replicaVersion().equals(replicaVersion)) {
            if (resetRequired) {
                throw new ResetRequiredException("change log of replica " + replicaVersion + " requires a reset");
            }
            return;
        }
        replicaVersion = state.replicaVersion();
        lastWatermark = state.watermark();
        resetRequired = false;
        rows.clear();
        rows.add(lastWatermark + ",begin");
        rows.add(lastWatermark + ",commit");
    }

    @Override
    public synchronized void markResetRequired() {
        resetRequired = true;
        resetMarks++;
    }

    @Override
    public void assumeOwnership(String taskID, String ownerAddress) throws ChangeLogException {
        ChangeLogException failure = ownershipFailures.poll();
        if (failure != null) {
            throw failure;
        }
        ownerships.add(taskID);
    }

    @Override
    public ReplicationState replicationState() {
        throw new UnsupportedOperationException();
    }

    @Override
    public synchronized StreamStartParameters streamStartParameters() {
        return new StreamStartParameters(lastWatermark, List.of());
    }

    @Override
    public ChangeLogTransaction beginTransaction(String taskID) {
        throw new UnsupportedOperationException();
    }

    @Override
    public CatchupSnapshot openCatchupSnapshot() {
        throw new UnsupportedOperationException();
    }

    @Override
    public long purgeBefore(String watermark, String taskID) {
        return 0;
    }

    @Override
    public synchronized ChangeLogState changeLogState() {
        return new ChangeLogState(replicaVersion, lastWatermark);
    }

    /** How often the streamer asked for the start-up purge lock. */
    final java.util.concurrent.atomic.AtomicInteger purgeLockRequests = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public synchronized org.zrm.changelog.ChangeLogSize size() {
        List<String> watermarks = rows.stream().map(r -> r.substring(0, r.indexOf(','))).sorted().toList();
        return new org.zrm.changelog.ChangeLogSize(rows.size(), watermarks.isEmpty() ? null : watermarks.get(0),
                watermarks.isEmpty() ? null : watermarks.get(watermarks.size() - 1));
    }

    @Override
    public synchronized long countPurgeable(String watermark) {
        String newest = size().newestWatermark();
        return rows.stream().map(r -> r.substring(0, r.indexOf(',')))
                .filter(w -> w.compareTo(watermark) < 0 && w.compareTo(newest) < 0).count();
    }

    /** Whether {@link #acquirePurgeLock} hands out a lock (as a non-empty change log does). */
    volatile boolean offerPurgeLock;
    /** Set when the lock handed out was closed. */
    final java.util.concurrent.atomic.AtomicBoolean purgeLockClosed = new java.util.concurrent.atomic.AtomicBoolean();

    @Override
    public Optional<PurgeLock> acquirePurgeLock() {
        purgeLockRequests.incrementAndGet();
        if (!offerPurgeLock) {
            return Optional.empty();
        }
        return Optional.of(new PurgeLock() {
            @Override
            public String replicaVersion() {
                return "01";
            }

            @Override
            public String minWatermark() {
                return "01";
            }

            @Override
            public void close() {
                purgeLockClosed.set(true);
            }
        });
    }

    synchronized List<String> rows() {
        return List.copyOf(rows);
    }

    private synchronized void store(String watermark, String tag, boolean commit) {
        rows.add(watermark + "," + tag);
        if (commit) {
            lastWatermark = watermark;
        }
    }

    // ------------------------------------------------------------------ StorerFactory

    @Override
    public Storer start(String taskID, StorerListener listener, CatchupHandler catchupHandler) {
        MemoryStorer s = new MemoryStorer(listener);
        storers.add(s);
        return s;
    }

    @Override
    public ChangeLog changeLog() {
        return this;
    }

    /**
     * Stores transactions at once and reports them durable on the enqueuing thread. Catch-up
     * requests are recorded and, unless {@code holdCatchups}, answered at once with "nothing to
     * catch up" (the subscriber goes live).
     */
    final class MemoryStorer implements Storer {
        private final StorerListener listener;
        private final List<String> pendingTx = new ArrayList<>();
        private String openWatermark;
        final List<CatchupRequest> catchups = new ArrayList<>();
        volatile boolean holdCatchups;
        volatile boolean aborted;
        volatile boolean stopped;

        MemoryStorer(StorerListener listener) {
            this.listener = listener;
        }

        @Override
        public void enqueue(ChangeStreamMessage message, String json) {
            if (message instanceof StatusMessage st) {
                listener.statusAcked(new ChangeSourceUpstream(st.status(), st.watermark(), st.trailerExtra()));
                return;
            }
            if (message instanceof ChangeStreamMessage.BeginMessage b) {
                openWatermark = b.commitWatermark();
                pendingTx.clear();
            }
            String tag = message instanceof ChangeStreamMessage.DataMessage d ? d.change().tag() : message.type();
            pendingTx.add(tag);
            if (message instanceof CommitMessage c) {
                ChangeLogException failure = failNextCommit;
                if (failure != null) {
                    failNextCommit = null;
                    pendingTx.clear();
                    listener.failed(failure);
                    return;
                }
                for (int i = 0; i < pendingTx.size(); i++) {
                    store(openWatermark, pendingTx.get(i), i == pendingTx.size() - 1);
                }
                pendingTx.clear();
                listener.stored(c.watermark(), new ChangeSourceUpstream(c.commit(), c.watermark()));
            } else if (message instanceof ChangeStreamMessage.RollbackMessage) {
                pendingTx.clear();
            }
        }

        /** Reports a failure as the real storer's writer thread would. */
        void fail(ChangeLogException cause) {
            listener.failed(cause);
        }

        @Override
        public void abort() {
            aborted = true;
            pendingTx.clear();
        }

        @Override
        public synchronized void enqueueCatchup(CatchupRequest request) {
            catchups.add(request);
            if (!holdCatchups) {
                ((CatchupRunner.Request) request).subscriber().setCaughtUp();
            }
        }

        synchronized List<CatchupRequest> catchups() {
            return List.copyOf(catchups);
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> barrier() {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }

        @Override
        public void stop() {
            stopped = true;
        }

        @Override
        public boolean awaitTermination(java.time.Duration timeout) {
            return true;
        }

        @Override
        public void close() {
            stopped = true;
        }

        @Override
        public long queuedBytes() {
            return 0;
        }

        @Override
        public long limitBytes() {
            return 0;
        }

        @Override
        public boolean isApplyingBackPressure() {
            return false;
        }

        @Override
        public long backPressureEvents() {
            return 0;
        }

        @Override
        public StorerStats stats() {
            return new StorerStats(0, 0, 0, 0);
        }
    }
}

package org.zrm.storer.internal.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.PurgeLock;
import org.zrm.changelog.ReplicationState;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changesource.SubscriptionState;

/**
 * An in-memory change log for the queue's unit tests: records committed groups, checks row order
 * like the real one, and lets a test hold or fail appends and commits.
 */
final class FakeChangeLog implements ChangeLog {

    /** Committed groups (database transactions), each a list of rows; empty lists when not retaining. */
    final List<List<ChangeLogEntry>> committed = Collections.synchronizedList(new ArrayList<>());
    final AtomicLong committedRows = new AtomicLong();
    final AtomicInteger rolledBack = new AtomicInteger();
    final AtomicInteger open = new AtomicInteger();
    final AtomicInteger commitsStarted = new AtomicInteger();
    final AtomicLong appends = new AtomicLong();
    /** Whether a write transaction was open when each snapshot was opened. */
    final List<Boolean> snapshotOpenedWithTxOpen = Collections.synchronizedList(new ArrayList<>());
    final List<FakeSnapshot> snapshots = Collections.synchronizedList(new ArrayList<>());

    volatile boolean retainRows = true;
    /** If set, each commit takes a permit first (tests release them to let commits through). */
    volatile Semaphore commitGate;
    /** If set, each append takes a permit first. */
    volatile Semaphore appendGate;
    /** Fails the n-th commit (0-based) with the returned exception, if non-null. */
    volatile Function<Integer, ChangeLogException> commitFailure = n -> null;
    /** Fails the n-th append (0-based) with the returned exception, if non-null. */
    volatile Function<Long, ChangeLogException> appendFailure = n -> null;
    volatile ChangeLogException snapshotFailure;
    private volatile String lastWatermark = "00";

    @Override
    public ChangeLogTransaction beginTransaction(String taskID) {
        open.incrementAndGet();
        return new Tx();
    }

    @Override
    public CatchupSnapshot openCatchupSnapshot() throws ChangeLogException {
        if (snapshotFailure != null) {
            throw snapshotFailure;
        }
        snapshotOpenedWithTxOpen.add(open.get() > 0);
        FakeSnapshot s = new FakeSnapshot(lastWatermark);
        snapshots.add(s);
        return s;
    }

    String lastWatermark() {
        return lastWatermark;
    }

    final class Tx implements ChangeLogTransaction {
        private final List<ChangeLogEntry> rows = new ArrayList<>();
        private long count;
        private String openWatermark;
        private long nextPos;
        private String last;
        private boolean done;

        @Override
        public void append(ChangeLogEntry e) throws ChangeLogException {
            Semaphore gate = appendGate;
            if (gate != null) {
                try {
                    if (!gate.tryAcquire(60, TimeUnit.SECONDS)) {
                        throw new ChangeLogException("append gate timed out");
                    }
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new ChangeLogException("interrupted", ie);
                }
            }
            long n = appends.getAndIncrement();
            ChangeLogException f = appendFailure.apply(n);
            if (f != null) {
                throw f;
            }
            if (openWatermark == null) {
                if (!e.tag().equals("begin") || e.pos() != 0 || (last != null && e.watermark().compareTo(last) <= 0)) {
                    throw new ChangeLogException("bad row " + e);
                }
                openWatermark = e.watermark();
            } else if (!e.watermark().equals(openWatermark) || e.pos() != nextPos) {
                throw new ChangeLogException("bad row " + e + ", expected pos " + nextPos + " of " + openWatermark);
            }
            nextPos = e.pos() + 1;
            if (e.tag().equals("commit")) {
                if (!openWatermark.equals(e.precommit())) {
                    throw new ChangeLogException("commit row without precommit " + e);
                }
                last = openWatermark;
                openWatermark = null;
            }
            count++;
            if (retainRows) {
                rows.add(e);
            }
        }

        @Override
        public void commit() throws ChangeLogException {
            int n = commitsStarted.getAndIncrement();
            Semaphore gate = commitGate;
            if (gate != null) {
                try {
                    if (!gate.tryAcquire(60, TimeUnit.SECONDS)) {
                        throw new ChangeLogException("commit gate timed out");
                    }
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new ChangeLogException("interrupted", ie);
                }
            }
            ChangeLogException f = commitFailure.apply(n);
            if (f != null) {
                close();
                throw f;
            }
            if (openWatermark != null) {
                close();
                throw new ChangeLogException("commit in the middle of " + openWatermark);
            }
            done = true;
            open.decrementAndGet();
            committed.add(List.copyOf(rows));
            committedRows.addAndGet(count);
            if (last != null) {
                lastWatermark = last;
            }
        }

        @Override
        public void close() {
            if (!done) {
                done = true;
                open.decrementAndGet();
                rolledBack.incrementAndGet();
            }
        }
    }

    static final class FakeSnapshot implements CatchupSnapshot {
        final String lastWatermark;
        volatile boolean closed;

        FakeSnapshot(String lastWatermark) {
            this.lastWatermark = lastWatermark;
        }

        @Override
        public String lastWatermark() {
            return lastWatermark;
        }

        @Override
        public CatchupCursor catchup(String replicaVersion, String watermark) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    @Override
    public void ensureReplicationConfig(SubscriptionState state, boolean autoReset) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void markResetRequired() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void assumeOwnership(String taskID, String ownerAddress) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ReplicationState replicationState() {
        return new ReplicationState(lastWatermark, "task", null);
    }

    @Override
    public StreamStartParameters streamStartParameters() {
        return new StreamStartParameters(lastWatermark, List.of());
    }

    @Override
    public long purgeBefore(String watermark, String taskID) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ChangeLogState changeLogState() {
        throw new UnsupportedOperationException();
    }

    @Override
    public org.zrm.changelog.ChangeLogSize size() {
        throw new UnsupportedOperationException();
    }

    @Override
    public long countPurgeable(String watermark) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Optional<PurgeLock> acquirePurgeLock() {
        return Optional.empty();
    }
}

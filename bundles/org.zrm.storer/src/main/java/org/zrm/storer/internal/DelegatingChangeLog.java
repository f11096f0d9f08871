package org.zrm.storer.internal;

import java.util.Objects;
import java.util.Optional;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogSize;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.PurgeLock;
import org.zrm.changelog.ReplicationState;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changesource.SubscriptionState;

/**
 * Forwards every {@link ChangeLog} call: the DS component is a thin shell over {@link PgChangeLog},
 * and tests override just the calls they intercept.
 */
public abstract class DelegatingChangeLog implements ChangeLog {

    private final ChangeLog delegate;

    protected DelegatingChangeLog(ChangeLog delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** @return the change log every call goes to */
    protected ChangeLog delegate() {
        return delegate;
    }

    @Override
    public void ensureReplicationConfig(SubscriptionState state, boolean autoReset) throws ChangeLogException {
        delegate.ensureReplicationConfig(state, autoReset);
    }

    @Override
    public void markResetRequired() throws ChangeLogException {
        delegate.markResetRequired();
    }

    @Override
    public void assumeOwnership(String taskID, String ownerAddress) throws ChangeLogException {
        delegate.assumeOwnership(taskID, ownerAddress);
    }

    @Override
    public ReplicationState replicationState() throws ChangeLogException {
        return delegate.replicationState();
    }

    @Override
    public StreamStartParameters streamStartParameters() throws ChangeLogException {
        return delegate.streamStartParameters();
    }

    @Override
    public ChangeLogTransaction beginTransaction(String taskID) throws ChangeLogException {
        return delegate.beginTransaction(taskID);
    }

    @Override
    public CatchupSnapshot openCatchupSnapshot() throws ChangeLogException {
        return delegate.openCatchupSnapshot();
    }

    @Override
    public long purgeBefore(String watermark, String taskID) throws ChangeLogException {
        return delegate.purgeBefore(watermark, taskID);
    }

    @Override
    public ChangeLogState changeLogState() throws ChangeLogException {
        return delegate.changeLogState();
    }

    @Override
    public ChangeLogSize size() throws ChangeLogException {
        return delegate.size();
    }

    @Override
    public long countPurgeable(String watermark) throws ChangeLogException {
        return delegate.countPurgeable(watermark);
    }

    @Override
    public Optional<PurgeLock> acquirePurgeLock() throws ChangeLogException {
        return delegate.acquirePurgeLock();
    }
}

package org.zrm.storer.internal;

import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.PurgeLock;

/**
 * Holds {@code FOR SHARE} on the log's oldest row in an open transaction. The session does not set
 * an idle-in-transaction timeout, so no keepalive is needed while the lock is held.
 */
final class PgPurgeLock implements PurgeLock {

    private static final Logger LOG = LoggerFactory.getLogger(PgPurgeLock.class);

    private final ConnectionPool.Lease lease;
    private final String replicaVersion;
    private final String minWatermark;
    private boolean released;

    PgPurgeLock(ConnectionPool.Lease lease, String replicaVersion, String minWatermark) {
        this.lease = lease;
        this.replicaVersion = replicaVersion;
        this.minWatermark = minWatermark;
    }

    @Override
    public String replicaVersion() {
        return replicaVersion;
    }

    @Override
    public String minWatermark() {
        return minWatermark;
    }

    @Override
    public synchronized void close() {
        if (released) {
            return;
        }
        released = true;
        try {
            lease.connection().commit();
            lease.connection().setAutoCommit(true);
            LOG.info("changelog: released purge lock on {}", minWatermark);
        } catch (SQLException e) {
            LOG.warn("changelog: error from purge-lock release (the lock ends with the connection): {}", e.getMessage());
            lease.discard();
        }
        lease.close();
    }
}

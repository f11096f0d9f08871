package org.zrm.changelog;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A shared lock on the change log's oldest row, held while a new replication manager restores its
 * replica and takes over, so that the previous owner cannot purge the changes the restored replica
 * still needs. Holds one open transaction; thread-confined like other change-log handles.
 */
@ProviderType
public interface PurgeLock extends AutoCloseable {

    /** @return the replica version of the locked log; a restored replica must match it */
    String replicaVersion();

    /** @return the minimum watermark at locking time; a restored replica must be at or after it */
    String minWatermark();

    /**
     * Commits the holding transaction, releasing the lock. Idempotent; never throws (a broken
     * connection releases the lock too); implementations log failures.
     */
    @Override
    void close();
}

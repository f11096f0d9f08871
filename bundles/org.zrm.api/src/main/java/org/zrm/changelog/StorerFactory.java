package org.zrm.changelog;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Starts {@link Storer}s over a change log, with the bounds (batch size, back-pressure, group
 * commit) configured on the implementation. Registered by the same component as the
 * {@link ChangeLog} it writes to, with the same {@link ChangeLog#KIND} property, so a consumer can
 * require both from one backend with matching target filters.
 */
@ProviderType
public interface StorerFactory {

    /**
     * Starts a storer and its writer thread, for one upstream stream.
     *
     * @param taskID this node's task id, checked by the change log at every commit
     * @param listener receives stored transactions, status echoes and the failure, on the writer
     *     thread
     * @param catchupHandler serves catch-up requests from pinned snapshots
     * @return the running storer; the caller must close it
     */
    Storer start(String taskID, StorerListener listener, CatchupHandler catchupHandler);

    /** @return the change log the storers write to */
    ChangeLog changeLog();
}

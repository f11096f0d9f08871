package org.zrm.changelog;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A pinned, read-only, repeatable-read view of the change log, from which one or more subscribers
 * are caught up one after another (they share one connection). Opened by
 * {@link ChangeLog#openCatchupSnapshot()}; not thread-safe.
 */
@ProviderType
public interface CatchupSnapshot extends AutoCloseable {

    /**
     * @return the {@code lastWatermark} read when the snapshot was pinned; catch-up never reads
     *     past it, because later transactions reach the subscriber live
     */
    String lastWatermark();

    /**
     * Starts reading the rows a subscriber at {@code watermark} is missing: rows with watermark
     * {@code > watermark} and {@code <= lastWatermark()}, in {@code (watermark, pos)} order. Only
     * one cursor may be open per snapshot at a time.
     *
     * @param replicaVersion the subscriber's replica version
     * @param watermark the last commit watermark the subscriber has applied
     * @return the cursor
     * @throws WrongReplicaVersionException if {@code replicaVersion} is not the log's
     * @throws ChangeLogException if the query could not be started
     */
    CatchupCursor catchup(String replicaVersion, String watermark) throws ChangeLogException;

    /** Ends the read-only transaction and returns its connection. Idempotent; never throws. */
    @Override
    void close();
}

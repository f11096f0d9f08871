package org.zrm.changestreamer;

/**
 * A {@code /snapshot} reservation cannot be served because no backup monitor with a backup
 * location is active: either none is configured (upstream message
 * {@code "replication-manager is not configured with a ZERO_LITESTREAM_BACKUP_URL"}), or the
 * monitor is being swapped. Clients retry every few seconds, so this is retryable.
 */
public class SnapshotUnavailableException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Upstream's text for a replication manager without a backup location. */
    public static final String NOT_CONFIGURED =
            "replication-manager is not configured with a ZERO_LITESTREAM_BACKUP_URL";

    /** @param message the reason sent to the client */
    public SnapshotUnavailableException(String message) {
        super(message);
    }
}

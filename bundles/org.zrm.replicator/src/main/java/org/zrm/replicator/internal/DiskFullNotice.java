package org.zrm.replicator.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;

/**
 * Tells a full replica filesystem from other replication failures, and reports it the way an
 * operator can act on: one ERROR line when the filesystem fills up (with the folder and its free
 * space), quiet retries while it stays full, one INFO line when a commit is applied again.
 *
 * <p>A full disk is an ordinary, retryable failure for the replicator: SQLite rolls the transaction
 * back, nothing past the last applied commit is acknowledged (acks follow the SQLite COMMIT), and
 * the subscription resumes from the replica's stateVersion once space returns. Only the reporting
 * differs, so that a disk that stays full for an hour is one clear line rather than one WARN per
 * retry.
 *
 * <p>Not thread-safe: used from the replicator's one thread.
 */
final class DiskFullNotice {

    /** SQLite's primary result code for "database or disk is full". */
    static final int SQLITE_FULL = 13;

    private final Path replica;
    private boolean full;
    private long retriesWhileFull;

    DiskFullNotice(Path replica) {
        this.replica = replica;
    }

    /** @return whether {@code failure} (or a cause of it) is the replica's filesystem being full */
    static boolean isDiskFull(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException e && (e.getErrorCode() & 0xff) == SQLITE_FULL) {
                return true;
            }
            String m = t.getMessage();
            if (m != null && (m.contains("SQLITE_FULL") || m.contains("No space left on device"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Records a failure that {@link #isDiskFull} recognised.
     *
     * @param stateVersion the last applied (and acknowledged) watermark
     * @return the ERROR line to log when the filesystem just filled up; {@code null} while it stays full
     */
    String failed(String stateVersion) {
        if (full) {
            retriesWhileFull++;
            return null;
        }
        full = true;
        retriesWhileFull = 0;
        return "replicator: the replica's filesystem is full (" + folder() + ", " + freeSpace()
                + "): nothing after stateVersion " + stateVersion + " is applied or acknowledged; the change log"
                + " keeps everything, and replication resumes from there once space is freed (retrying quietly)";
    }

    /**
     * Records an applied commit.
     *
     * @return the INFO line to log when this ends a full-disk episode; {@code null} otherwise
     */
    String applied(String watermark) {
        if (!full) {
            return null;
        }
        full = false;
        return "replicator: space is back on the replica's filesystem (" + freeSpace() + "); applied " + watermark
                + " after " + retriesWhileFull + " quiet retries";
    }

    boolean isFull() {
        return full;
    }

    private Path folder() {
        Path parent = replica.toAbsolutePath().getParent();
        return parent == null ? replica : parent;
    }

    private String freeSpace() {
        try {
            return Files.getFileStore(folder()).getUsableSpace() / 1024 + " KiB free";
        } catch (IOException e) {
            return "free space unknown: " + e.getMessage();
        }
    }
}

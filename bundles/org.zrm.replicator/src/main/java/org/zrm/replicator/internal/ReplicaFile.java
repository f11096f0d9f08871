package org.zrm.replicator.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.replica.ReplicaState;
import org.zrm.replica.ReplicaStateReader;

/**
 * The SQLite replica file: opening connections, recognising a completed initial sync, preparing
 * the writer connection (WAL). The watermark is written by
 * {@link org.zrm.replica.ReplicaMetadataStore#updateWatermark}, the state read by
 * {@link ReplicaStateReader}.
 */
final class ReplicaFile {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFile.class);

    /** Upstream retries setting the journal mode 5 times, 500 ms apart (another process may hold a lock). */
    private static final int JOURNAL_MODE_ATTEMPTS = 5;
    private static final long JOURNAL_MODE_RETRY_MS = 500;

    private final Path path;
    private final int walAutocheckpoint;

    /**
     * @param path the replica file
     * @param walAutocheckpoint {@code PRAGMA wal_autocheckpoint} for the writer: 0 when litestream
     *     owns checkpoints (upstream's backup mode), SQLite's default 1000 otherwise
     */
    ReplicaFile(Path path, int walAutocheckpoint) {
        this.path = path.toAbsolutePath();
        this.walAutocheckpoint = walAutocheckpoint;
    }

    Path path() {
        return path;
    }

    /**
     * Opens a connection. sqlite-jdbc is called directly because, in OSGi, DriverManager does not
     * see drivers of other bundles.
     */
    Connection open(boolean readOnly) throws SQLException {
        Properties props = new Properties();
        if (readOnly) {
            props.setProperty("open_mode", "1"); // SQLITE_OPEN_READONLY: never creates the file
        }
        Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + path, props);
        if (c == null) {
            throw new SQLException("sqlite-jdbc did not accept " + path);
        }
        return c;
    }

    /**
     * Reads the replica's state if the initial sync has completed (see {@link ReplicaStateReader}:
     * the change source writes the metadata rows in one transaction and renames the file into place
     * afterwards).
     *
     * @return the state, or empty while there is no completed replica
     * @throws SQLException if the file exists but cannot be read
     */
    Optional<ReplicaState> readIfReady() throws SQLException {
        if (!Files.isRegularFile(path)) {
            return Optional.empty();
        }
        removeStaleWal();
        try (Connection c = open(true); Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 30000");
            return ReplicaStateReader.read(c);
        }
    }

    /**
     * Deletes a {@code -wal}/{@code -shm} pair left over from a previous file at the same path.
     *
     * <p>The change source re-syncs by renaming a new file (never in WAL mode) over the replica. A
     * WAL of the old file that is still there (its writer could not checkpoint into a moved file,
     * or crashed) would otherwise be replayed by SQLite onto the new file, which silently corrupts
     * it: SQLite opens any database with an existing {@code -wal} in WAL mode. A database whose
     * header still says rollback-journal mode (format bytes 18/19 = 1) owns no WAL, so a WAL next
     * to it can only be stale. Must run before any connection to the file is opened.
     */
    void removeStaleWal() throws SQLException {
        Path wal = path.resolveSibling(path.getFileName() + "-wal");
        if (!Files.exists(wal)) {
            return;
        }
        byte[] header = new byte[100];
        try (java.io.InputStream in = Files.newInputStream(path)) {
            if (in.readNBytes(header, 0, header.length) < header.length || header[18] == 2 || header[19] == 2) {
                return; // empty, or a WAL-mode database: the WAL is its own
            }
            Path shm = path.resolveSibling(path.getFileName() + "-shm");
            LOG.warn("replicator: removing stale {} (and -shm) left by a replaced replica file", wal);
            Files.deleteIfExists(wal);
            Files.deleteIfExists(shm);
        } catch (java.io.IOException e) {
            throw new SQLException("cannot check " + wal + " for staleness: " + e, e);
        }
    }

    /** Opens and prepares the single writer connection: WAL journal, busy timeout, checkpointing. */
    Connection openWriter() throws SQLException, InterruptedException {
        removeStaleWal();
        Connection c = open(false);
        try (Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 30000");
            setWalMode(st);
            st.execute("PRAGMA analysis_limit = 1000");
            st.execute("PRAGMA wal_autocheckpoint = " + walAutocheckpoint);
            // synchronous stays FULL (the default): stateVersion is what purging of the change log
            // is eventually gated on, so a committed watermark must survive a power loss.
            st.execute("PRAGMA optimize = 0x10002");
        } catch (SQLException | InterruptedException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException ce) {
                e.addSuppressed(ce);
            }
            throw e;
        }
        return c;
    }

    private void setWalMode(Statement st) throws SQLException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try (ResultSet rs = st.executeQuery("PRAGMA journal_mode = WAL")) {
                String mode = rs.next() ? rs.getString(1) : null;
                if ("wal".equalsIgnoreCase(mode)) {
                    return;
                }
                throw new SQLException("could not switch " + path + " to WAL (journal_mode is " + mode + ")");
            } catch (SQLException e) {
                if (attempt >= JOURNAL_MODE_ATTEMPTS) {
                    throw e;
                }
                LOG.warn("replicator: setting journal_mode=WAL on {} failed (attempt {}), retrying: {}", path, attempt,
                        e.getMessage());
                Thread.sleep(JOURNAL_MODE_RETRY_MS); // bounded retry of a lock held by another process
            }
        }
    }

    /**
     * The identity of the file now at the path (inode on Unix), or {@code null} where the file
     * system has none. The change source re-syncs by renaming a new file over the replica, which
     * changes the identity.
     */
    Object fileKey() throws java.io.IOException {
        return Files.readAttributes(path, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    }
}

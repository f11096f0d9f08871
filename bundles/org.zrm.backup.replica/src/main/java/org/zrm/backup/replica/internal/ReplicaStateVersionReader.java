package org.zrm.backup.replica.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import org.sqlite.JDBC;
import org.sqlite.SQLiteConfig;
import org.zrm.replica.ReplicaStateReader;
import org.zrm.replica.ReplicationStateRow;
import org.zrm.watermark.StateVersion;

/**
 * Reads {@code stateVersion} from the replica file's {@code _zero.replicationState}
 * ({@link ReplicaStateReader#replicationState}), with a fresh
 * read-only connection per call (upstream opens a new {@code Database} per check too, which also
 * follows a replica file that a re-sync renamed into place).
 *
 * <p>Upstream opens the file read-write with create-if-missing, so a missing replica was created
 * empty and then failed with "no such table" (spec §4, BUG). Here the file is opened read-only
 * without create: a missing file is reported as {@link NoSuchFileException} and nothing is
 * created.
 *
 * <p>Reading a WAL-mode file needs its {@code -wal} and {@code -shm} companions; if the writer has
 * closed the file (and removed them), SQLite recreates them empty even for a read-only connection
 * and leaves them. That is the WAL protocol, not a new replica; the replicator reuses them.
 *
 * <p>A read-only reader deletes nothing, not even a {@code -wal} left behind by a replaced file
 * (the replicator removes those before it opens the file). Reading in that short window can only
 * yield the replaced file's older watermark, which purges less, or an error, which is logged.
 */
final class ReplicaStateVersionReader {

    /**
     * How long a read waits for a lock. In WAL mode readers never wait for the writer; only WAL
     * recovery after a crash or a truncating checkpoint can hold them up briefly. Kept well under
     * the monitor's stop bound, because SQLite's busy wait cannot be interrupted; a read that gives
     * up is logged and retried on the next tick.
     */
    static final int BUSY_TIMEOUT_MS = 2_000;

    private final Path file;

    /** @param file the replica file, absolute */
    ReplicaStateVersionReader(Path file) {
        this.file = file;
    }

    Path file() {
        return file;
    }

    /**
     * @return the replica's state version, a valid {@link StateVersion} string
     * @throws NoSuchFileException if the replica file does not exist (nothing was created)
     * @throws ReplicaReadException if the file cannot be opened or queried, or holds no row or a
     *     state version that is not a well-formed text value
     */
    String read() throws NoSuchFileException, ReplicaReadException {
        // SQLite's read-only open fails on a missing file too, but only with a generic
        // SQLITE_CANTOPEN; checking first gives the operator a message that names the cause.
        if (!Files.exists(file)) {
            throw new NoSuchFileException(file.toString());
        }
        ReplicationStateRow row;
        try (Connection c = open()) {
            row = ReplicaStateReader.replicationState(c).orElseThrow(
                    () -> new ReplicaReadException("_zero.replicationState in " + file + " has no row"));
        } catch (SQLException e) {
            if (!Files.exists(file)) {
                throw new NoSuchFileException(file.toString()); // removed between the check and the open
            }
            throw new ReplicaReadException("cannot read _zero.replicationState from " + file + ": " + e.getMessage()
                    + journalModeHint(), e);
        }
        // The value goes to the change streamer's purge, which compares watermarks as strings and
        // deletes everything below: a stray text such as "zzz" would purge nearly the whole change
        // log. Upstream only checks that it is a string; the port also requires a parseable
        // state version and schedules nothing otherwise.
        String value = row.stateVersion();
        if (!"text".equals(row.stateVersionStorageClass())) {
            throw new ReplicaReadException("_zero.replicationState.stateVersion in " + file + " is "
                    + row.stateVersionStorageClass() + ", not text");
        }
        try {
            StateVersion.parse(value);
        } catch (IllegalArgumentException e) {
            throw new ReplicaReadException("_zero.replicationState.stateVersion in " + file
                    + " is not a state version: " + e.getMessage(), e);
        }
        return value;
    }

    /**
     * Opens with SQLite's read-only flag and without the create flag. sqlite-jdbc is called
     * directly because, in OSGi, DriverManager does not see drivers of other bundles.
     */
    private Connection open() throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true); // SQLITE_OPEN_READONLY, and clears READWRITE and CREATE
        config.setBusyTimeout(BUSY_TIMEOUT_MS);
        Connection c = JDBC.createConnection("jdbc:sqlite:" + file, config.toProperties());
        if (c == null) {
            throw new SQLException("sqlite-jdbc did not accept " + file);
        }
        return c;
    }

    /**
     * Zero's serving replicator keeps its file in wal2 mode (header read/write versions 3), which
     * stock SQLite builds such as sqlite-jdbc's cannot open; say so instead of leaving the operator
     * with "file is not a database". ZRM's own replicator writes plain WAL.
     */
    private String journalModeHint() {
        byte[] header = new byte[20];
        try (InputStream in = Files.newInputStream(file)) {
            if (in.readNBytes(header, 0, header.length) == header.length && (header[18] == 3 || header[19] == 3)) {
                return " (the file is in wal2 journal mode, which this SQLite build cannot read; ZRM's replicator"
                        + " writes WAL)";
            }
            return "";
        } catch (IOException e) {
            return " (header unreadable: " + e + ")";
        }
    }
}

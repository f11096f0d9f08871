package org.zrm.backup.litestream3.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import java.util.Properties;
import org.zrm.replica.ReplicaStateReader;

/**
 * Reads {@code writeTimeMs} from the replica's {@code _zero.replicationState}
 * ({@link ReplicaStateReader#replicationState}), for the backup-lag
 * gauge. Opens the file read-only and never creates it: the backup-mode replicator is its only
 * writer, and a missing file must stay missing.
 */
final class ReplicaLagReader {

    /** SQLITE_OPEN_READONLY alone: without SQLITE_OPEN_CREATE a missing file is an error. */
    private static final String OPEN_READONLY = "1";

    private final Path replicaFile;

    ReplicaLagReader(Path replicaFile) {
        this.replicaFile = replicaFile.toAbsolutePath();
    }

    /**
     * @return the replica's last write time in ms since the epoch, or empty when it is NULL (no
     *     write recorded yet)
     * @throws SQLException if the file is missing or unreadable, or the row is missing
     */
    OptionalLong writeTimeMs() throws SQLException {
        try (Connection c = open(); Statement st = c.createStatement()) {
            // The writer uses WAL, so readers wait only on rare recovery locks; bounded anyway.
            st.execute("PRAGMA busy_timeout = 5000");
            return ReplicaStateReader.replicationState(c)
                    .orElseThrow(() -> new SQLException("no row in _zero.replicationState of " + replicaFile))
                    .writeTimeMs();
        }
    }

    /** Opens the replica read-only; fails if it does not exist. */
    Connection open() throws SQLException {
        Properties props = new Properties();
        props.setProperty("open_mode", OPEN_READONLY);
        // sqlite-jdbc is called directly: in OSGi, DriverManager does not see other bundles' drivers.
        return org.sqlite.JDBC.createConnection("jdbc:sqlite:" + replicaFile, props);
    }

    Path file() {
        return replicaFile;
    }
}

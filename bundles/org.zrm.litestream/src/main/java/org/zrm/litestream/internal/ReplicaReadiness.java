package org.zrm.litestream.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.zrm.replica.ReplicaStateReader;

/**
 * Whether the backup replicator has prepared the replica for litestream: the file holds a
 * completed replica and its header says WAL mode.
 *
 * <p>zero-cache's replication manager starts {@code litestream replicate} when its backup
 * replicator sends {@code ready}, after it changed the journal mode; starting earlier makes
 * litestream and the journal-mode change fight over the database lock. The replicator here is
 * another bundle with no such message, so the file's state, which is the same fact, is read
 * instead. Only the replicator switches the file to WAL: the initial sync writes a rollback-journal
 * file, and a restore folds the restored WAL back into the file with {@code journal_mode=delete}
 * ({@link LitestreamRestore}), so a WAL header means the switch is done. A file left in WAL mode
 * by an earlier run is ready at once; the replicator's own switch is then a no-op that takes no
 * lock litestream holds.
 */
final class ReplicaReadiness {

    private ReplicaReadiness() {
    }

    /** @return {@code null} when ready, otherwise what is missing (for the status) */
    static String check(Path replica) {
        if (!Files.isRegularFile(replica)) {
            return "waiting for the replica file " + replica + " (initial sync or restore)";
        }
        byte[] header = new byte[100];
        try (InputStream in = Files.newInputStream(replica)) {
            if (in.readNBytes(header, 0, header.length) < header.length || header[18] != 2 || header[19] != 2) {
                return "waiting for the backup replicator to switch " + replica + " to WAL mode";
            }
        } catch (IOException e) {
            return "cannot read " + replica + ": " + e.getMessage();
        }
        Properties props = new Properties();
        props.setProperty("open_mode", "1"); // SQLITE_OPEN_READONLY: never creates anything
        try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + replica, props);
                Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 5000");
            return ReplicaStateReader.read(c).isPresent() ? null
                    : "waiting for the initial sync to complete " + replica;
        } catch (SQLException e) {
            return "cannot read " + replica + ": " + e.getMessage();
        }
    }
}

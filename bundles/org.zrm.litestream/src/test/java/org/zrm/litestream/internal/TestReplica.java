package org.zrm.litestream.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import org.sqlite.JDBC;
import org.zrm.replica.ReplicaLayout;

/**
 * A replica as the backup replicator keeps it: the layout's {@code _zero.*} tables, WAL mode, and
 * the writer connection held open (as the replicator does, so the {@code -wal} file exists).
 */
final class TestReplica implements AutoCloseable {

    final Path file;
    final Connection writer;

    private TestReplica(Path file, Connection writer) {
        this.file = file;
        this.writer = writer;
    }

    static Connection open(Path file) throws SQLException {
        Connection c = JDBC.createConnection("jdbc:sqlite:" + file, new Properties());
        try (Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 5000");
        }
        return c;
    }

    /** Creates a completed replica of version {@code replicaVersion} and opens its writer in WAL mode. */
    static TestReplica create(Path file, String replicaVersion) throws SQLException {
        try (Connection c = open(file)) {
            ReplicaLayout.createVersionHistoryTable(c);
            ReplicaLayout.initReplicationState(c, List.of("_zero_public_0"), replicaVersion, "{}");
            ReplicaLayout.writeVersionHistory(c);
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE issues (id INTEGER PRIMARY KEY, title TEXT)");
            }
        }
        return openWriter(file);
    }

    /** Opens the writer as the replicator does: WAL, litestream owns checkpoints. */
    static TestReplica openWriter(Path file) throws SQLException {
        Connection c = open(file);
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA journal_mode = WAL")) {
            rs.next();
            if (!"wal".equalsIgnoreCase(rs.getString(1))) {
                throw new IllegalStateException("not WAL: " + rs.getString(1));
            }
            st.execute("PRAGMA wal_autocheckpoint = 0");
        }
        return new TestReplica(file, c);
    }

    /** One replicated transaction: a row and the new stateVersion. */
    void write(int id, String stateVersion) throws SQLException {
        writer.setAutoCommit(false);
        try (PreparedStatement ins = writer.prepareStatement("INSERT INTO issues VALUES (?, ?)");
                PreparedStatement st = writer.prepareStatement(
                        "UPDATE \"_zero.replicationState\" SET stateVersion = ?")) {
            ins.setInt(1, id);
            ins.setString(2, "issue " + id);
            ins.executeUpdate();
            st.setString(1, stateVersion);
            st.executeUpdate();
            writer.commit();
        } finally {
            writer.setAutoCommit(true);
        }
    }

    static int count(Path file) throws SQLException {
        try (Connection c = open(file); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM issues")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Override
    public void close() throws SQLException {
        writer.close();
    }
}

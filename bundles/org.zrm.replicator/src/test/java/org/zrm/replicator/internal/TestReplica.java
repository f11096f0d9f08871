package org.zrm.replicator.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.zrm.protocol.PgTypeClass;

/**
 * Creates replica files laid out as the change source's initial sync writes them (through
 * {@link org.zrm.replica.ReplicaLayout}, see {@link Specs#createReplica}), with one table
 * {@code issue(id text key, title, n int8, done bool, meta jsonb, tags text[])}.
 */
final class TestReplica {

    private TestReplica() {}

    /** Writes a complete replica at {@code replicaVersion} (via a temp file renamed into place, as the sync does). */
    static void create(Path file, String replicaVersion) throws Exception {
        Path temp = file.resolveSibling(file.getFileName() + ".initial-sync");
        Files.deleteIfExists(temp);
        try (Connection c = open(temp)) {
            Specs.createReplica(c, replicaVersion, List.of(Specs.table("public", "issue", List.of("id"),
                    "id", Specs.notNull(1, "text"), "title", Specs.col(2, "varchar"), "n", Specs.col(3, "int8"),
                    "done", Specs.col(4, "bool"), "meta", Specs.col(5, "jsonb"),
                    "tags", Specs.arrayCol(6, "text[]", PgTypeClass.BASE))),
                    List.of(Specs.index("public", "issue", "issue_pkey", true, "id", "ASC")), Map.of());
        }
        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static Connection open(Path file) throws SQLException {
        return new org.sqlite.JDBC().connect("jdbc:sqlite:" + file.toAbsolutePath(), new Properties());
    }

    static String stateVersion(Connection c) throws SQLException {
        return scalar(c, "SELECT stateVersion FROM \"_zero.replicationState\"");
    }

    static String scalar(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** All rows of a query as ordered maps of column label to value. */
    static List<Map<String, Object>> rows(Connection c, String sql) throws SQLException {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 1; i <= n; i++) {
                    row.put(rs.getMetaData().getColumnLabel(i), rs.getObject(i));
                }
                out.add(row);
            }
        }
        return out;
    }
}

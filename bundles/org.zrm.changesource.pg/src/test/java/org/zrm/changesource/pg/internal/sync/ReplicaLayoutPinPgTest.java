package org.zrm.changesource.pg.internal.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * Pins the replica layout an initial sync writes: every {@code sqlite_master} row (type, name,
 * tbl_name, sql, in creation order), every {@code _zero.column_metadata} row and the data of the
 * app tables, for a schema with many column types, an enum, arrays, a unique and a non-unique
 * index, a quoted identifier and a table outside {@code public}.
 *
 * <p>The expected text ({@code layout/initial-sync.txt}) was taken from the initial sync before the
 * layout moved into {@code org.zrm.replica.ReplicaLayout}; zero-cache 1.8.0 compatibility was proven against
 * that output, so it may only change together with a new compatibility run. The replica version
 * (in the {@code _0_version} default and values) is replaced by {@code <V>}, the only part that
 * differs between runs.
 */
@PostgresTest
class ReplicaLayoutPinPgTest {

    @TempDir
    Path dir;

    @Test
    void initialSyncWritesThePinnedLayout(PgDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("""
                    CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
                    CREATE TABLE types (
                      id int4 PRIMARY KEY,
                      i2 int2, i8 int8 NOT NULL DEFAULT 7, f4 float4, f8 float8, num numeric(10, 2),
                      b bool, t text, vc varchar(10), bp char(3), u uuid, j json, jb jsonb,
                      d date, tm time, ts timestamp, tstz timestamptz,
                      e mood, ia int4[], ta text[] NOT NULL DEFAULT '{}', ea mood[], nested int4[][],
                      ba bytea, iv interval
                    );
                    INSERT INTO types VALUES (1, 2, 3, 0.5, 1.25, 12.34, true, 'x', 'vc', 'abc',
                      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": 1}', '{"b": 2}', '2025-03-19', '12:34:56',
                      '2019-01-12 00:30:35.381', '2019-01-12 00:30:35.381+00', 'happy', '{1,NULL}', '{"a b"}',
                      '{sad}', '{{1,2},{3,4}}', '\\x00ff', '1 day');
                    INSERT INTO types (id) VALUES (2);
                    CREATE UNIQUE INDEX types_vc_desc ON types (vc DESC, i2);
                    CREATE INDEX types_t ON types (t);
                    CREATE TABLE "camelCase" ("Id" text PRIMARY KEY, "other.col" text);
                    INSERT INTO "camelCase" VALUES ('x', 'y');
                    CREATE SCHEMA other;
                    CREATE TABLE other.items (k int8 NOT NULL, name text, PRIMARY KEY (k));
                    CREATE INDEX items_name ON other.items (name DESC);
                    INSERT INTO other.items VALUES (10, 'ten');
                    CREATE PUBLICATION pin_pub FOR TABLE types, "camelCase", other.items;
                    """);
        }
        Path file = dir.resolve("pin.db");
        InitialSyncResult result = new InitialSync(ShardConfig.of("pin", 0, List.of("pin_pub")),
                JdbcPgConnector.fromUri(db.uri()), InitialSyncOptions.defaults(), Map.of("taskID", "pin")).run(file);
        String actual;
        try (Connection lite = InitialSync.DriverManagerless.open(file)) {
            actual = dump(lite, List.of("types", "camelCase", "other.items")).replace(result.replicaVersion(), "<V>");
        }
        String expected = expected();
        if (!expected.equals(actual)) {
            Path out = Path.of("target", "initial-sync.actual.txt");
            Files.createDirectories(out.getParent());
            Files.writeString(out, actual);
        }
        assertEquals(expected, actual);
    }

    /**
     * A text dump of what the test pins: {@code sqlite_master} in creation order, the metadata
     * tables' rows and the data tables' values with their storage classes.
     */
    static String dump(Connection lite, List<String> dataTables) throws Exception {
        StringBuilder sb = new StringBuilder("# sqlite_master (type | name | tbl_name), then sql\n");
        try (Statement st = lite.createStatement();
                ResultSet rs = st.executeQuery("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")) {
            while (rs.next()) {
                sb.append(rs.getString(1)).append(" | ").append(rs.getString(2)).append(" | ").append(rs.getString(3))
                        .append('\n').append(rs.getString(4)).append("\n\n");
            }
        }
        sb.append("# _zero.column_metadata\n");
        try (Statement st = lite.createStatement(); ResultSet rs = st.executeQuery("SELECT quote(table_name), "
                + "quote(column_name), quote(upstream_type), quote(is_not_null), quote(is_enum), quote(is_array), "
                + "quote(character_max_length), quote(backfill) FROM \"_zero.column_metadata\" "
                + "ORDER BY table_name, column_name")) {
            while (rs.next()) {
                for (int i = 1; i <= 8; i++) {
                    sb.append(i == 1 ? "" : " | ").append(rs.getString(i));
                }
                sb.append('\n');
            }
        }
        sb.append("\n# _zero.tableMetadata\n");
        try (Statement st = lite.createStatement(); ResultSet rs = st.executeQuery("SELECT quote(\"schema\"), "
                + "quote(\"table\"), quote(\"minRowVersion\"), quote(\"upstreamMetadata\") FROM \"_zero.tableMetadata\" "
                + "ORDER BY 1, 2")) {
            while (rs.next()) {
                sb.append(rs.getString(1)).append(" | ").append(rs.getString(2)).append(" | ").append(rs.getString(3))
                        .append(" | ").append(rs.getString(4)).append('\n');
            }
        }
        for (String table : dataTables) {
            sb.append("\n# data of ").append(table).append(" (typeof:quote per column)\n");
            try (Statement st = lite.createStatement();
                    ResultSet rs = st.executeQuery("SELECT * FROM \"" + table + "\" ORDER BY 1")) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    StringBuilder cols = new StringBuilder();
                    for (int i = 1; i <= n; i++) {
                        String col = rs.getMetaData().getColumnName(i);
                        try (Statement q = lite.createStatement(); ResultSet v = q.executeQuery("SELECT typeof(\""
                                + col + "\") || ':' || quote(\"" + col + "\") FROM \"" + table + "\" WHERE rowid = "
                                + rowid(lite, table, rs.getObject(1), rs.getMetaData().getColumnName(1)))) {
                            v.next();
                            cols.append(i == 1 ? "" : " | ").append(col).append('=').append(v.getString(1));
                        }
                    }
                    sb.append(cols).append('\n');
                }
            }
        }
        return sb.toString();
    }

    private static long rowid(Connection lite, String table, Object firstValue, String firstColumn) throws Exception {
        try (java.sql.PreparedStatement ps = lite.prepareStatement(
                "SELECT rowid FROM \"" + table + "\" WHERE \"" + firstColumn + "\" = ?")) {
            ps.setObject(1, firstValue);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String expected() throws IOException {
        try (InputStream in = ReplicaLayoutPinPgTest.class.getResourceAsStream("/layout/initial-sync.txt")) {
            return in == null ? "(missing resource layout/initial-sync.txt)"
                    : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}

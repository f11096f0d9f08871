package org.zrm.backup.vfs.internal.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.Function;
import org.sqlite.SQLiteConfig;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.testing.backup.ManualClock;

/**
 * The reader's query against a plain SQLite file, with {@code litestream_txid()} and
 * {@code litestream_lag()} stubbed as the extension would register them (spec §8.2).
 */
class WatermarkQueryTest {

    private static final String DDL = "CREATE TABLE \"_zero.replicationState\" (stateVersion TEXT NOT NULL,"
            + " writeTimeMs INTEGER, lock INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1))";

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(Instant.parse("2025-04-24T00:00:00Z"));

    private Path replica(String ddl, String insert) throws SQLException {
        Path file = dir.resolve("replica.db");
        try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + file, new Properties());
                Statement st = c.createStatement()) {
            st.execute(ddl);
            if (insert != null) {
                st.execute(insert);
            }
        }
        return file;
    }

    /** Opens the file read-only through a {@code file:} URI, as the reader opens the VFS database. */
    private static Connection openWithStubs(Path file, Object lag) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        Connection c = config.createConnection("jdbc:sqlite:file:" + file + "?mode=ro");
        Function.create(c, "litestream_txid", new Function() {
            @Override
            protected void xFunc() throws SQLException {
                result("0000000000000007");
            }
        });
        Function.create(c, "litestream_lag", new Function() {
            @Override
            protected void xFunc() throws SQLException {
                if (lag instanceof Integer i) {
                    result(i);
                } else {
                    result(String.valueOf(lag));
                }
            }
        });
        return c;
    }

    @Test
    void isUpstreamsQuery() {
        assertEquals("SELECT stateVersion AS watermark, writeTimeMs, litestream_txid() AS txid,"
                + " litestream_lag() AS lagSeconds FROM \"_zero.replicationState\"", WatermarkQuery.SQL);
    }

    @Test
    void readsTheWatermarkRowAndStampsTheObservation() throws Exception {
        Path file = replica(DDL, "INSERT INTO \"_zero.replicationState\" (stateVersion, writeTimeMs) VALUES ('02', 123)");
        try (Connection c = openWithStubs(file, 4); WatermarkQuery query = new WatermarkQuery(c, clock)) {
            assertEquals(new BackupWatermark("02", 123L, "0000000000000007", 4, clock.millis()), query.read());
            clock.advanceMillis(5);
            assertEquals(clock.millis(), query.read().observedAtMs(), "each read is stamped anew");
        }
    }

    @Test
    void acceptsANullAndARealWriteTime() throws Exception {
        Path file = replica(DDL, "INSERT INTO \"_zero.replicationState\" (stateVersion, writeTimeMs) VALUES ('02', NULL)");
        try (Connection c = openWithStubs(file, -1); WatermarkQuery query = new WatermarkQuery(c, clock)) {
            BackupWatermark read = query.read();
            assertNull(read.writeTimeMs());
            assertEquals(-1, read.lagSeconds());
        }
        try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + file, new Properties());
                Statement st = c.createStatement()) {
            // what the replicator writes: unixepoch('subsec') * 1000
            st.execute("UPDATE \"_zero.replicationState\" SET writeTimeMs = 1745452800123.75");
        }
        try (Connection c = openWithStubs(file, 0); WatermarkQuery query = new WatermarkQuery(c, clock)) {
            assertEquals(1745452800123L, query.read().writeTimeMs());
        }
    }

    @Test
    void rejectsMalformedWatermarkRows() throws Exception {
        // a column without TEXT affinity keeps the integer a TEXT column would convert
        Path file = replica("CREATE TABLE \"_zero.replicationState\" (stateVersion NOT NULL, writeTimeMs INTEGER)",
                "INSERT INTO \"_zero.replicationState\" VALUES (2, NULL)");
        try (Connection c = openWithStubs(file, 4); WatermarkQuery query = new WatermarkQuery(c, clock)) {
            SQLException e = assertThrows(SQLException.class, query::read);
            assertEquals("malformed backup watermark row: watermark=number 2, writeTimeMs=null,"
                    + " txid=text 0000000000000007, lagSeconds=number 4 (expected text, number or null, text, number)",
                    e.getMessage());
        }
    }

    @Test
    void rejectsANonNumericLag() throws Exception {
        Path file = replica(DDL, "INSERT INTO \"_zero.replicationState\" (stateVersion, writeTimeMs) VALUES ('02', 1)");
        try (Connection c = openWithStubs(file, "soon"); WatermarkQuery query = new WatermarkQuery(c, clock)) {
            assertTrue(assertThrows(SQLException.class, query::read).getMessage().contains("lagSeconds=text soon"));
        }
    }

    @Test
    void rejectsAnEmptyReplicationState() throws Exception {
        Path file = replica(DDL, null);
        try (Connection c = openWithStubs(file, 4); WatermarkQuery query = new WatermarkQuery(c, clock)) {
            assertEquals("the backup's _zero.replicationState has no row",
                    assertThrows(SQLException.class, query::read).getMessage());
        }
    }

    @Test
    void failsToPrepareWithoutTheTable() throws Exception {
        Path file = replica("CREATE TABLE other (x)", null);
        try (Connection c = openWithStubs(file, 4)) {
            SQLException e = assertThrows(SQLException.class, () -> new WatermarkQuery(c, clock));
            assertTrue(e.getMessage().contains("no such table: _zero.replicationState"), e.getMessage());
        }
    }
}

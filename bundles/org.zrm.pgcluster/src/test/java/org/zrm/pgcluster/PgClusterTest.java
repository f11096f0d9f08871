package org.zrm.pgcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Against real PostgreSQL 15 binaries: every test starts its own cluster. */
@Tag("pg")
class PgClusterTest {
    @TempDir
    Path tmp;

    @BeforeEach
    void letThePostgresUserReachTheTempFolder() throws Exception {
        // @TempDir is private to the JVM's user; when that is root, the server runs as postgres.
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void temporaryClusterIsConfiguredForLogicalReplicationAndDeletedOnClose() throws Exception {
        Path dir;
        try (PgCluster pg = PgCluster.builder().start()) {
            dir = pg.dataDir();
            assertTrue(pg.isTemporary());
            assertTrue(pg.isRunning());
            assertEquals("logical", show(pg, "wal_level"));
            assertEquals("20", show(pg, "max_replication_slots"));
            assertEquals("20", show(pg, "max_wal_senders"));
            assertEquals("200", show(pg, "max_connections"));
            assertEquals("127.0.0.1", show(pg, "listen_addresses"));
            assertEquals(dir.toString(), show(pg, "unix_socket_directories"));
            assertEquals(Integer.toString(pg.port()), show(pg, "port"));
            assertEquals("jdbc:postgresql://127.0.0.1:" + pg.port() + "/x", pg.jdbcUrl("x"));
            assertEquals("postgresql://postgres@127.0.0.1:" + pg.port() + "/x", pg.uri("x"));
            assertTrue(Files.size(pg.logFile()) > 0, "the server logs into the data folder");
            if ("root".equals(System.getProperty("user.name"))) {
                assertEquals("postgres", Files.getOwner(dir).getName());
                assertEquals("postgres", pg.osUser().orElseThrow());
            }
        }
        assertFalse(Files.exists(dir), "a temporary cluster's folder is deleted");
    }

    @Test
    void extraSettingsAreApplied() throws Exception {
        try (PgCluster pg = PgCluster.builder()
                .walSenderTimeout(Duration.ofSeconds(7))
                .maxSlotWalKeepSize("64MB")
                .maxReplicationSlots(25)
                .setting("work_mem", "8MB")
                .start()) {
            assertEquals("7s", show(pg, "wal_sender_timeout"));
            assertEquals("64MB", show(pg, "max_slot_wal_keep_size"));
            assertEquals("25", show(pg, "max_replication_slots"));
            assertEquals("8MB", show(pg, "work_mem"));
        }
        assertThrows(IllegalArgumentException.class, () -> PgCluster.builder().setting("port", "1"));
        assertThrows(IllegalArgumentException.class, () -> PgCluster.builder().setting("bad name", "1"));
    }

    @Test
    void persistentFolderIsReusedAndSurvivesRestarts() throws Exception {
        Path dir = tmp.resolve("pgdata");
        try (PgCluster pg = PgCluster.builder().dataDir(dir).start()) {
            assertFalse(pg.isTemporary());
            assertTrue(pg.createDatabaseIfMissing("zrm"));
            assertFalse(pg.createDatabaseIfMissing("zrm"));
            try (Connection c = pg.connect("zrm"); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE kept(v text); INSERT INTO kept VALUES ('still here')");
            }
        }
        assertTrue(Files.exists(dir.resolve("PG_VERSION")), "a persistent folder is kept");
        assertFalse(Files.exists(dir.resolve("postmaster.pid")), "the server was stopped");

        try (PgCluster pg = PgCluster.builder().dataDir(dir).walSenderTimeout(Duration.ofSeconds(9)).start()) {
            assertFalse(pg.createDatabaseIfMissing("zrm"));
            try (Connection c = pg.connect("zrm"); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT v FROM kept")) {
                assertTrue(rs.next());
                assertEquals("still here", rs.getString(1));
            }
            assertEquals("9s", show(pg, "wal_sender_timeout"), "settings of the current run apply");
        }
    }

    @Test
    void refusesASecondServerOnARunningFolder() throws Exception {
        Path dir = tmp.resolve("pgdata");
        try (PgCluster first = PgCluster.builder().dataDir(dir).start()) {
            PgClusterException e = assertThrows(PgClusterException.class, () -> PgCluster.builder().dataDir(dir).start());
            assertTrue(e.getMessage().contains("already running on " + dir), e.getMessage());
            assertTrue(e.getMessage().contains("port " + first.port()), e.getMessage());
            assertEquals("logical", show(first, "wal_level"), "the running server is untouched");
        }
    }

    @Test
    void startsDespiteAStalePidFile() throws Exception {
        Path dir = tmp.resolve("pgdata");
        PgCluster.builder().dataDir(dir).start().close();

        // A pid that is certainly gone...
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        writePidFile(dir, gone.pid());
        PgCluster.builder().dataDir(dir).start().close();

        // ...and a live pid that is not PostgreSQL (as after a container restart): this JVM.
        writePidFile(dir, ProcessHandle.current().pid());
        try (PgCluster pg = PgCluster.builder().dataDir(dir).start()) {
            assertEquals("logical", show(pg, "wal_level"));
        }
    }

    @Test
    void failedStartReportsTheServerLog() {
        PgClusterException e = assertThrows(PgClusterException.class,
                () -> PgCluster.builder().setting("shared_buffers", "lots").start());
        assertTrue(e.getMessage().contains("PostgreSQL failed to start"), e.getMessage());
        assertTrue(e.getMessage().contains("server log"), e.getMessage());
        assertTrue(e.getMessage().contains("shared_buffers"), "the log names the bad setting: " + e.getMessage());
    }

    @Test
    void missingBinariesSayWhatToInstall() throws Exception {
        PgClusterException explicit = assertThrows(PgClusterException.class,
                () -> PgCluster.builder().binDir(tmp).start());
        assertTrue(explicit.getMessage().contains("apt-get install -y postgresql-15"), explicit.getMessage());
        assertTrue(explicit.getMessage().contains("initdb, pg_ctl, postgres missing in " + tmp), explicit.getMessage());

        PgClusterException fromEnv = assertThrows(PgClusterException.class,
                () -> PgCluster.builder().environment(Map.of("ZRM_PG_BIN", "/nonexistent/pg")).start());
        assertTrue(fromEnv.getMessage().contains("/nonexistent/pg (from ZRM_PG_BIN)"), fromEnv.getMessage());
    }

    @Test
    void databasesAreUniqueAndCanBeDroppedWhileInUse() throws Exception {
        try (PgCluster pg = PgCluster.builder().start()) {
            String a = pg.createDatabase("My-Test");
            String b = pg.createDatabase("My-Test");
            assertNotEquals(a, b);
            assertTrue(a.startsWith("my_test_"), a);
            try (Connection c = pg.connect(a); Statement s = c.createStatement()) {
                s.execute("SELECT pg_create_logical_replication_slot('held', 'pgoutput')");
                pg.dropDatabase(a);   // with an open session and a slot
                assertThrows(SQLException.class, () -> s.execute("SELECT 1"), "its sessions were terminated");
            }
            assertEquals("0", query(pg, "SELECT count(*) FROM pg_database WHERE datname = '" + a + "'"));
            assertEquals("0", query(pg, "SELECT count(*) FROM pg_replication_slots"));
            pg.dropDatabase(a);   // idempotent
            assertThrows(IllegalArgumentException.class, () -> pg.jdbcUrl("x; DROP"));
        }
    }

    private static void writePidFile(Path dir, long pid) throws Exception {
        Files.writeString(dir.resolve("postmaster.pid"), pid + "\n" + dir + "\n");
    }

    private static String show(PgCluster pg, String setting) throws SQLException {
        return query(pg, "SHOW " + setting);
    }

    private static String query(PgCluster pg, String sql) throws SQLException {
        try (Connection c = pg.connect("postgres"); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            assertTrue(rs.next());
            return rs.getString(1);
        }
    }
}

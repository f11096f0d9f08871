package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.Test;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;

/**
 * kill -9 of the whole runtime (launcher and runtime JVM) in the middle of a backfill, then a
 * restart on the same folders: the backfill is resumed from the change log's request, no
 * snapshot slot is left behind, and the replica ends equal to upstream.
 */
public class BackfillCrashIT {

    private static final int ROWS = 200_000;

    private static JsonNode backfills(JsonNode status) {
        return status.path("sections").path("changesource.pg").path("backfills");
    }

    @Test
    public void aBackfillKilledMidwayResumesAfterTheRestart() throws Exception {
        try (PgDatabase db = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_bfcrash")) {
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE crash_live (id int8 PRIMARY KEY)");
                s.execute("CREATE TABLE crash_big (id int8 PRIMARY KEY, v text)");
                s.execute("INSERT INTO crash_big SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, "
                        + ROWS + ") g");
                s.execute("CREATE PUBLICATION crash_pub FOR TABLE crash_live");
            }
            Path dir = Files.createTempDirectory("zrm-it-bfcrash-");
            Map<String, String> env = Map.of("ZERO_UPSTREAM_DB", db.uri(), "ZERO_CHANGE_DB", db.uri(),
                    "ZERO_APP_PUBLICATIONS", "crash_pub", "ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "0");
            int zeroPort = LauncherProcess.freePort();
            LauncherProcess first = LauncherProcess.start(dir, zeroPort, env);
            try {
                first.awaitStatus("streaming", null, s -> "streaming".equals(
                        s.path("sections").path("changestreamer").path("state").asText()));
                try (Connection c = db.connect(); Statement s = c.createStatement()) {
                    s.execute("ALTER PUBLICATION crash_pub ADD TABLE crash_big");
                }
                JsonNode mid = first.awaitStatus("the backfill running with rows sent", null, s -> {
                    for (JsonNode b : backfills(s)) {
                        if (b.toString().contains("crash_big") && b.path("rows").asLong() > 0
                                && b.path("rows").asLong() < ROWS) {
                            return true;
                        }
                    }
                    return false;
                });
                System.out.println("BackfillCrashIT: kill -9 during " + backfills(mid));
                first.killHard();
            } finally {
                first.close();
            }
            try (LauncherProcess second = LauncherProcess.start(dir, zeroPort, env)) {
                second.awaitStatus("the backfill completed after the restart", null, s ->
                        "streaming".equals(s.path("sections").path("changestreamer").path("state").asText())
                                && backfills(s).isArray() && backfills(s).isEmpty()
                                && "REPLICATING".equals(s.path("sections").path("replicator").path("phase").asText()));
                try (Connection c = db.connect(); Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '%\\_bf\\_%'")) {
                    rs.next();
                    assertEquals("snapshot slots left behind", 0, rs.getInt(1));
                }
                Path replica = dir.resolve("state").resolve("zero.db");
                long deadline = System.nanoTime() + LauncherProcess.WAIT.toNanos();
                long rows = -1;
                while (System.nanoTime() < deadline) {
                    try (Connection r = java.sql.DriverManager.getConnection("jdbc:sqlite:" + replica);
                            Statement s = r.createStatement();
                            ResultSet rs = s.executeQuery("SELECT count(*), count(DISTINCT v) FROM crash_big")) {
                        rs.next();
                        rows = rs.getLong(1);
                        if (rows == ROWS && rs.getLong(2) == ROWS) {
                            break;
                        }
                    } catch (java.sql.SQLException e) {
                        rows = -1; // the table appears with the backfill's schema change
                    }
                    Thread.sleep(250); // another process's file: nothing to wait on
                }
                assertEquals("rows of crash_big in the replica", ROWS, rows);
                assertTrue(second.log().contains("backfill"));
            }
        }
    }
}

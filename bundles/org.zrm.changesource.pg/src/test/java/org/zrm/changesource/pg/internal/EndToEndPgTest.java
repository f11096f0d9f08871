package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.*;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** initialize (shard setup + initial sync by the setup/sync packages) followed by streaming. */
@PostgresTest
class EndToEndPgTest {

    @Test
    void initializeThenStream(PgDatabase db, @TempDir Path dir) throws Exception {
        try (Connection c = db.connect()) {
            exec(c, "CREATE TABLE e2e(id INT PRIMARY KEY, v TEXT)", "INSERT INTO e2e VALUES (1, 'synced')");
        }
        PgSourceSettings settings = settings(db.uri()).withReplicaFile(dir.resolve("replica.db").toString());
        ReplicaInitializer initializer = ReplicaInitializers.forSettings(settings,
                org.zrm.changesource.pg.internal.sync.InitialSyncOptions.defaults());
        PgChangeSource source = new PgChangeSource(settings, initializer);
        try {
            assertTrue(initializer.progress().isEmpty(), "no sync ran yet");
            SubscriptionState state = source.initialize(false);
            assertEquals(state.replicaVersion(), state.watermark());
            // What /status shows after the sync: every published table (ours plus the shard's own
            // metadata tables) copied, at the new replica version.
            java.util.Map<String, Object> progress = initializer.progress().orElseThrow();
            assertEquals("DONE", progress.get("phase"), progress.toString());
            assertEquals(progress.get("tablesTotal"), progress.get("tablesDone"), progress.toString());
            assertTrue((Long) progress.get("rows") >= 1, progress.toString());
            assertEquals(state.replicaVersion(), progress.get("replicaVersion"), progress.toString());
            ChangeStream stream = source.startStream(state.watermark(), List.of());
            try (Connection c = db.connect()) {
                exec(c, "INSERT INTO e2e VALUES (2, 'streamed')");
            }
            List<ChangeStreamMessage> tx = takeTransactions(stream, 1, Duration.ofSeconds(20));
            assertTrue(CODEC.encode(tx.get(1)).contains("\"new\":{\"id\":2,\"v\":\"streamed\"}"), encode(tx).toString());
            assertTrue(((ChangeStreamMessage.BeginMessage) tx.get(0)).commitWatermark().compareTo(state.watermark()) > 0);
            stream.close();
        } finally {
            source.stop();
        }
    }

    /** Spec §5.3: after a re-sync, the stream removes the older replica row and drops its slot. */
    @Test
    void startStreamCleansUpOlderReplicasAndSlots(PgDatabase db, @TempDir Path dir) throws Exception {
        try (Connection c = db.connect()) {
            exec(c, "CREATE TABLE IF NOT EXISTS cleanup(id INT PRIMARY KEY)");
        }
        PgSourceSettings settings = settings(db.uri()).withReplicaFile(dir.resolve("replica.db").toString());
        PgChangeSource source = new PgChangeSource(settings, ReplicaInitializers.forSettings(settings,
                org.zrm.changesource.pg.internal.sync.InitialSyncOptions.defaults()));
        try {
            source.initialize(false);
            String oldSlot = newestSlot(db);
            SubscriptionState resynced = source.initialize(true);
            String newSlot = newestSlot(db);
            assertTrue(!oldSlot.equals(newSlot), oldSlot + " vs " + newSlot);
            ChangeStream stream = source.startStream(resynced.watermark(), List.of());
            try {
                // The cleanup runs asynchronously after the takeover; nothing signals its end to a
                // client, so the catalog is polled within a bound.
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (slotExists(db, oldSlot) && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                assertTrue(!slotExists(db, oldSlot), "old slot " + oldSlot + " was not dropped");
                assertTrue(slotExists(db, newSlot), "our slot " + newSlot + " must stay");
                try (Connection c = db.connect(); java.sql.ResultSet rs = c.createStatement().executeQuery(
                        "SELECT count(*) FROM " + SHARD.schema() + ".replicas WHERE slot = '" + oldSlot + "'")) {
                    rs.next();
                    assertEquals(0, rs.getInt(1), "old replica row");
                }
            } finally {
                stream.close();
            }
        } finally {
            source.stop();
        }
    }

    private static String newestSlot(PgDatabase db) throws Exception {
        try (Connection c = db.connect(); java.sql.ResultSet rs = c.createStatement().executeQuery(
                "SELECT slot FROM " + SHARD.schema() + ".replicas ORDER BY rank DESC LIMIT 1")) {
            assertTrue(rs.next());
            return rs.getString(1);
        }
    }

    private static boolean slotExists(PgDatabase db, String slot) throws Exception {
        try (Connection c = db.connect(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT 1 FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }
}

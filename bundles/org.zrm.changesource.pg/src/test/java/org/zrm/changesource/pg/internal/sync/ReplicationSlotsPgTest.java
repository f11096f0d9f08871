package org.zrm.changesource.pg.internal.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.setup.ShardSchema;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Ports of upstream {@code replication-slots.pg.test.ts} and {@code initial-sync.test.ts#createReplicationSlot}. */
@PostgresTest
class ReplicationSlotsPgTest {

    @ParameterizedTest(name = "slotPoolSuffix: {0}")
    @CsvSource({"0,a", "1,b", "25,z", "26,aa", "27,ab", "52,ba", "676,za", "701,zz", "702,aaa"})
    void slotPoolSuffix(int n, String expected) {
        assertEquals(expected, ReplicationSlots.slotPoolSuffix(n));
    }

    @Test
    void createReplicationSlotTimesOutBehindAnOlderIdleTransaction(PgDatabase db) throws Exception {
        // An older transaction with an assigned xid blocks the slot's snapshot build.
        try (Connection blocker = db.connect(); Connection repl = db.connectForReplication()) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS blocker (a int)");
                st.execute("INSERT INTO blocker VALUES (1)");
            }
            long start = System.nanoTime();
            SQLException e = assertThrows(SQLException.class,
                    () -> ReplicationSlots.createReplicationSlot(repl, "blocked_slot", false, Duration.ofSeconds(3)));
            long ms = (System.nanoTime() - start) / 1_000_000;
            // Server-side lock_timeout (timeout − 1 s) fires with 55P03 before the client backstop.
            assertEquals("55P03", e.getSQLState(), e.toString());
            assertTrue(ms >= 1500 && ms < 10_000, "took " + ms + " ms");
            blocker.rollback();
        }
        try (Connection c = db.connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'blocked_slot'")) {
            rs.next();
            assertEquals(0, rs.getInt(1));
        }
    }

    @Test
    void createReplicationSlotClientTimeoutAbortsTheConnection(PgDatabase db) throws Exception {
        // With lock_timeout disabled server-side, only the client backstop can end the wait.
        try (Connection blocker = db.connect(); Connection repl = db.connectForReplication()) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS blocker2 (a int)");
                st.execute("INSERT INTO blocker2 VALUES (1)");
            }
            long start = System.nanoTime();
            SQLException e = assertThrows(SQLException.class, () -> ReplicationSlots.createReplicationSlot(repl,
                    "blocked_slot2", false, Duration.ofSeconds(2), 0));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals("Timed out after 2000 ms creating replication slot blocked_slot2. Crashing to force a clean "
                    + "restart.", e.getMessage());
            assertTrue(ms >= 1900 && ms < 10_000, "took " + ms + " ms");
            assertTrue(repl.isClosed(), "the replication session is closed");
            blocker.rollback();
        }
    }

    @Test
    void createReplicaAndSlotsCleansUpAndReusesPoolNames(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("pool", 0, List.of());
        JdbcPgConnector connector = JdbcPgConnector.fromUri(db.uri());
        try (Connection c = connector.connect("test")) {
            ShardSchema.ensureShardSchema(c, shard);
            ReplicationSlot a;
            ReplicationSlot b;
            try (Connection r1 = connector.connectForReplication("r1"); Connection r2 = connector.connectForReplication("r2")) {
                a = ReplicationSlots.createReplicaAndSlot(c, r1, shard.id(), "1", false, Duration.ofSeconds(30));
                b = ReplicationSlots.createReplicaAndSlot(c, r2, shard.id(), "2", false, Duration.ofSeconds(30));
            }
            assertEquals("pool_0_a", a.slotName());
            assertEquals("pool_0_b", b.slotName());
            // an orphaned slot (no replica row) is dropped and its name reused
            try (Statement st = c.createStatement()) {
                st.execute("DELETE FROM pool_0.replicas WHERE id = '1'");
            }
            try (Connection r3 = connector.connectForReplication("r3")) {
                ReplicationSlot again = ReplicationSlots.createReplicaAndSlot(c, r3, shard.id(), "3", false,
                        Duration.ofSeconds(30));
                assertEquals("pool_0_a", again.slotName());
            }
            // dropReplicaAndSlots: rows below rank 3 deleted, their slots dropped
            SlotCleanup cleanup = ReplicationSlots.dropOldReplicasAndSlots(c, shard.id(), Long.MAX_VALUE);
            assertEquals(new SlotCleanup(2, 0, 0), cleanup);
        }
    }

    @Test
    void concurrentReplicaCreationUsesDifferentSlotNames(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("conc", 0, List.of());
        JdbcPgConnector connector = JdbcPgConnector.fromUri(db.uri());
        try (Connection c = connector.connect("setup")) {
            ShardSchema.ensureShardSchema(c, shard);
        }
        CompletableFuture<String>[] futures = new CompletableFuture[3];
        for (int i = 0; i < futures.length; i++) {
            String id = "c" + i;
            futures[i] = CompletableFuture.supplyAsync(() -> {
                try (Connection c = connector.connect(id); Connection r = connector.connectForReplication(id)) {
                    return ReplicationSlots.createReplicaAndSlot(c, r, shard.id(), id, false, Duration.ofSeconds(30))
                            .slotName();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        List<String> names = List.of(futures[0].get(), futures[1].get(), futures[2].get());
        assertEquals(3, names.stream().distinct().count(), names.toString());
        assertNotEquals(names.get(0), names.get(1));
        try (Connection c = connector.connect("cleanup")) {
            ReplicationSlots.dropOldReplicasAndSlots(c, shard.id(), Long.MAX_VALUE);
        }
    }
}

package org.zrm.changesource.pg.internal.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.TestPostgres;

/** zrm:slots drops only the shard's orphaned slots: inactive and claimed by no replica. */
@Tag("pg")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OrphanSlotsPgTest {
    private PgCluster cluster;
    private String db;

    @BeforeAll
    void start() {
        cluster = TestPostgres.clusterBuilder().start();
        db = cluster.createDatabase("orphans");
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void onlyAnInactiveUnclaimedSlotOfTheShardIsDropped() throws Exception {
        ShardId shard = new ShardId("orph", 0);
        try (Connection c = cluster.connect(db); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA \"" + shard.schema() + "\"");
            s.execute("CREATE TABLE \"" + shard.schema() + "\".replicas (id text, slot text)");
            for (String slot : List.of("orph_0_claimed", "orph_0_orphan", "other_0_orphan")) {
                s.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
            }
            s.execute("INSERT INTO \"" + shard.schema() + "\".replicas VALUES ('r1', 'orph_0_claimed')");

            assertEquals(List.of("orph_0_orphan"), ReplicationSlots.orphanSlots(c, shard));
            Optional<String> claimed = ReplicationSlots.dropOrphanSlot(c, shard, "orph_0_claimed");
            assertTrue(claimed.orElseThrow().contains("claimed by replica r1"), claimed.toString());
            Optional<String> foreign = ReplicationSlots.dropOrphanSlot(c, shard, "other_0_orphan");
            assertTrue(foreign.orElseThrow().contains("no replication slot other_0_orphan of shard"), foreign.toString());
            assertEquals(Optional.empty(), ReplicationSlots.dropOrphanSlot(c, shard, "orph_0_orphan"));
            List<String> left = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT slot_name FROM pg_replication_slots ORDER BY 1")) {
                while (rs.next()) {
                    left.add(rs.getString(1));
                }
            }
            assertEquals(List.of("orph_0_claimed", "other_0_orphan"), left);
            s.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots");
        }
    }
}

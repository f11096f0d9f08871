package org.zrm.changesource.pg.internal.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.TestPostgres;
import org.zrm.watermark.Lsn;

/** A slot that falls behind by a known number of bytes, sampled over an ordinary connection. */
@Tag("pg")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlotMetricsPgTest {
    private PgCluster cluster;
    private String db;

    @BeforeAll
    void start() {
        // A WAL limit, so that safe_wal_size has a value to report.
        cluster = TestPostgres.clusterBuilder().maxSlotWalKeepSize("64MB").start();
        db = cluster.createDatabase("slotmetrics");
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void retainedWalIsTheDistanceFromTheSlotsRestartLsnToTheCurrentLsn() throws Exception {
        ShardId shard = new ShardId("metrics", 0);
        String slot = shard.slotPrefix() + "test";
        Lsn restart;
        Lsn current;
        try (Connection c = cluster.connect(db); Statement s = c.createStatement()) {
            s.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
            // Another shard's slot must not be reported.
            s.execute("SELECT pg_create_logical_replication_slot('other_0_x', 'pgoutput')");
            s.execute("CREATE TABLE filler (id int, v text)");
            s.execute("INSERT INTO filler SELECT g, repeat('x', 100) FROM generate_series(1, 10000) g");
            try (ResultSet rs = s.executeQuery("SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
                rs.next();
                restart = Lsn.parse(rs.getString(1));
            }
            try (ResultSet rs = s.executeQuery("SELECT pg_current_wal_lsn()::text")) {
                rs.next();
                current = Lsn.parse(rs.getString(1));
            }
        }
        long behind = current.asLong() - restart.asLong();
        assertTrue(behind > 1_000_000, "10,000 rows of 100 bytes put the slot over a megabyte behind: " + behind);

        SlotSampler sampler = new SlotSampler(() -> cluster.connect(db), shard.slotLikeExpression(), shard.legacySlot(),
                1_000, System::currentTimeMillis, "test-slot-sampler");
        try {
            SlotReading reading = sampler.sampleNow();
            assertEquals(current.toString(), Lsn.parse(reading.currentLsn()).toString(), "reading the catalog writes no WAL");
            assertEquals(1, reading.slots().size(), reading.toString());
            SlotSample sample = reading.slots().get(0);
            assertEquals(slot, sample.slot());
            assertEquals(behind, sample.retainedWalBytes());
            assertFalse(sample.active());
            assertEquals("reserved", sample.walStatus());
            assertNotNull(sample.safeWalSizeBytes());
            // The limit plus up to one WAL segment: PostgreSQL counts to segment boundaries.
            assertTrue(sample.safeWalSizeBytes() > 0 && sample.safeWalSizeBytes() <= (64L + 16) << 20, sample.toString());

            RecordingSink sink = new RecordingSink();
            SourceMetrics.collect(reading, null, System.currentTimeMillis(), sink);
            assertEquals((double) behind, sink.samples.get("zrm_pg_slot_retained_wal_bytes{slot=" + slot + "}"));
            assertEquals(1.0, sink.samples.get("zrm_pg_slot_wal_status{slot=" + slot + ",wal_status=reserved}"));
        } finally {
            sampler.close();
            try (Connection c = cluster.connect(db); Statement s = c.createStatement()) {
                s.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()");
            }
        }
    }
}

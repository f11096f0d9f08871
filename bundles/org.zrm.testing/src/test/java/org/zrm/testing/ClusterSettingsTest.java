package org.zrm.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import org.junit.jupiter.api.Test;
import org.zrm.pgcluster.PgCluster;

@PostgresTest
class ClusterSettingsTest {
    private final PgDatabase db;

    ClusterSettingsTest(PgDatabase db) {
        this.db = db;
    }

    @Test
    void clusterIsConfiguredForLogicalReplication(PgCluster cluster) throws Exception {
        assertSame(cluster, db.cluster(), "one cluster per run");
        assertTrue(cluster.isRunning());
        assertEquals("logical", show("wal_level"));
        assertTrue(Integer.parseInt(show("max_replication_slots")) >= 20);
        assertTrue(Integer.parseInt(show("max_wal_senders")) >= 20);
        assertTrue(Integer.parseInt(show("max_connections")) >= 100);
        assertEquals("127.0.0.1", show("listen_addresses"));
    }

    @Test
    void theClassDatabaseIsFreshAndReachableByUri(PgDatabase sameDb) throws Exception {
        assertSame(db, sameDb, "every test of a class gets the class's database");
        assertTrue(db.name().startsWith("clustersettingstest_"), db.name());
        assertEquals("postgresql://postgres@127.0.0.1:" + db.cluster().port() + "/" + db.name(), db.uri());
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT current_database(),"
                        + " (SELECT count(*) FROM pg_tables WHERE schemaname = 'public')")) {
            assertTrue(rs.next());
            assertEquals(db.name(), rs.getString(1));
            assertEquals(0, rs.getInt(2));
        }
    }

    private String show(String setting) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW " + setting)) {
            assertTrue(rs.next());
            return rs.getString(1);
        }
    }
}

package org.zrm.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.zrm.pgcluster.PgCluster;

/** The JUnit 4 / Pax Exam entry point, used here the way such a test would use it. */
@Tag("pg")
class JvmClusterTest {
    @Test
    void jvmClusterIsSharedAndHandsOutFreshDatabases() throws Exception {
        PgCluster cluster = TestPostgres.jvmCluster();
        assertSame(cluster, TestPostgres.jvmCluster());
        assertTrue(cluster.isRunning());
        try (PgDatabase a = PgDatabase.create(cluster, "jvm"); PgDatabase b = PgDatabase.create(cluster, "jvm")) {
            assertNotEquals(a.name(), b.name());
            try (Connection c = a.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW wal_level")) {
                assertTrue(rs.next());
                assertEquals("logical", rs.getString(1));
            }
        }
    }
}

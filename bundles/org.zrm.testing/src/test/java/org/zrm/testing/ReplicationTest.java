package org.zrm.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.postgresql.PGProperty;

@PostgresTest
class ReplicationTest {
    @Test
    void logicalSlotCanBeCreated(PgDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT slot_name, lsn FROM pg_create_logical_replication_slot('x', 'pgoutput')")) {
                assertTrue(rs.next());
                assertEquals("x", rs.getString("slot_name"));
                assertFalse(rs.getString("lsn").isEmpty());
            }
            try (ResultSet rs = s.executeQuery(
                    "SELECT plugin, slot_type, database FROM pg_replication_slots WHERE slot_name = 'x'")) {
                assertTrue(rs.next());
                assertEquals("pgoutput", rs.getString(1));
                assertEquals("logical", rs.getString(2));
                assertEquals(db.name(), rs.getString(3));
            }
        }
    }

    @Test
    void replicationConnectionCanIdentifySystem(PgDatabase db) throws Exception {
        // Spelled out rather than through connectForReplication(), so the test pins the properties.
        Properties props = new Properties();
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        try (Connection c = db.cluster().connect(db.name(), props); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("IDENTIFY_SYSTEM")) {
            assertTrue(rs.next());
            assertFalse(rs.getString("systemid").isEmpty());
            assertEquals(1, rs.getInt("timeline"));
            assertTrue(rs.getString("xlogpos").contains("/"), rs.getString("xlogpos"));
            assertEquals(db.name(), rs.getString("dbname"));
        }
        try (Connection c = db.connectForReplication(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("IDENTIFY_SYSTEM")) {
            assertTrue(rs.next());
            assertEquals(db.name(), rs.getString("dbname"));
        }
    }
}

package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplicaLagReaderTest {

    @TempDir
    Path dir;

    @Test
    void readsWriteTimeMsWhileAWriterHoldsTheWal() throws Exception {
        Path file = dir.resolve("replica.db");
        TestReplica.create(file, "0a", 1745452800123L);
        try (Connection writer = TestReplica.open(file); Statement st = writer.createStatement()) {
            st.execute("BEGIN IMMEDIATE");
            st.execute("UPDATE \"_zero.replicationState\" SET writeTimeMs = 1");
            // The uncommitted write is invisible; the reader is not blocked by the writer.
            assertEquals(OptionalLong.of(1745452800123L), new ReplicaLagReader(file).writeTimeMs());
            st.execute("COMMIT");
        }
        assertEquals(OptionalLong.of(1L), new ReplicaLagReader(file).writeTimeMs());
    }

    @Test
    void aNullWriteTimeIsEmpty() throws Exception {
        Path file = dir.resolve("replica.db");
        TestReplica.create(file, "0a", null);
        assertEquals(OptionalLong.empty(), new ReplicaLagReader(file).writeTimeMs());
    }

    @Test
    void aMissingFileIsAnErrorAndIsNotCreated() {
        Path file = dir.resolve("missing.db");
        assertThrows(SQLException.class, () -> new ReplicaLagReader(file).writeTimeMs());
        assertFalse(Files.exists(file));
    }

    @Test
    void aReplicaWithoutStateIsAnError() throws Exception {
        Path file = dir.resolve("replica.db");
        TestReplica.create(file, "0a", 5L);
        try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
            st.execute("DELETE FROM \"_zero.replicationState\"");
        }
        SQLException e = assertThrows(SQLException.class, () -> new ReplicaLagReader(file).writeTimeMs());
        assertEquals("no row in _zero.replicationState of " + file.toAbsolutePath(), e.getMessage());
    }

    @Test
    void theReaderCannotWrite() throws Exception {
        Path file = dir.resolve("replica.db");
        TestReplica.create(file, "0a", 5L);
        try (Connection c = new ReplicaLagReader(file).open(); Statement st = c.createStatement()) {
            assertThrows(SQLException.class, () -> st.execute("UPDATE \"_zero.replicationState\" SET writeTimeMs = 1"));
        }
    }
}

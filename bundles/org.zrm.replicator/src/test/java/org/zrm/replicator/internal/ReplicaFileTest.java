package org.zrm.replicator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.replica.ReplicaState;

class ReplicaFileTest {

    @TempDir
    Path dir;

    /** replicaVersion and stateVersion of a ready replica. */
    private static Optional<List<String>> versions(ReplicaFile replica) throws java.sql.SQLException {
        return replica.readIfReady().map(s -> List.of(s.replicaVersion(), s.stateVersion()));
    }

    @Test
    void aMissingOrIncompleteReplicaIsNotReadyAndIsNotCreated() throws Exception {
        Path file = dir.resolve("zero.db");
        ReplicaFile replica = new ReplicaFile(file, 1000);
        assertEquals(Optional.empty(), replica.readIfReady());
        assertFalse(Files.exists(file));

        TestReplica.create(file, "01");
        try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
            st.execute("DELETE FROM \"_zero.versionHistory\""); // as during an initial sync
        }
        assertEquals(Optional.empty(), replica.readIfReady());

        TestReplica.create(file, "02");
        assertEquals(Optional.of(List.of("02", "02")), versions(replica));
    }

    @Test
    void aFileThatIsNotADatabaseIsAClearError() throws Exception {
        Path file = dir.resolve("zero.db");
        Files.writeString(file, "this is not a database, just some text that is long enough to fill a header ....");
        assertThrows(java.sql.SQLException.class, () -> new ReplicaFile(file, 1000).readIfReady());
    }

    @Test
    void theWriterUsesWalAndTheConfiguredCheckpointing() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "01");
        try (Connection w = new ReplicaFile(file, 0).openWriter()) {
            assertEquals("wal", TestReplica.scalar(w, "PRAGMA journal_mode"));
            assertEquals("0", TestReplica.scalar(w, "PRAGMA wal_autocheckpoint"));
            assertEquals("30000", TestReplica.scalar(w, "PRAGMA busy_timeout"));
        }
    }

    @Test
    void aWalLeftByAReplacedFileIsRemovedButALiveWalIsKept() throws Exception {
        Path file = dir.resolve("zero.db");
        Path wal = dir.resolve("zero.db-wal");
        TestReplica.create(file, "01");
        ReplicaFile replica = new ReplicaFile(file, 0);
        try (Connection w = replica.openWriter(); Statement st = w.createStatement()) {
            st.execute("UPDATE \"_zero.replicationState\" SET stateVersion = '0a'");
            assertTrue(Files.size(wal) > 0);
            replica.removeStaleWal();
            assertTrue(Files.exists(wal), "the WAL of a WAL-mode database is live");
            assertEquals(Optional.of(List.of("01", "0a")), versions(replica));
            // Keep a copy of the live WAL, as a writer that cannot checkpoint a moved file leaves it.
            Files.copy(wal, dir.resolve("stale-wal"));
        }
        TestReplica.create(file, "05"); // a re-sync renames a new (rollback-journal) file into place
        Files.copy(dir.resolve("stale-wal"), wal, StandardCopyOption.REPLACE_EXISTING);
        try (Connection w = replica.openWriter()) {
            assertEquals("05", TestReplica.stateVersion(w), "the old WAL must not be replayed onto the new file");
            assertEquals("0", TestReplica.scalar(w, "SELECT count(*) FROM issue"));
        }
        assertEquals(Optional.of(List.of("05", "05")), versions(replica));
    }

    // The shared org.zrm.replica.ReplicaStateReader is tested here against real SQLite files:
    // org.zrm.api has no SQLite driver on its test class path.

    @Test
    void theReaderReturnsEveryMetadataColumn() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "01");
        try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
            st.execute("UPDATE \"_zero.replicationConfig\" SET publications = '[\"_zero_public_0\",\"pub\"]', "
                    + "initialSyncContext = '{\"taskID\":\"t1\",\"n\":null}'");
            st.execute("UPDATE \"_zero.replicationState\" SET stateVersion = '0b'");
        }
        ReplicaState state = new ReplicaFile(file, 1000).readIfReady().orElseThrow();
        assertEquals(13, state.schemaVersion());
        assertEquals("01", state.replicaVersion());
        assertEquals("0b", state.stateVersion());
        assertEquals(List.of("_zero_public_0", "pub"), state.publications());
        Map<String, Object> context = new java.util.LinkedHashMap<>();
        context.put("taskID", "t1");
        context.put("n", null);
        assertEquals(context, state.initialSyncContext());
    }

    @Test
    void aNullOrNonObjectInitialSyncContextReadsAsEmpty() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "01");
        ReplicaFile replica = new ReplicaFile(file, 1000);
        for (String ctx : new String[] {"NULL", "'[1]'"}) {
            try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
                st.execute("UPDATE \"_zero.replicationConfig\" SET initialSyncContext = " + ctx);
            }
            assertEquals(Map.of(), replica.readIfReady().orElseThrow().initialSyncContext(), ctx);
        }
    }

    @Test
    void malformedMetadataIsAClearError() throws Exception {
        Path file = dir.resolve("zero.db");
        ReplicaFile replica = new ReplicaFile(file, 1000);
        for (String[] bad : new String[][] {{"publications", "'not json'", "not valid JSON"},
                {"publications", "'{}'", "not a JSON array"}, {"publications", "'[1]'", "not an array of strings"},
                {"initialSyncContext", "'{'", "not valid JSON"}}) {
            TestReplica.create(file, "01");
            try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
                st.execute("UPDATE \"_zero.replicationConfig\" SET " + bad[0] + " = " + bad[1]);
            }
            java.sql.SQLException e = assertThrows(java.sql.SQLException.class, replica::readIfReady);
            assertTrue(e.getMessage().contains("_zero.replicationConfig." + bad[0] + " is " + bad[2]), e.getMessage());
        }
    }

    @Test
    void aReplicaWithoutStateRowsIsNotReady() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "01");
        try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
            st.execute("DELETE FROM \"_zero.replicationState\"");
        }
        assertEquals(Optional.empty(), new ReplicaFile(file, 1000).readIfReady());
        try (Connection c = TestReplica.open(file); Statement st = c.createStatement()) {
            st.execute("DROP TABLE \"_zero.replicationState\"");
        }
        assertEquals(Optional.empty(), new ReplicaFile(file, 1000).readIfReady());
    }
}

package org.zrm.backup.replica.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReplicaStateVersionReaderTest {

    @TempDir
    Path dir;

    @Test
    void readsTheStateVersionReadOnly() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        TestReplica.setStateVersion(file, "0b.01");
        ReplicaStateVersionReader reader = new ReplicaStateVersionReader(file);
        assertEquals("0b.01", reader.read(), "a backfill (major.minor) version is valid");
        try (Connection c = TestReplica.openWriter(file); Statement st = c.createStatement()) {
            // The reader's connection is closed again: an exclusive writer lock is obtainable.
            st.execute("BEGIN EXCLUSIVE");
            st.execute("COMMIT");
        }
    }

    @Test
    void missingFileIsReportedAndNotCreated() {
        Path file = dir.resolve("missing.db");
        ReplicaStateVersionReader reader = new ReplicaStateVersionReader(file);
        NoSuchFileException e = assertThrows(NoSuchFileException.class, reader::read);
        assertEquals(file.toString(), e.getFile());
        assertFalse(Files.exists(file));
    }

    @Test
    void missingTableIsAReadError() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.exec(file, "CREATE TABLE t (x)");
        ReplicaReadException e = assertThrows(ReplicaReadException.class,
                () -> new ReplicaStateVersionReader(file).read());
        assertTrue(e.getMessage().contains("no such table: _zero.replicationState"), e.getMessage());
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    }

    @Test
    void emptyTableIsAReadError() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        TestReplica.exec(file, "DELETE FROM \"_zero.replicationState\"");
        ReplicaReadException e = assertThrows(ReplicaReadException.class,
                () -> new ReplicaStateVersionReader(file).read());
        assertTrue(e.getMessage().contains("has no row"), e.getMessage());
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "X'0a'        | is blob, not text",
        "1.5          | not a state version",
        "''           | not a state version",
        "'zzzz'       | not a state version",
        "'0a.0b.0c'   | more than one '.'",
        "'a'          | not a state version",
    })
    void malformedValuesAreReadErrors(String sqlValue, String expected) throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        TestReplica.exec(file, "UPDATE \"_zero.replicationState\" SET stateVersion = " + sqlValue);
        ReplicaReadException e = assertThrows(ReplicaReadException.class,
                () -> new ReplicaStateVersionReader(file).read());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void nullValueIsAReadError() throws Exception {
        // The real DDL says NOT NULL; a hand-made or foreign file might not.
        Path file = dir.resolve("zero.db");
        TestReplica.exec(file, "CREATE TABLE \"_zero.replicationState\" (stateVersion TEXT, writeTimeMs INTEGER,"
                + " lock INTEGER PRIMARY KEY DEFAULT 1)");
        TestReplica.exec(file, "INSERT INTO \"_zero.replicationState\" (stateVersion) VALUES (NULL)");
        ReplicaReadException e = assertThrows(ReplicaReadException.class,
                () -> new ReplicaStateVersionReader(file).read());
        assertTrue(e.getMessage().contains("is null, not text"), e.getMessage());
    }

    @Test
    void notADatabaseIsAReadError() throws Exception {
        Path file = dir.resolve("zero.db");
        Files.writeString(file, "this is not a database, just some text long enough to have a header".repeat(4));
        ReplicaReadException e = assertThrows(ReplicaReadException.class,
                () -> new ReplicaStateVersionReader(file).read());
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    }

    @Test
    void wal2FileGetsAClearError() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(18);
            raf.write(new byte[] {3, 3}); // what zero's wal2 build writes
        }
        ReplicaReadException e = assertThrows(ReplicaReadException.class,
                () -> new ReplicaStateVersionReader(file).read());
        assertTrue(e.getMessage().contains("wal2"), e.getMessage());
    }
}

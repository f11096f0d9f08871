package org.zrm.backup.vfs.internal.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extension-loading side of the reader. The real {@code litestream-vfs.so} is not obtainable
 * here (spec §8.4), so this covers the failures; {@code WatermarkQueryTest} covers the query.
 */
class VfsWatermarkReaderTest {

    @TempDir
    Path dir;

    @Test
    void opensUpstreamsVfsDatabaseUri() {
        assertEquals("file:zero-backup.db?vfs=litestream&mode=ro", VfsWatermarkReader.DATABASE_URI);
    }

    @Test
    void aMissingExtensionIsNamed() {
        Path missing = dir.resolve("litestream-vfs.so");
        NoSuchFileException e = assertThrows(NoSuchFileException.class,
                () -> VfsWatermarkReader.open(missing, VfsWatermarkReader.DATABASE_URI, Clock.systemUTC()));
        assertEquals(missing + ": litestream VFS extension not found (litestream.vfsExtensionPath)", e.getMessage());
    }

    @Test
    void anExtensionSqliteCannotLoadIsNamed() throws Exception {
        Path notALibrary = Files.writeString(dir.resolve("litestream-vfs.so"), "not a shared library");
        SQLException e = assertThrows(SQLException.class,
                () -> VfsWatermarkReader.open(notALibrary, VfsWatermarkReader.DATABASE_URI, Clock.systemUTC()));
        assertTrue(e.getMessage().startsWith("cannot load litestream VFS extension " + notALibrary + ": "), e.getMessage());
    }
}

package org.zrm.pgcluster.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.pgcluster.PgClusterException;

class TarExtractorTest {
    @TempDir
    Path tmp;

    @Test
    void extractsFilesFoldersAndLinksWithTheirModes() throws Exception {
        byte[] tar = new TarFixture().dir("bin/").file("bin/tool", 0755, "#!/bin/sh\n")
                .file("lib/libx.so.1.2", 0644, "x".repeat(1000)).symlink("lib/libx.so.1", "libx.so.1.2").tar();
        Path dest = tmp.resolve("out");
        TarExtractor.extract(new ByteArrayInputStream(tar), dest);
        assertEquals("#!/bin/sh\n", Files.readString(dest.resolve("bin/tool")));
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(dest.resolve("bin/tool"))));
        assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(dest.resolve("lib/libx.so.1.2"))));
        assertTrue(Files.isSymbolicLink(dest.resolve("lib/libx.so.1")));
        assertEquals(1000, Files.readString(dest.resolve("lib/libx.so.1")).length(), "the link resolves inside the folder");
    }

    @Test
    void groupAndOtherWriteBitsAreDropped() throws Exception {
        Path dest = tmp.resolve("out");
        TarExtractor.extract(new ByteArrayInputStream(new TarFixture().file("f", 0777, "x").tar()), dest);
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(dest.resolve("f"))));
    }

    @Test
    void refusesEntriesThatEscapeTheFolder() {
        Path dest = tmp.resolve("out");
        PgClusterException dotdot = assertThrows(PgClusterException.class,
                () -> TarExtractor.extract(new ByteArrayInputStream(new TarFixture().file("../evil", 0644, "x").tar()), dest));
        assertTrue(dotdot.getMessage().contains("outside"), dotdot.getMessage());
        assertFalse(Files.exists(tmp.resolve("evil")));
        PgClusterException absolute = assertThrows(PgClusterException.class,
                () -> TarExtractor.extract(new ByteArrayInputStream(new TarFixture().file("/etc/evil", 0644, "x").tar()), dest));
        assertTrue(absolute.getMessage().contains("absolute"), absolute.getMessage());
        PgClusterException link = assertThrows(PgClusterException.class,
                () -> TarExtractor.extract(new ByteArrayInputStream(new TarFixture().symlink("l", "../../etc/passwd").tar()), dest));
        assertTrue(link.getMessage().contains("points outside"), link.getMessage());
        PgClusterException absoluteLink = assertThrows(PgClusterException.class,
                () -> TarExtractor.extract(new ByteArrayInputStream(new TarFixture().symlink("l2", "/etc/passwd").tar()), dest));
        assertTrue(absoluteLink.getMessage().contains("points outside"), absoluteLink.getMessage());
    }

    @Test
    void refusesHardLinksAndDevices() {
        PgClusterException e = assertThrows(PgClusterException.class,
                () -> TarExtractor.extract(new ByteArrayInputStream(new TarFixture().entry("dev", '3').tar()), tmp.resolve("out")));
        assertTrue(e.getMessage().contains("unsupported tar entry type '3'"), e.getMessage());
    }

    @Test
    void truncatedArchiveIsAnError() {
        byte[] tar = new TarFixture().file("f", 0644, "y".repeat(2000)).tar();
        byte[] cut = java.util.Arrays.copyOf(tar, 1024);
        assertThrows(java.io.EOFException.class, () -> TarExtractor.extract(new ByteArrayInputStream(cut), tmp.resolve("out")));
    }
}

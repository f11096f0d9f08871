package org.zrm.pgcluster.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.pgcluster.PgClusterException;

class DataFolderTest {
    @TempDir
    Path tmp;

    // Runs as the JVM's own user: these tests are about the layout, not about ownership.
    private final OsAccount self = OsAccount.choose(System.getProperty("user.name"), System.getProperty("user.name"));

    @Test
    void writesSettingsQuotedInOrder() throws Exception {
        DataFolder folder = new DataFolder(tmp, self);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("port", "5433");
        settings.put("application_name", "it's");
        folder.writeSettings(settings);
        assertEquals(
                "# Written by ZRM (org.zrm.pgcluster) at every start; edits are lost.\nport = '5433'\napplication_name = 'it''s'\n",
                Files.readString(tmp.resolve(DataFolder.SETTINGS_FILE)));
    }

    @Test
    void refusesAFolderWithForeignFiles() throws Exception {
        Files.writeString(tmp.resolve("notes.txt"), "mine");
        PgClusterException e = assertThrows(PgClusterException.class, () -> new DataFolder(tmp, self).prepare());
        assertTrue(e.getMessage().contains("neither empty nor a PostgreSQL data folder"), e.getMessage());
    }

    @Test
    void readsPidAndPortFromThePidFile() throws Exception {
        DataFolder folder = new DataFolder(tmp, self);
        assertFalse(folder.recordedPid().isPresent());
        Files.writeString(tmp.resolve("postmaster.pid"), "4242\n" + tmp + "\n1700000000\n5544\n");
        assertEquals(4242, folder.recordedPid().getAsLong());
        assertEquals("5544", folder.recordedPort().orElseThrow());
    }

    @Test
    void fileTailReadsOnlyTheEndAndFromAnOffset() throws Exception {
        Path log = tmp.resolve("log");
        Files.writeString(log, "old run\nnew run\n");
        assertEquals("new run\n", FileTail.read(log, 1000, "old run\n".length()));
        assertTrue(FileTail.read(log, 4).endsWith("run\n"));
        assertEquals("", FileTail.read(tmp.resolve("absent"), 10));
    }
}

package org.zrm.replicator.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskFullNoticeTest {

    @Test
    void recognisesSqliteFullAndEnospcAnywhereInTheCauseChain() {
        assertTrue(DiskFullNotice.isDiskFull(new SQLException("insert failed", "HY000", DiskFullNotice.SQLITE_FULL)));
        // Extended result codes keep the primary code in the low byte.
        assertTrue(DiskFullNotice.isDiskFull(new SQLException("x", "HY000", (1 << 8) | DiskFullNotice.SQLITE_FULL)));
        assertTrue(DiskFullNotice.isDiskFull(new IllegalStateException("failed to apply commit",
                new SQLException("[SQLITE_FULL] Insertion failed because database is full (database or disk is full)"))));
        assertTrue(DiskFullNotice.isDiskFull(new IOException("write failed", new IOException("No space left on device"))));

        assertFalse(DiskFullNotice.isDiskFull(new SQLException("[SQLITE_BUSY] database is locked", "HY000", 5)));
        assertFalse(DiskFullNotice.isDiskFull(new IOException("connection reset")));
        assertFalse(DiskFullNotice.isDiskFull(new RuntimeException((String) null)));
    }

    @Test
    void oneErrorPerEpisodeThenOneLineWhenCommitsApplyAgain(@TempDir Path dir) {
        DiskFullNotice n = new DiskFullNotice(dir.resolve("zero.db"));
        assertNull(n.applied("a"), "no episode yet");

        String error = n.failed("4gfrvk");
        assertNotNull(error);
        assertTrue(error.contains(dir.toString()), error);
        assertTrue(error.contains("KiB free"), error);
        assertTrue(error.contains("nothing after stateVersion 4gfrvk is applied or acknowledged"), error);
        assertTrue(n.isFull());
        assertNull(n.failed("4gfrvk"));
        assertNull(n.failed("4gfrvk"));

        String resumed = n.applied("4gfsu0");
        assertNotNull(resumed);
        assertTrue(resumed.contains("applied 4gfsu0 after 2 quiet retries"), resumed);
        assertFalse(n.isFull());
        assertNull(n.applied("4gfsu1"));
        // A later episode is reported again.
        assertNotNull(n.failed("4gfsu1"));
    }
}

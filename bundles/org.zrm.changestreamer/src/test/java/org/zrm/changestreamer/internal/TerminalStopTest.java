package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changestreamer.internal.TerminalStop.Kind;

class TerminalStopTest {

    @Test
    void classifiesTheTerminalCauses() {
        assertEquals(Kind.OWNERSHIP_LOST, TerminalStop.kindOf(new OwnershipLostException("taken", "other-task")));
        assertEquals(Kind.SLOT_MISSING, TerminalStop.kindOf(new ChangeSourceAbortedException(
                "replication slot zero_0_a is missing. A different replication-manager should now be running")));
        assertEquals(Kind.REPLICATION_TAKEN_OVER, TerminalStop.kindOf(new ChangeSourceAbortedException(
                "replication stream on slot zero_0_a: shutdown signal received (e.g. another replication manager"
                        + " taking over the replication stream)")));
        assertEquals(Kind.RESET_REQUIRED, TerminalStop.kindOf(new AutoResetException("publications changed")));
        assertEquals(Kind.CHANGE_LOG_GONE, TerminalStop.kindOf(new IllegalStateException("x",
                new SQLException("relation does not exist", "42P01"))));
        assertEquals(Kind.UNRECOVERABLE, TerminalStop.kindOf(new ChangeSourceAbortedException("aborted")));
    }

    @Test
    void aWedgedBackupIsRecordedButTheCoordinatorDecidesTheExit() {
        List<String> stops = new ArrayList<>();
        TerminalStop t = new TerminalStop(true, stops::add, () -> true, Clock.systemUTC());
        t.streamerTerminated(new IllegalStateException("backup is wedged"));
        assertEquals("BACKUP_FATAL", t.status().get("kind"));
        assertEquals(List.of(), stops);
        // Only the first terminal cause counts.
        t.streamerTerminated(new OwnershipLostException("taken", "other"));
        assertTrue(((String) t.reason()).contains("wedged"));
    }
}

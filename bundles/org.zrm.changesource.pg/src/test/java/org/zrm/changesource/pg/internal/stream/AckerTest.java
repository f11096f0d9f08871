package org.zrm.changesource.pg.internal.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Passthrough;

/** Port of upstream {@code change-source.test.ts} → "acker": the exact ack/no-ack sequence. */
class AckerTest {

    private final List<Long> sent = new ArrayList<>();
    private final Acker acker = new Acker(sent::add);

    private static ChangeStreamMessage status(boolean ack, String wm) {
        return new ChangeStreamMessage.StatusMessage(new DownstreamStatus(ack, null, Passthrough.NONE), wm);
    }

    private static ChangeStreamMessage begin(String wm, Boolean skipAck) {
        return new ChangeStreamMessage.BeginMessage(new Begin(JsonFormat.STRINGIFIED, skipAck, Passthrough.NONE), wm);
    }

    @Test
    void acker() {
        acker.onChange(status(false, "0a"));
        assertEquals(List.of(10L), sent);
        acker.onChange(begin("0b", null));
        assertEquals(List.of(10L), sent);
        acker.ack("0b");
        assertEquals(List.of(10L, 11L), sent);
        acker.onChange(status(false, "0c"));
        assertEquals(List.of(10L, 11L, 12L), sent);
        acker.onChange(begin("0d", null));
        acker.onChange(status(false, "0e"));
        assertEquals(List.of(10L, 11L, 12L), sent, "nothing while a commit is outstanding");
        acker.onChange(status(true, "0f"));
        acker.ack("0d");
        assertEquals(List.of(10L, 11L, 12L, 13L), sent);
        acker.onChange(status(false, "0g"));
        assertEquals(List.of(10L, 11L, 12L, 13L), sent, "still waiting for the echo of 0f");
        acker.ack("0f");
        assertEquals(List.of(10L, 11L, 12L, 13L, 15L), sent);
        acker.onChange(status(false, "0h"));
        assertEquals(List.of(10L, 11L, 12L, 13L, 15L, 17L), sent);
    }

    @Test
    void backfillBeginsWithSkipAckDoNotArmTheWait() {
        acker.onChange(begin("0b.01", true));
        acker.onChange(status(false, "0c"));
        assertEquals(List.of(12L), sent);
    }

    @Test
    void minorVersionIsIgnoredWhenAcking() {
        acker.ack("0b.3z8d2");
        assertEquals(List.of(11L), sent);
    }
}

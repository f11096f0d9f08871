package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.CatchupFrames;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;

/** Live frame text == text rebuilt from the stored row (spec §2.5.7), checked against the codec. */
class CatchupFramesTest {

    private final ProtocolCodec codec = new ProtocolCodec();

    @Test
    void extractChangeMessageSubstring() {
        assertEquals("{\"tag\":\"begin\",\"foo\":\"bar\"}",
                CatchupFrames.extractChange("[\"begin\",{\"tag\":\"begin\",\"foo\":\"bar\"},{\"commitWatermark\":\"0a\"}]", "begin"));
        assertEquals("{\"tag\":\"commit\",\"a\":[1,2]}",
                CatchupFrames.extractChange("[\"commit\",{\"tag\":\"commit\",\"a\":[1,2]},{\"watermark\":\"0b\"}]", "commit"));
        assertEquals("{\"tag\":\"insert\",\"new\":{\"a\":\"x,]y\"}}",
                CatchupFrames.extractChange("[\"data\",{\"tag\":\"insert\",\"new\":{\"a\":\"x,]y\"}}]", "insert"));
        assertEquals("{\"tag\":\"rollback\"}", CatchupFrames.extractChange("[\"rollback\",{\"tag\":\"rollback\"}]", "rollback"));
        assertEquals("{\"tag\":\"create-table\",\"spec\":{}}",
                CatchupFrames.extractChange("[\"data\",{\"tag\":\"create-table\",\"spec\":{}}]", "create-table"));
        assertThrows(IllegalArgumentException.class, () -> CatchupFrames.extractChange("garbage", "insert"));
    }

    @Test
    void rebuiltFramesAreByteIdenticalToLiveFrames() {
        List<String> messages = List.of(
                "[\"begin\",{\"tag\":\"begin\",\"json\":\"p\"},{\"commitWatermark\":\"4e672g\"}]",
                "[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\",\"name\":\"t\",\"rowKey\":"
                        + "{\"columns\":[\"id\"]}},\"new\":{\"id\":987654321987654321,\"s\":\"ü\\u0000\\\"x\",\"d\":1.5}}]",
                "[\"data\",{\"tag\":\"delete\",\"relation\":{\"schema\":\"public\",\"name\":\"t\",\"rowKey\":"
                        + "{\"columns\":[\"id\"]}},\"key\":{\"id\":1}}]",
                "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"4e672g\"}]",
                "[\"rollback\",{\"tag\":\"rollback\"}]");
        for (String m : messages) {
            ChangeStreamData msg = (ChangeStreamData) codec.decodeChangeStreamMessage(m);
            String live = codec.encode(msg);
            String tag = msg.change().tag();
            String watermark = msg instanceof ChangeStreamMessage.BeginMessage b ? b.commitWatermark()
                    : msg instanceof ChangeStreamMessage.CommitMessage c ? c.watermark() : "4e672g";
            ChangeLogEntry row = new ChangeLogEntry(watermark, 1, tag, CatchupFrames.extractChange(live, tag), null);
            assertEquals(live, CatchupFrames.rebuild(row), m);
            assertEquals(live, codec.encode(codec.decodeChangeStreamMessage(CatchupFrames.rebuild(row))));
        }
    }
}

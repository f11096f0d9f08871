package org.zrm.storer.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.Passthrough;

/** Upstream's "extract change message substring" cases, plus the QUIRK decision for trailer extras. */
class ChangeTextTest {

    @Test
    void begin() {
        assertEquals("{\"tag\":\"begin\",\"foo\":\"bar\"}",
                ChangeText.extract("[\"begin\",{\"tag\":\"begin\",\"foo\":\"bar\"},{\"commitWatermark\":\"0b\"}]", "begin", "0b"));
    }

    @Test
    void commit() {
        assertEquals("{\"tag\":\"commit\",\"foo\":\"bar\"}",
                ChangeText.extract("[\"commit\",{\"tag\":\"commit\",\"foo\":\"bar\"},{\"watermark\":\"0b\"}]", "commit", "0b"));
    }

    @Test
    void insert() {
        assertEquals("{\"tag\":\"insert\",\"new\":{\"a\":\"],[\"}}",
                ChangeText.extract("[\"data\",{\"tag\":\"insert\",\"new\":{\"a\":\"],[\"}}]", "data", null));
    }

    @Test
    void schemaChange() {
        assertEquals("{\"tag\":\"create-table\",\"spec\":{\"a\":[1,2]}}",
                ChangeText.extract("[\"data\",{\"tag\":\"create-table\",\"spec\":{\"a\":[1,2]}}]", "data", null));
    }

    @Test
    void rollback() {
        assertEquals("{\"tag\":\"rollback\"}", ChangeText.extract("[\"rollback\",{\"tag\":\"rollback\"}]", "rollback", null));
    }

    @Test
    void bodyWithCommasAndBigints() {
        String json = "[\"data\",{\"tag\":\"insert\",\"new\":{\"big\":987654321987654321,\"s\":\"a,b\"}}]";
        assertEquals("{\"tag\":\"insert\",\"new\":{\"big\":987654321987654321,\"s\":\"a,b\"}}", ChangeText.extract(json, "data", null));
    }

    @Test
    void trailerWithExtraMembersIsCutAtTheWatermarkMember_QUIRK() {
        BeginMessage m = new BeginMessage(new Begin(null, null, Passthrough.NONE), "0c",
                Passthrough.of(Map.of("x", 1L)));
        String json = Msgs.CODEC.encode(m);
        assertEquals("{\"tag\":\"begin\"}", ChangeText.extract(json, "begin", "0c"));
    }

    @Test
    void textOfAnotherMessageTypeIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> ChangeText.extract("[\"data\",{\"tag\":\"insert\"}]", "begin", "0b"));
        assertThrows(IllegalArgumentException.class, () -> ChangeText.extract("[\"data\",{\"tag\":\"insert\"}", "data", null));
        assertThrows(IllegalArgumentException.class, () -> ChangeText.extract("[\"data\",]", "data", null));
    }
}

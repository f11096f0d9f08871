package org.zrm.backup.vfs.internal.watermark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The JSON lines between the monitor and the reader child. */
class WireCodecTest {

    private final WireCodec codec = new WireCodec();

    @Test
    void writesUpstreamsTuples() {
        assertEquals("[\"ready\",{\"ready\":true}]", codec.ready());
        assertEquals("[\"backupWatermarkRequest\",{\"requestID\":\"1\"}]", codec.request("1"));
        assertEquals("[\"backupWatermarkResponse\",{\"requestID\":\"1\",\"result\":{\"watermark\":\"04\","
                + "\"writeTimeMs\":123,\"txid\":\"0000000000000004\",\"lagSeconds\":2,\"observedAtMs\":1000}}]",
                codec.result("1", new BackupWatermark("04", 123L, "0000000000000004", 2, 1000)));
        assertEquals("[\"backupWatermarkResponse\",{\"requestID\":\"2\",\"result\":{\"watermark\":\"04\","
                + "\"writeTimeMs\":null,\"txid\":\"07\",\"lagSeconds\":-1,\"observedAtMs\":5}}]",
                codec.result("2", new BackupWatermark("04", null, "07", -1, 5)));
        assertEquals("[\"backupWatermarkResponse\",{\"requestID\":\"3\",\"error\":{\"name\":\"Error\","
                + "\"message\":\"boom\"}}]", codec.error("3", "Error", "boom"));
    }

    @Test
    void parsesWhatItWrites() throws IOException {
        BackupWatermark w = new BackupWatermark("04", 123L, "0000000000000004", 2, 1000);
        assertEquals(Optional.of(new WireCodec.Ready()), codec.parse(codec.ready()));
        assertEquals(Optional.of(new WireCodec.Request("9")), codec.parse(codec.request("9")));

        WireCodec.Response result = (WireCodec.Response) codec.parse(codec.result("1", w)).orElseThrow();
        assertEquals("1", result.requestID());
        assertNull(result.errorMessage());
        assertEquals(w, codec.watermark(result.result()));

        WireCodec.Response error = (WireCodec.Response) codec.parse(codec.error("2", "Error", "boom")).orElseThrow();
        assertEquals("boom", error.errorMessage());
        assertEquals("Error", error.errorName());
        assertNull(error.result());
    }

    @Test
    void otherLinesAreNotMessages() {
        for (String line : new String[] {"", "level=INFO msg=x", "{\"ready\":true}", "[\"ready\"]",
            "[\"ready\",{\"ready\":false}]", "[\"ready\",{}]", "[\"backupWatermarkRequest\",{\"requestID\":1}]",
            "[\"backupWatermarkResponse\",{\"result\":{}}]", "[\"other\",{}]", "[1,{}]", "[\"ready\",{\"ready\":true},3]"}) {
            assertEquals(Optional.empty(), codec.parse(line), line);
        }
    }

    @Test
    void aResponseWithNeitherResultNorErrorHasNoResult() {
        WireCodec.Response r = (WireCodec.Response) codec
                .parse("[\"backupWatermarkResponse\",{\"requestID\":\"1\",\"result\":null}]").orElseThrow();
        assertNull(r.result());
        assertNull(r.errorMessage());
    }

    @Test
    void anErrorWithoutMessageStillFails() {
        WireCodec.Response r = (WireCodec.Response) codec
                .parse("[\"backupWatermarkResponse\",{\"requestID\":\"1\",\"error\":{\"code\":5}}]").orElseThrow();
        assertEquals("Error", r.errorName());
        assertEquals("backup watermark reader failed without a message: {\"code\":5}", r.errorMessage());
    }

    @Test
    void rejectsMalformedResults() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        for (String result : new String[] {
            "{\"watermark\":2,\"writeTimeMs\":null,\"txid\":\"07\",\"lagSeconds\":4,\"observedAtMs\":1}",
            "{\"watermark\":\"02\",\"writeTimeMs\":\"x\",\"txid\":\"07\",\"lagSeconds\":4,\"observedAtMs\":1}",
            "{\"watermark\":\"02\",\"txid\":\"07\",\"lagSeconds\":4,\"observedAtMs\":1}",
            "{\"watermark\":\"02\",\"writeTimeMs\":1,\"txid\":7,\"lagSeconds\":4,\"observedAtMs\":1}",
            "{\"watermark\":\"02\",\"writeTimeMs\":1,\"txid\":\"07\",\"lagSeconds\":null,\"observedAtMs\":1}",
            "{\"watermark\":\"02\",\"writeTimeMs\":1,\"txid\":\"07\",\"lagSeconds\":4}",
            "[\"02\"]", "\"02\""}) {
            IOException e = assertThrows(IOException.class, () -> codec.watermark(mapper.readTree(result)), result);
            assertTrue(e.getMessage().startsWith("malformed backup watermark result: "), e.getMessage());
        }
    }
}

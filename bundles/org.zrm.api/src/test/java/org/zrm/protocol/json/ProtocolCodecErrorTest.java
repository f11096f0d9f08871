package org.zrm.protocol.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every rejection names the offending member by JSON path. */
class ProtocolCodecErrorTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    private static final String REL =
            "{\"schema\":\"public\",\"name\":\"foo\",\"rowKey\":{\"columns\":[\"id\"]}}";

    private static ProtocolException fail(Function<String, ?> decoder, String json) {
        return assertThrows(ProtocolException.class, () -> decoder.apply(json));
    }

    private static void assertError(String json, String expectedMessage) {
        assertEquals(expectedMessage, fail(CODEC::decodeChangeStreamMessage, json).getMessage());
    }

    @Test
    void wrongMemberType() {
        assertError("[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":1,\"name\":\"foo\",\"keyColumns\":[]},\"new\":{}}]",
                "$[1].relation.schema: expected string, got number");
        assertError("[\"data\",{\"tag\":\"insert\",\"relation\":" + REL + ",\"new\":[]}]",
                "$[1].new: expected object, got array");
        assertError("[\"data\",{\"tag\":\"truncate\",\"relations\":[" + REL + ",{\"schema\":\"s\",\"name\":null,\"keyColumns\":[]}]}]",
                "$[1].relations[1].name: expected string, got null");
        assertError("[\"data\",{\"tag\":\"backfill\",\"relation\":" + REL
                        + ",\"columns\":[1],\"watermark\":\"w\",\"rowValues\":[]}]",
                "$[1].columns[0]: expected string, got number");
        assertError("[\"begin\",{\"tag\":\"begin\",\"skipAck\":\"yes\"},{\"commitWatermark\":\"0a\"}]",
                "$[1].skipAck: expected boolean, got string");
        assertError("[\"status\",{\"ack\":true},{\"watermark\":9007199254740993}]",
                "$[2].watermark: expected string, got bigint");
        assertError("[\"data\",{\"tag\":\"create-table\",\"spec\":{\"schema\":\"s\",\"name\":\"t\",\"columns\":"
                        + "{\"c\":{\"pos\":1.5,\"dataType\":\"int\"}}}}]",
                "$[1].spec.columns.c.pos: expected integer, got 1.5");
        assertError("[\"data\",{\"tag\":\"create-table\",\"spec\":{\"schema\":\"s\",\"name\":\"t\",\"columns\":"
                        + "{\"my col\":{\"pos\":1,\"dataType\":\"int\",\"pgTypeClass\":\"x\"}}}}]",
                "$[1].spec.columns[\"my col\"].pgTypeClass: expected one of \"b\", \"c\", \"d\", \"e\", \"p\", \"r\", \"m\", got \"x\"");
    }

    @Test
    void missingRequiredMember() {
        assertError("[\"commit\",{\"tag\":\"commit\"},{}]", "$[2].watermark: missing required string");
        assertError("[\"data\",{\"tag\":\"delete\",\"relation\":" + REL + "}]", "$[1].key: missing required object");
        assertError("[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"s\",\"name\":\"t\"},\"new\":{}}]",
                "$[1].relation.rowKey: missing required object (or keyColumns)");
        assertError("[\"data\",{\"tag\":\"backfill\",\"relation\":{\"schema\":\"s\",\"name\":\"t\",\"keyColumns\":[]},"
                        + "\"columns\":[],\"watermark\":\"w\",\"rowValues\":[]}]",
                "$[1].relation.rowKey: missing required object");
        assertError("[\"data\",{\"relation\":" + REL + "}]", "$[1].tag: missing required string");
        assertError("[\"status\",{\"lagReport\":{\"nextSendTimeMs\":1}},{\"watermark\":\"w\"}]",
                "$[1].lagReport.lastTimings: missing required object");
    }

    @Test
    void unknownTags() {
        assertError("[\"bogus\",{}]",
                "$[0]: unknown message type \"bogus\", expected one of begin, data, commit, rollback, control, status");
        assertError("[\"data\",{\"tag\":\"upsert\"}]", "$[1].tag: unknown change tag \"upsert\"");
        assertError("[\"begin\",{\"tag\":\"commit\"},{\"commitWatermark\":\"0a\"}]",
                "$[1].tag: expected \"begin\", got \"commit\"");
        assertError("[\"control\",{\"tag\":\"status-requested\"}]",
                "$[1].tag: expected \"reset-required\", got \"status-requested\"");
        assertEquals("$[0]: unknown message type \"control\", expected one of status, begin, data, commit, rollback, error",
                fail(CODEC::decodeDownstream, "[\"control\",{\"tag\":\"reset-required\"}]").getMessage());
    }

    @Test
    void wrongTupleLength() {
        assertError("[\"rollback\",{\"tag\":\"rollback\"},{}]", "$: \"rollback\" message must have 2 elements, got 3");
        assertError("[\"begin\",{\"tag\":\"begin\"}]", "$: \"begin\" message must have 3 elements, got 2");
        assertError("[]", "$: expected a non-empty array");
        assertError("{\"tag\":\"begin\"}", "$: expected array, got object");
        assertError("[42]", "$[0]: expected string, got number");
        assertEquals("$: \"status\" message must have 3 elements, got 2",
                fail(CODEC::decodeChangeSourceUpstream, "[\"status\",{\"ack\":true}]").getMessage());
        assertEquals("$: \"status\" message must have 2 elements, got 3",
                fail(CODEC::decodeSnapshotStatus, "[\"status\",{\"tag\":\"status\"},{}]").getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "[\"rollback\",{\"tag\":\"rollback\"}] x|$",
        "[\"rollback\",{\"tag\":\"rollback\"}][]|$",
        "[\"rollback\",{\"tag\":\"rollback\",}]|$[1].tag",
        "[\"rollback\",{\"tag\":'rollback'}]|$[1].tag",
        "[\"status\",{\"ack\":NaN},{\"watermark\":\"w\"}]|$[1].ack",
        "[\"status\",{\"ack\":true},{\"watermark\":\"w\"}|$[2]",
        "''|$",
        "[\"data\",{\"tag\":\"insert\",\"new\":{\"a\":01}}]|$[1].new.a",
    })
    void malformedJson(String json, String path) {
        ProtocolException e = fail(CODEC::decodeChangeStreamMessage, json.equals("''") ? "" : json);
        assertEquals(path, e.path(), e.getMessage());
        assertEquals(true, e.reason().startsWith("malformed JSON"), e.getMessage());
    }

    @Test
    void duplicateMembersAreRejected() {
        ProtocolException e = fail(CODEC::decodeChangeStreamMessage,
                "[\"data\",{\"tag\":\"insert\",\"relation\":" + REL + ",\"new\":{\"a\":1,\"a\":2}}]");
        assertEquals("$[1].new.a: duplicate member name", e.getMessage());
    }

    @Test
    void jsonParseSemanticsKeepTheFirstPositionAndTheLastValue() {
        assertEquals("$.a: duplicate member name", fail(CODEC::decodeValue, "{\"a\":1,\"b\":2,\"a\":3}").getMessage());
        Object v = CODEC.decodeValueLikeJsonParse("{\"a\":1,\"b\":{\"x\":\"ASC\",\"x\":\"DESC\"},\"a\":3}");
        // What JSON.stringify(JSON.parse(...)) gives.
        assertEquals("{\"a\":3,\"b\":{\"x\":\"DESC\"}}", CODEC.encodeValue(v));
        assertEquals("$.a", fail(CODEC::decodeValueLikeJsonParse, "{\"a\":1").path());
    }

    @Test
    void subscriberErrors() {
        assertEquals("$[1].type: unknown error type 7, expected 0, 1 or 2",
                fail(CODEC::decodeDownstream, "[\"error\",{\"type\":7}]").getMessage());
        assertEquals("$[1].type: expected number, got string",
                fail(CODEC::decodeDownstream, "[\"error\",{\"type\":\"1\"}]").getMessage());
        assertEquals("$[1].tag: expected \"status\", got \"stat\"",
                fail(CODEC::decodeDownstream, "[\"status\",{\"tag\":\"stat\"}]").getMessage());
        assertEquals("$[1].minWatermark: missing required string",
                fail(CODEC::decodeSnapshotStatus, "[\"status\",{\"tag\":\"status\",\"backupURL\":\"u\",\"replicaVersion\":\"v\"}]").getMessage());
    }

    @Test
    void frameAndAckErrors() {
        assertEquals("$.id: missing required number", fail(CODEC::decodeFrame, "{\"msg\":[\"status\",{\"tag\":\"status\"}]}").getMessage());
        assertEquals("$.msg: expected array, got string", fail(CODEC::decodeFrame, "{\"id\":1,\"msg\":\"x\"}").getMessage());
        assertEquals("$.id: expected integer, got string", fail(CODEC::decodeFrame, "{\"id\":\"1\",\"msg\":[]}").getMessage());
        assertEquals("$.extra: unexpected member", fail(CODEC::decodeFrame, "{\"id\":1,\"msg\":[],\"extra\":1}").getMessage());
        assertEquals("$.id: duplicate member name", fail(CODEC::decodeFrame, "{\"id\":1,\"id\":2,\"msg\":[]}").getMessage());
        assertEquals("$", fail(CODEC::decodeFrame, "{\"id\":1,\"msg\":[1,}").path());
        assertEquals("$.ack: expected a non-negative safe integer, got -1", fail(CODEC::decodeAck, "{\"ack\":-1}").getMessage());
        assertEquals("$.ack: expected integer, got number", fail(CODEC::decodeAck, "{\"ack\":1.5}").getMessage());
        assertEquals("$.ack: missing required number", fail(CODEC::decodeAck, "{}").getMessage());
        assertEquals("$", fail(CODEC::decodeAck, "{\"ack\":1} 2").path());
        assertEquals("$.ack: expected a non-negative safe integer, got 9007199254740992",
                fail(CODEC::decodeAck, "{\"ack\":9007199254740992}").getMessage(), "16 digits leave the fast path");
        assertEquals("$", fail(CODEC::decodeAck, "{\"ack\":1x}").path(), "not digits: the parser reports it");
    }

    @Test
    void canonicalAcksTakeTheFastPathWithTheParsersResult() {
        for (String text : new String[] {"{\"ack\":0}", "{\"ack\":1}", "{\"ack\":123456789012345}",
            "{\"ack\":9007199254740991}", "{ \"ack\": 42 }", "{\"ack\":007}"}) {
            Object fast;
            try {
                fast = CODEC.decodeAck(text).id();
            } catch (ProtocolException e) {
                fast = e.getMessage();
            }
            Object parsed;
            try (var p = new com.fasterxml.jackson.core.JsonFactory().createParser(text)) {
                p.nextToken();
                p.nextToken();
                p.nextToken();
                parsed = p.getLongValue();
            } catch (Exception e) {
                parsed = "invalid";
            }
            if (!(fast instanceof Long)) {
                assertEquals("invalid", parsed, text + ": only what a parser rejects may fail: " + fast);
            } else {
                assertEquals(parsed, fast, text);
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"0", "7", "-1", "6.0", "v6", "''"})
    void unsupportedProtocolVersions(String v) {
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> ProtocolCodec.checkProtocolVersion(v.equals("''") ? "" : v));
        assertEquals("protocolVersion", e.path());
    }

    @ParameterizedTest
    @CsvSource({"1", "5", "6"})
    void supportedProtocolVersions(String v) {
        assertEquals(Integer.parseInt(v), ProtocolCodec.checkProtocolVersion(v));
    }
}

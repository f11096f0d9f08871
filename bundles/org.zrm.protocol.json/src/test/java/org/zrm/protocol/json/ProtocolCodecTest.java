package org.zrm.protocol.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeKind;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.Commit;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.Insert;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.Update;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.protocol.subscriber.Frame;
import org.zrm.protocol.subscriber.SubscriptionError;

class ProtocolCodecTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private static Map<String, Object> ordered(Object... kv) {
        LinkedHashMap<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private static Relation pgRelation() {
        return new Relation("public", "foo", new RowKey(List.of("id"), ReplicaIdentity.DEFAULT, Passthrough.NONE),
                List.of("id"), ReplicaIdentity.DEFAULT,
                Passthrough.of(ordered("tag", "relation", "relationOid", 16390L)));
    }

    @Test
    void javaBuiltMessagesComeOutInUpstreamOrder() {
        // extras listed in a different order than the PG source emits them still land canonically
        Begin begin = new Begin(JsonFormat.STRINGIFIED, null,
                Passthrough.of(ordered("xid", 750L, "commitLsn", "00000000/016B3D28", "commitTime", 1718812345678901L)));
        assertEquals("[\"begin\",{\"tag\":\"begin\",\"commitLsn\":\"00000000/016B3D28\",\"commitTime\":1718812345678901,"
                        + "\"xid\":750,\"json\":\"s\"},{\"commitWatermark\":\"4e6888\"}]",
                CODEC.encode(new ChangeStreamMessage.BeginMessage(begin, "4e6888")));

        Insert insert = new Insert(pgRelation(),
                ordered("id", "hello", "int", null, "big", new BigInteger("987654321987654321")), Passthrough.NONE);
        assertEquals("[\"data\",{\"tag\":\"insert\",\"relation\":{\"tag\":\"relation\",\"relationOid\":16390,"
                        + "\"schema\":\"public\",\"name\":\"foo\",\"rowKey\":{\"columns\":[\"id\"],\"type\":\"default\"},"
                        + "\"keyColumns\":[\"id\"],\"replicaIdentity\":\"default\"},"
                        + "\"new\":{\"id\":\"hello\",\"int\":null,\"big\":987654321987654321}}]",
                CODEC.encode(new ChangeStreamMessage.DataMessage(insert)));

        Update update = new Update(pgRelation(), null, ordered("id", "hello"), Passthrough.of(ordered("old", null)));
        assertTrue(CODEC.encode(new ChangeStreamMessage.DataMessage(update))
                .endsWith("\"key\":null,\"old\":null,\"new\":{\"id\":\"hello\"}}]"));
    }

    @Test
    void absentAndNullStayDistinct() {
        String json = "[\"data\",{\"tag\":\"update\",\"relation\":{\"schema\":\"s\",\"name\":\"t\",\"keyColumns\":[\"id\"]},"
                + "\"key\":null,\"new\":{\"id\":1,\"n\":null}}]";
        Update u = (Update) ((ChangeStreamMessage.DataMessage) CODEC.decodeChangeStreamMessage(json)).change();
        assertNull(u.key());
        assertTrue(u.newRow().containsKey("n"));
        assertNull(u.newRow().get("n"));
        assertFalse(u.newRow().containsKey("toasted"));
        assertEquals(1L, u.newRow().get("id"));
        assertNull(u.relation().rowKey());
        assertEquals(new RowKey(List.of("id")), u.relation().effectiveRowKey());
        assertEquals(json, CODEC.encode(new ChangeStreamMessage.DataMessage(u)));

        ColumnSpec absent = new ColumnSpec(1, "int8", null, Maybe.absent(), Maybe.absent(), Maybe.absent(),
                Maybe.absent(), Passthrough.NONE);
        ColumnSpec nulls = new ColumnSpec(1, "int8", null, Maybe.ofNull(), Maybe.ofNull(), Maybe.ofNull(),
                Maybe.ofNull(), Passthrough.NONE);
        assertEquals("{\"pos\":1,\"dataType\":\"int8\"}", specJson(absent));
        assertEquals("{\"pos\":1,\"dataType\":\"int8\",\"elemPgTypeClass\":null,\"characterMaximumLength\":null,"
                + "\"notNull\":null,\"dflt\":null}", specJson(nulls));
    }

    private static String specJson(ColumnSpec c) {
        String json = CODEC.encodeChange(new CreateTable(
                new org.zrm.protocol.TableSpec("s", "t", Map.of("c", c), null, Passthrough.NONE), null, null,
                Passthrough.NONE));
        return json.substring(json.indexOf("{\"pos\""), json.indexOf("}}}") + 1);
    }

    @Test
    void statusAckDefaultsToTrue() {
        DownstreamStatus s = ((ChangeStreamMessage.StatusMessage) CODEC.decodeChangeStreamMessage(
                "[\"status\",{},{\"watermark\":\"w\"}]")).status();
        assertNull(s.ack());
        assertTrue(s.ackRequested());
        assertFalse(new DownstreamStatus(false, null, Passthrough.NONE).ackRequested());
    }

    @Test
    void unknownMembersAndOrderSurviveRoundTrip() {
        String json = "[\"commit\",{\"commitTime\":1,\"tag\":\"commit\",\"z\":{\"nested\":[1.5]}},"
                + "{\"watermark\":\"w\",\"x\":null}]";
        ChangeStreamMessage.CommitMessage m = (ChangeStreamMessage.CommitMessage) CODEC.decodeChangeStreamMessage(json);
        assertEquals(List.of("commitTime", "tag", "z"), m.commit().extra().keyOrder());
        assertEquals(1L, m.commit().extra().get("commitTime"));
        assertTrue(m.trailerExtra().has("x"));
        assertEquals(json, CODEC.encode(m));
        // canonical order is not recorded; unknown PG members still count as passthrough
        Commit canonical = ((ChangeStreamMessage.CommitMessage) CODEC.decodeChangeStreamMessage(
                "[\"commit\",{\"tag\":\"commit\",\"flags\":0},{\"watermark\":\"w\"}]")).commit();
        assertEquals(List.of(), canonical.extra().keyOrder());
        assertEquals(Map.of("flags", 0L), canonical.extra().fields());
    }

    @Test
    void passthroughCannotShadowModelledMembers() {
        assertThrows(IllegalArgumentException.class,
                () -> new Begin(null, null, Passthrough.of(Map.of("json", "p"))));
    }

    @Test
    void classifiesLikeUpstream() {
        for (String json : List.of(
                "[\"data\",{\"tag\":\"drop-table\",\"id\":{\"schema\":\"s\",\"name\":\"t\"}}]",
                "[\"data\",{\"tag\":\"backfill-completed\",\"relation\":{\"schema\":\"s\",\"name\":\"t\",\"rowKey\":{\"columns\":[]}},\"columns\":[],\"watermark\":\"w\"}]")) {
            ChangeStreamMessage m = CODEC.decodeChangeStreamMessage(json);
            assertEquals(ChangeKind.SCHEMA, m.kind());
            assertTrue(((ChangeStreamMessage.DataMessage) m).change().isSchemaChange());
            assertFalse(((ChangeStreamMessage.DataMessage) m).change().isDataChange());
        }
        ChangeStreamMessage backfill = CODEC.decodeChangeStreamMessage(
                "[\"data\",{\"tag\":\"backfill\",\"relation\":{\"schema\":\"s\",\"name\":\"t\",\"rowKey\":{\"columns\":[]}},\"columns\":[],\"watermark\":\"w\",\"rowValues\":[]}]");
        assertEquals(ChangeKind.DATA, backfill.kind());
        for (String json : List.of("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"w\"}]",
                "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"w\"}]", "[\"rollback\",{\"tag\":\"rollback\"}]",
                "[\"status\",{},{\"watermark\":\"w\"}]", "[\"control\",{\"tag\":\"reset-required\"}]")) {
            assertEquals(ChangeKind.NONE, CODEC.decodeChangeStreamMessage(json).kind(), json);
        }
        assertFalse(new Begin(null, null, Passthrough.NONE).isDataChange());
        assertFalse(new Begin(null, null, Passthrough.NONE).isSchemaChange());
    }

    @Test
    void upstreamAckDistinguishesCommitFromStatus() {
        ChangeSourceUpstream commit = CODEC.decodeChangeSourceUpstream(
                "[\"status\",{\"tag\":\"commit\",\"flags\":0},{\"watermark\":\"w\"}]");
        assertInstanceOf(Commit.class, commit.body());
        ChangeSourceUpstream status = CODEC.decodeChangeSourceUpstream("[\"status\",{\"ack\":true},{\"watermark\":\"w\"}]");
        assertInstanceOf(DownstreamStatus.class, status.body());
        assertEquals("[\"status\",{\"tag\":\"commit\"},{\"watermark\":\"4e672g\"}]",
                CODEC.encode(new ChangeSourceUpstream(new Commit(Passthrough.NONE), "4e672g")));
    }

    @Test
    void frameKeepsMessageTextVerbatim() {
        // non-canonical spacing inside msg is preserved by decodeFrame (never re-serialized)
        String msg = "[\"error\", {\"type\":2}]";
        Frame f = CODEC.decodeFrame("{\"msg\":" + msg + ",\"id\":3}");
        assertEquals(3, f.id());
        assertEquals(msg, f.msg());
        assertEquals("{\"id\":3,\"msg\":" + msg + "}", CODEC.encode(f));
        Downstream d = CODEC.decodeDownstream(f.msg());
        assertEquals(new Downstream.ErrorMessage(new SubscriptionError(ErrorType.WATERMARK_TOO_OLD, null)), d);
    }

    @Test
    void valuesFollowBigIntJsonNumberRules() {
        @SuppressWarnings("unchecked")
        List<Object> v = (List<Object>) CODEC.decodeValue(
                "[9007199254740991,9007199254740992,-9007199254740992,1.0,1e3,1e400,-0,18446744073709551615]");
        assertEquals(9007199254740991L, v.get(0));
        assertEquals(new BigInteger("9007199254740992"), v.get(1));
        assertEquals(new BigInteger("-9007199254740992"), v.get(2));
        assertEquals(1.0, v.get(3));
        assertEquals(1000.0, v.get(4));
        assertEquals(Double.POSITIVE_INFINITY, v.get(5));
        assertEquals(0L, v.get(6));
        assertEquals(new BigInteger("18446744073709551615"), v.get(7));
        assertEquals("[9007199254740991,9007199254740992,-9007199254740992,1,1000,null,0,18446744073709551615]",
                CODEC.encodeValue(v));
        assertThrows(UnsupportedOperationException.class, () -> v.add(1));
    }

    @Test
    void objectsComeOutInJavaScriptPropertyOrder() {
        // Array-index keys (0 .. 2^32-2, canonical decimal) first and ascending, then the others in
        // order: BigIntJSON.stringify(BigIntJSON.parse(text)) with @rocicorp/zero 1.8.0 on Node 22.
        String in = "[\"data\",{\"tag\":\"insert\",\"relation\":{\"tag\":\"relation\",\"relationOid\":16392,"
                + "\"schema\":\"public\",\"name\":\"numbered\",\"rowKey\":{\"columns\":[\"1\"],\"type\":\"default\"},"
                + "\"keyColumns\":[\"1\"],\"replicaIdentity\":\"default\",\"5\":\"x\"},\"new\":{\"id\":\"r\",\"2\":\"two\","
                + "\"10\":\"ten\",\"1\":1,\"01\":\"lead0\",\"-1\":\"neg\",\"4294967294\":\"maxidx\",\"4294967295\":\"big\","
                + "\"1.5\":\"dec\",\"0\":null}}]";
        String node = "[\"data\",{\"tag\":\"insert\",\"relation\":{\"5\":\"x\",\"tag\":\"relation\",\"relationOid\":16392,"
                + "\"schema\":\"public\",\"name\":\"numbered\",\"rowKey\":{\"columns\":[\"1\"],\"type\":\"default\"},"
                + "\"keyColumns\":[\"1\"],\"replicaIdentity\":\"default\"},\"new\":{\"0\":null,\"1\":1,\"2\":\"two\","
                + "\"10\":\"ten\",\"4294967294\":\"maxidx\",\"id\":\"r\",\"01\":\"lead0\",\"-1\":\"neg\","
                + "\"4294967295\":\"big\",\"1.5\":\"dec\"}}]";
        assertEquals(node, CODEC.encode(CODEC.decodeChangeStreamMessage(in)));
        assertEquals(node, CODEC.encode(CODEC.decodeChangeStreamMessage(node)));

        // also for records the model types (index columns: upstream loses the order, faithfully)
        assertEquals("[\"data\",{\"tag\":\"create-index\",\"spec\":{\"schema\":\"public\",\"tableName\":\"numbered\","
                        + "\"name\":\"numbered_idx\",\"unique\":false,\"columns\":{\"1\":\"ASC\",\"2\":\"DESC\",\"b\":\"ASC\"}}}]",
                CODEC.encode(CODEC.decodeChangeStreamMessage("[\"data\",{\"tag\":\"create-index\",\"spec\":{\"schema\":\"public\","
                        + "\"tableName\":\"numbered\",\"name\":\"numbered_idx\",\"unique\":false,"
                        + "\"columns\":{\"b\":\"ASC\",\"2\":\"DESC\",\"1\":\"ASC\"}}}]")));

        // and for rows built in code, e.g. by the Postgres source in column order
        Insert insert = new Insert(pgRelation(), ordered("id", "x", "1", 1L, "b", 2L, "0", 0L), Passthrough.NONE);
        assertTrue(CODEC.encode(new ChangeStreamMessage.DataMessage(insert))
                .endsWith("\"new\":{\"0\":0,\"1\":1,\"id\":\"x\",\"b\":2}}]"));
    }

    @org.junit.jupiter.api.Test
    void canonicalAcksAreReadFromTheirBytesAndEverythingElseIsLeftToTheParser() {
        ProtocolCodec codec = new ProtocolCodec();
        for (String ack : new String[] {"{\"ack\":0}", "{\"ack\":7}", "{\"ack\":123456789012345}"}) {
            org.junit.jupiter.api.Assertions.assertEquals(codec.decodeAck(ack).id(), codec.canonicalAckId(
                    java.nio.ByteBuffer.wrap(ack.getBytes(java.nio.charset.StandardCharsets.UTF_8))), ack);
        }
        java.nio.ByteBuffer slice = java.nio.ByteBuffer.wrap("xx{\"ack\":42}yy".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        slice.position(2).limit(12);
        org.junit.jupiter.api.Assertions.assertEquals(42, codec.canonicalAckId(slice), "from position to limit");
        org.junit.jupiter.api.Assertions.assertEquals(2, slice.position(), "the buffer is not moved");
        for (String other : new String[] {"{\"ack\": 1}", "{\"ack\":01}", "{\"ack\":-1}", "{\"ack\":1.0}",
                "{\"ack\":1234567890123456}", "{\"ack\":1,\"x\":2}", "{\"Ack\":1}", "{\"ack\":}", "", "{\"ack\":\u00e91}"}) {
            org.junit.jupiter.api.Assertions.assertEquals(-1, codec.canonicalAckId(
                    java.nio.ByteBuffer.wrap(other.getBytes(java.nio.charset.StandardCharsets.UTF_8))), other);
        }
    }
}

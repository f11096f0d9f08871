package org.zrm.changesource.pg.internal.replication;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.ReplicaIdentity;

/** pgoutput v1 decoding of hand-built messages, including every malformed case. */
class PgOutputParserTest {

    private final PgOutputParser parser = new PgOutputParser(ColumnParsers.TEXT);

    /** Big-endian message builder. */
    static final class B {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        B u8(int v) {
            out.write(v);
            return this;
        }

        B i16(int v) {
            return u8(v >>> 8).u8(v);
        }

        B i32(long v) {
            return i16((int) (v >>> 16) & 0xFFFF).i16((int) v & 0xFFFF);
        }

        B i64(long v) {
            return i32(v >>> 32).i32(v);
        }

        B str(String s) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            return u8(0);
        }

        B text(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u8('t').i32(b.length);
            out.writeBytes(b);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    private PgOutputMessage parse(B b) {
        byte[] bytes = b.bytes();
        return parser.parse(bytes, 0, bytes.length);
    }

    /** Relation 0xFFFFFFF0 (an OID ≥ 2^31) "s"."t" (a key, b, c). */
    private PgOutputMessage.RelationInfo relation(char identity) {
        return ((PgOutputMessage.Relation) parse(new B().u8('R').i32(0xFFFFFFF0L).str("s").str("t").u8(identity).i16(3)
                .u8(1).str("a").i32(25).i32(-1)
                .u8(0).str("b").i32(25).i32(-1)
                .u8(0).str("c").i32(25).i32(-1))).relation();
    }

    @Test
    void beginCommitAndUnsignedValues() {
        PgOutputMessage.Begin b = (PgOutputMessage.Begin) parse(new B().u8('B').i64(0x16B374D848L).i64(0).i32(0xFFFFFFFEL));
        assertEquals(0x16B374D848L, b.commitLsn());
        assertEquals(946_684_800_000_000L, b.commitTimeMicros(), "µs since the Unix epoch");
        assertEquals(4294967294L, b.xid(), "xid read unsigned (QUIRK: upstream reads it signed)");
        PgOutputMessage.Commit c = (PgOutputMessage.Commit) parse(new B().u8('C').u8(0).i64(5).i64(9).i64(1_000_000));
        assertEquals(new PgOutputMessage.Commit(0, 5, 9, 946_684_801_000_000L), c);
        PgOutputMessage.RelationInfo r = relation('d');
        assertEquals(0xFFFFFFF0L, r.oid(), "OID read unsigned (QUIRK: upstream reads it signed)");
        assertEquals(4294967280L, r.protocolRelation().extra().get("relationOid"));
        assertEquals(java.util.List.of("a"), r.keyColumns());
        assertEquals(ReplicaIdentity.DEFAULT, r.identity());
    }

    @Test
    void tuplesNullsToastAndKeys() {
        relation('f');
        PgOutputMessage.Insert i = (PgOutputMessage.Insert) parse(new B().u8('I').i32(0xFFFFFFF0L).u8('N').i16(3)
                .text("1").u8('n').u8('u'));
        assertEquals(2, i.newRow().size());
        assertNull(i.newRow().get("b"));
        assertTrue(i.newRow().containsKey("b"), "SQL NULL is a null value");
        assertFalse(i.newRow().containsKey("c"), "unchanged TOAST without an old row is absent");

        PgOutputMessage.Update u = (PgOutputMessage.Update) parse(new B().u8('U').i32(0xFFFFFFF0L)
                .u8('O').i16(3).text("1").text("x").text("big")
                .u8('N').i16(3).text("1").text("y").u8('u'));
        assertEquals(Map.of("a", "1", "b", "y", "c", "big"), u.newRow(), "old row is the TOAST fallback");
        assertEquals("x", u.old().get("b"));
        assertNull(u.key());

        PgOutputMessage.Update k = (PgOutputMessage.Update) parse(new B().u8('U').i32(0xFFFFFFF0L)
                .u8('K').i16(3).text("1").u8('n').u8('n')
                .u8('N').i16(3).text("2").text("y").u8('u'));
        assertEquals(Map.of("a", "1"), k.key(), "key tuple keeps key columns only");
        assertFalse(k.newRow().containsKey("c"));

        PgOutputMessage.Delete d = (PgOutputMessage.Delete) parse(new B().u8('D').i32(0xFFFFFFF0L)
                .u8('K').i16(3).u8('n').u8('n').u8('n'));
        assertEquals(Map.of(), d.key(), "a NULL key column is absent, not null");
    }

    @Test
    void truncateMessageOriginType() {
        relation('d');
        PgOutputMessage.Truncate t = (PgOutputMessage.Truncate) parse(new B().u8('T').i32(1).u8(3).i32(0xFFFFFFF0L));
        assertTrue(t.cascade() && t.restartIdentity());
        assertEquals(1, t.relations().size());
        PgOutputMessage.Message m = (PgOutputMessage.Message) parse(new B().u8('M').u8(1).i64(7).str("foo/bar")
                .i32(3).u8('b').u8('a').u8('z'));
        assertTrue(m.transactional());
        assertEquals("foo/bar", m.prefix());
        assertArrayEquals("baz".getBytes(StandardCharsets.UTF_8), m.content());
        assertEquals(new PgOutputMessage.Origin(8, "o"), parse(new B().u8('O').i64(8).str("o")));
        assertEquals(new PgOutputMessage.Type(16999, "public", "mood"), parse(new B().u8('Y').i32(16999).str("public")
                .str("mood")));
    }

    @Test
    void malformedMessagesAreClearErrors() {
        assertMessage("unknown pgoutput message 'Z'", new B().u8('Z'));
        assertMessage("unknown pgoutput message '0x00'", new B().u8(0));
        assertMessage("truncated pgoutput message", new B().u8('B').i32(1));
        assertMessage("missing relation 42", new B().u8('I').i32(42).u8('N').i16(0));
        assertMessage("unknown replica identity 'x'", new B().u8('R').i32(1).str("s").str("t").u8('x').i16(0));
        assertMessage("unterminated string", new B().u8('O').i64(1).u8('a'));
        relation('d');
        assertMessage("unknown attribute kind 'q'", new B().u8('I').i32(0xFFFFFFF0L).u8('N').i16(1).u8('q'));
        assertMessage("binary tuple value for column a (binary mode is not requested)",
                new B().u8('I').i32(0xFFFFFFF0L).u8('N').i16(1).u8('b').i32(0));
        assertMessage("expected 'N' but got 'X'", new B().u8('I').i32(0xFFFFFFF0L).u8('X'));
        assertMessage("unknown submessage key 'Q'", new B().u8('U').i32(0xFFFFFFF0L).u8('Q'));
        assertMessage("unknown submessage key 'N'", new B().u8('D').i32(0xFFFFFFF0L).u8('N'));
        assertMessage("value length 100 of column a exceeds the message",
                new B().u8('I').i32(0xFFFFFFF0L).u8('N').i16(1).u8('t').i32(100));
        assertMessage("tuple of s.t has 4 columns, relation has 3", new B().u8('I').i32(0xFFFFFFF0L).u8('N').i16(4));
        assertMessage("logical message content length 9 exceeds the message",
                new B().u8('M').u8(0).i64(1).str("p").i32(9));
        // The relation cache is intact after all those failures.
        assertEquals(Map.of("a", "1"), ((PgOutputMessage.Insert) parse(new B().u8('I').i32(0xFFFFFFF0L).u8('N').i16(1)
                .text("1"))).newRow());
    }

    private void assertMessage(String expected, B b) {
        PgOutputFormatException e = assertThrows(PgOutputFormatException.class, () -> parse(b));
        assertEquals(expected, e.getMessage());
    }

    @Test
    void standbyStatusUpdateLayout() {
        byte[] b = ReplicationStream.standbyStatusUpdate(0x16B374D848L, 946_684_800_001L);
        assertEquals(34, b.length);
        assertEquals('r', b[0]);
        assertEquals(0x16B374D848L, ReplicationStream.readLong(b, 1));
        assertEquals(0x16B374D848L, ReplicationStream.readLong(b, 9));
        assertEquals(0x16B374D848L, ReplicationStream.readLong(b, 17));
        assertEquals(1000L, ReplicationStream.readLong(b, 25), "µs since 2000-01-01");
        assertEquals(0, b[33], "no reply requested");
    }

    @Test
    void startCommandQuotesSlotAndPublications() {
        StreamSettings s = StreamSettings.defaults("zero_0_a", java.util.List.of("Pub", "_zero_metadata_0"));
        assertEquals("START_REPLICATION SLOT \"zero_0_a\" LOGICAL 16/B374D849 (proto_version '1', publication_names"
                + " '\"Pub\",\"_zero_metadata_0\"', messages 'true')", s.startCommand(0x16B374D849L));
        assertThrows(IllegalArgumentException.class, () -> StreamSettings.defaults("s", java.util.List.of("a'b")));
        assertThrows(IllegalArgumentException.class, () -> StreamSettings.defaults("s", java.util.List.of()));
    }
}

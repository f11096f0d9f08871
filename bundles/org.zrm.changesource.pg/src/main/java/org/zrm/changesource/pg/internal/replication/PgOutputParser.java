package org.zrm.changesource.pg.internal.replication;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage.Column;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage.RelationInfo;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.RowKey;

/**
 * Parses pgoutput protocol version 1 messages (the payload of XLogData) into
 * {@link PgOutputMessage}s. Keeps the relation cache (by OID) that tuple messages refer to, so one
 * parser belongs to one replication stream and one thread.
 *
 * <p>Decisions on upstream quirks: OIDs and xids are read as unsigned 32-bit numbers (upstream
 * reads them signed, which would turn OIDs ≥ 2^31 negative and disagree with the published-schema
 * JSON); binary ({@code b}) tuple values, which Postgres never sends because binary mode is not
 * requested, are rejected instead of being passed on as raw bytes.
 */
public final class PgOutputParser {

    /** Microseconds between the Unix epoch and the Postgres epoch (2000-01-01). */
    static final long PG_EPOCH_MICROS = 946_684_800_000_000L;

    private final ColumnParsers parsers;
    private final Map<Long, RelationInfo> relations = new HashMap<>();
    private final Map<Long, PgOutputMessage.Type> types = new HashMap<>();
    // Last value per date/time column of each relation (see ValueMemo); replaced with the relation.
    private final Map<Long, ValueMemo[]> memos = new HashMap<>();
    private RelationInfo memoRelation;
    private ValueMemo[] memoColumns;

    private byte[] buf;
    private int pos;
    private int end;

    public PgOutputParser(ColumnParsers parsers) {
        this.parsers = Objects.requireNonNull(parsers, "parsers");
    }

    /**
     * Parses one message.
     *
     * @param data the bytes holding the message
     * @param offset where the message starts (the tag byte)
     * @param length the message length
     * @throws PgOutputFormatException if the message is malformed, unknown or refers to an unknown
     *     relation; the message and the parser's caches stay consistent (a relation is cached only
     *     once fully parsed)
     * @throws org.zrm.changesource.pg.internal.types.PgValueFormatException if a value cannot be
     *     converted
     */
    public PgOutputMessage parse(byte[] data, int offset, int length) {
        buf = data;
        pos = offset;
        end = offset + length;
        try {
            int tag = u8();
            PgOutputMessage msg = switch (tag) {
                case 'B' -> new PgOutputMessage.Begin(lsn(), time(), u32());
                case 'C' -> new PgOutputMessage.Commit(u8(), lsn(), lsn(), time());
                case 'O' -> new PgOutputMessage.Origin(lsn(), string());
                case 'Y' -> type();
                case 'R' -> new PgOutputMessage.Relation(relation());
                case 'I' -> insert();
                case 'U' -> update();
                case 'D' -> delete();
                case 'T' -> truncate();
                case 'M' -> message();
                default -> throw new PgOutputFormatException("unknown pgoutput message '" + printable(tag) + "'");
            };
            return msg;
        } catch (ArrayIndexOutOfBoundsException e) {
            throw new PgOutputFormatException("truncated pgoutput message", e);
        } finally {
            buf = null;
        }
    }

    /** @return the relation last announced for {@code oid}, or {@code null} */
    public RelationInfo relation(long oid) {
        return relations.get(oid);
    }

    private PgOutputMessage.Type type() {
        PgOutputMessage.Type t = new PgOutputMessage.Type(u32(), string(), string());
        types.put(t.typeOid(), t);
        return t;
    }

    private RelationInfo relation() {
        long oid = u32();
        String schema = string();
        String name = string();
        int ident = u8();
        ReplicaIdentity identity = switch (ident) {
            case 'd' -> ReplicaIdentity.DEFAULT;
            case 'n' -> ReplicaIdentity.NOTHING;
            case 'f' -> ReplicaIdentity.FULL;
            case 'i' -> ReplicaIdentity.INDEX;
            default -> throw new PgOutputFormatException("unknown replica identity '" + printable(ident) + "'");
        };
        int ncols = u16();
        List<Column> columns = new ArrayList<>(ncols);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < ncols; i++) {
            int flags = u8();
            String col = string();
            long typeOid = u32();
            int typeMod = i32();
            columns.add(new Column(col, flags, typeOid, typeMod, parsers.forType(typeOid)));
            if ((flags & 1) != 0) {
                keys.add(col);
            }
        }
        List<String> keyColumns = List.copyOf(keys);
        // Built once here rather than per row: every change of the table carries this object.
        org.zrm.protocol.Relation wire = new org.zrm.protocol.Relation(schema, name,
                new RowKey(keyColumns, identity, Passthrough.NONE), keyColumns, identity,
                Passthrough.of(relationExtra(oid)));
        RelationInfo info = new RelationInfo(oid, schema, name, identity, List.copyOf(columns), keyColumns, wire);
        relations.put(oid, info);
        ValueMemo[] memo = new ValueMemo[info.columns().size()];
        for (int i = 0; i < memo.length; i++) {
            if (ValueMemo.worthwhile(info.columns().get(i).typeOid())) {
                memo[i] = new ValueMemo();
            }
        }
        memos.put(oid, memo);
        memoRelation = null;
        return info;
    }

    private static Map<String, Object> relationExtra(long oid) {
        LinkedHashMap<String, Object> m = new LinkedHashMap<>(4);
        m.put("tag", "relation");
        m.put("relationOid", oid);
        return m;
    }

    private RelationInfo cachedRelation() {
        long oid = u32();
        RelationInfo r = relations.get(oid);
        if (r == null) {
            throw new PgOutputFormatException("missing relation " + oid);
        }
        return r;
    }

    private PgOutputMessage insert() {
        RelationInfo r = cachedRelation();
        expect('N');
        return new PgOutputMessage.Insert(r, tuple(r, null));
    }

    private PgOutputMessage update() {
        RelationInfo r = cachedRelation();
        int sub = u8();
        switch (sub) {
            case 'K': {
                Map<String, Object> key = keyTuple(r);
                expect('N');
                return new PgOutputMessage.Update(r, key, null, tuple(r, null));
            }
            case 'O': {
                Map<String, Object> old = tuple(r, null);
                expect('N');
                return new PgOutputMessage.Update(r, null, old, tuple(r, old));
            }
            case 'N':
                return new PgOutputMessage.Update(r, null, null, tuple(r, null));
            default:
                throw new PgOutputFormatException("unknown submessage key '" + printable(sub) + "'");
        }
    }

    private PgOutputMessage delete() {
        RelationInfo r = cachedRelation();
        int sub = u8();
        return switch (sub) {
            case 'K' -> new PgOutputMessage.Delete(r, keyTuple(r), null);
            case 'O' -> new PgOutputMessage.Delete(r, null, tuple(r, null));
            default -> throw new PgOutputFormatException("unknown submessage key '" + printable(sub) + "'");
        };
    }

    private PgOutputMessage truncate() {
        int nrels = i32();
        int options = u8();
        if (nrels < 0) {
            throw new PgOutputFormatException("negative relation count in truncate");
        }
        List<RelationInfo> rels = new ArrayList<>(Math.min(nrels, 1024));
        for (int i = 0; i < nrels; i++) {
            rels.add(cachedRelation());
        }
        return new PgOutputMessage.Truncate((options & 1) != 0, (options & 2) != 0, List.copyOf(rels));
    }

    private PgOutputMessage message() {
        int flags = u8();
        long lsn = lsn();
        String prefix = string();
        int len = i32();
        if (len < 0 || len > end - pos) {
            throw new PgOutputFormatException("logical message content length " + len + " exceeds the message");
        }
        byte[] content = Arrays.copyOfRange(buf, pos, pos + len);
        pos += len;
        return new PgOutputMessage.Message(flags, lsn, prefix, content);
    }

    /**
     * A key tuple ({@code K}) carries key columns and NULL for every other column; only key columns
     * are kept, and a key column without a value is absent (as upstream's {@code readKeyTuple}).
     */
    private Map<String, Object> keyTuple(RelationInfo r) {
        Map<String, Object> full = tuple(r, null);
        LinkedHashMap<String, Object> key = new LinkedHashMap<>(r.keyColumns().size() * 2);
        for (String k : r.keyColumns()) {
            Object v = full.get(k);
            if (v != null) {
                key.put(k, v);
            }
        }
        return Collections.unmodifiableMap(key);
    }

    private Map<String, Object> tuple(RelationInfo r, Map<String, Object> toastFallback) {
        int n = u16();
        List<Column> columns = r.columns();
        if (n > columns.size()) {
            throw new PgOutputFormatException("tuple of " + r.schema() + "." + r.name() + " has " + n
                    + " columns, relation has " + columns.size());
        }
        if (memoRelation != r) {
            memoColumns = memos.get(r.oid());
            memoRelation = r;
        }
        ValueMemo[] memo = memoColumns;
        LinkedHashMap<String, Object> row = new LinkedHashMap<>(n * 4 / 3 + 1);
        for (int i = 0; i < n; i++) {
            Column c = columns.get(i);
            int kind = u8();
            switch (kind) {
                case 't': {
                    int len = i32();
                    if (len < 0 || len > end - pos) {
                        throw new PgOutputFormatException("value length " + len + " of column " + c.name()
                                + " exceeds the message");
                    }
                    ValueMemo m = memo != null && i < memo.length ? memo[i] : null;
                    Object value;
                    if (m != null && m.matches(buf, pos, len)) {
                        value = m.value;
                    } else {
                        value = c.parser().parse(new String(buf, pos, len, StandardCharsets.UTF_8));
                        if (m != null) {
                            m.remember(buf, pos, len, value);
                        }
                    }
                    pos += len;
                    row.put(c.name(), value);
                    break;
                }
                case 'n':
                    row.put(c.name(), null);
                    break;
                case 'u':
                    // Unchanged TOAST value: take it from the old row if there is one, else leave the
                    // column absent so that the replica keeps its current value.
                    if (toastFallback != null && toastFallback.containsKey(c.name())) {
                        row.put(c.name(), toastFallback.get(c.name()));
                    }
                    break;
                case 'b':
                    throw new PgOutputFormatException("binary tuple value for column " + c.name()
                            + " (binary mode is not requested)");
                default:
                    throw new PgOutputFormatException("unknown attribute kind '" + printable(kind) + "'");
            }
        }
        // Unmodifiable wrapper: the protocol records accept it without copying again.
        return Collections.unmodifiableMap(row);
    }

    private void expect(char c) {
        int b = u8();
        if (b != c) {
            throw new PgOutputFormatException("expected '" + c + "' but got '" + printable(b) + "'");
        }
    }

    private int u8() {
        if (pos >= end) {
            throw new ArrayIndexOutOfBoundsException(pos);
        }
        return buf[pos++] & 0xFF;
    }

    private int u16() {
        return (u8() << 8) | u8();
    }

    private int i32() {
        check(4);
        int v = ((buf[pos] & 0xFF) << 24) | ((buf[pos + 1] & 0xFF) << 16) | ((buf[pos + 2] & 0xFF) << 8)
                | (buf[pos + 3] & 0xFF);
        pos += 4;
        return v;
    }

    private long u32() {
        return i32() & 0xFFFF_FFFFL;
    }

    private long i64() {
        check(8);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (buf[pos + i] & 0xFF);
        }
        pos += 8;
        return v;
    }

    private long lsn() {
        return i64();
    }

    private long time() {
        return i64() + PG_EPOCH_MICROS;
    }

    private String string() {
        int start = pos;
        while (true) {
            if (pos >= end) {
                throw new PgOutputFormatException("unterminated string");
            }
            if (buf[pos] == 0) {
                break;
            }
            pos++;
        }
        String s = new String(buf, start, pos - start, StandardCharsets.UTF_8);
        pos++;
        return s;
    }

    private void check(int n) {
        if (end - pos < n) {
            throw new ArrayIndexOutOfBoundsException(pos + n);
        }
    }

    private static String printable(int b) {
        return b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("0x%02x", b);
    }

    /**
     * The last text value of one date/time column and its converted value. Converting a timestamp
     * is the most expensive conversion of a typical row, and in bulk transactions a column filled
     * by a default such as {@code now()} repeats the same text for every row; a byte comparison
     * then replaces the conversion. Converted values are immutable, so sharing one is safe. Other
     * types are cheap to convert or rarely repeat, and are not memoised.
     */
    private static final class ValueMemo {
        private byte[] raw = new byte[40];
        private int length = -1;
        private Object value;

        static boolean worthwhile(long typeOid) {
            return typeOid == org.zrm.changesource.pg.internal.types.PgTypeOids.TIMESTAMPTZ
                    || typeOid == org.zrm.changesource.pg.internal.types.PgTypeOids.TIMESTAMP
                    || typeOid == org.zrm.changesource.pg.internal.types.PgTypeOids.DATE
                    || typeOid == org.zrm.changesource.pg.internal.types.PgTypeOids.TIME
                    || typeOid == org.zrm.changesource.pg.internal.types.PgTypeOids.TIMETZ;
        }

        boolean matches(byte[] b, int off, int len) {
            return len == length && Arrays.equals(b, off, off + len, raw, 0, len);
        }

        void remember(byte[] b, int off, int len, Object v) {
            if (len > raw.length) {
                if (len > 256) {
                    // Not a date/time text; keep nothing rather than a large copy.
                    length = -1;
                    value = null;
                    return;
                }
                raw = new byte[len];
            }
            System.arraycopy(b, off, raw, 0, len);
            length = len;
            value = v;
        }
    }
}

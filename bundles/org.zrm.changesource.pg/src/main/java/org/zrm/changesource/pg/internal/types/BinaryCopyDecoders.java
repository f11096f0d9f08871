package org.zrm.changesource.pg.internal.types;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Decoders for {@code COPY … TO STDOUT WITH (FORMAT binary)} fields (spec §6.2, upstream
 * {@code pg-copy-binary.ts}), producing SQLite replica values directly. Columns without a decoder
 * are selected as {@code "col"::text} and decoded with {@link #TEXT_CAST}.
 *
 * <p>DECISION (QUIRK "float4 binary vs text"): reproduced — binary float4 is widened to double
 * ({@code 0.1} → {@code 0.10000000149011612}) while the stream sends the shortest text form; this
 * keeps ZRM's replica identical to zero-cache's. DECISION (QUIRK "oid binary → text"): reproduced —
 * {@code oid} columns are copied as text, the stream sends numbers. DECISION (QUIRK "unknown binary
 * array element types decoded as UTF-8"): NOT reproduced — upstream stores garbage (the UTF-8 of
 * binary bytes) for e.g. {@code interval[]}/{@code inet[]}; arrays whose element type has no binary
 * decoder are selected as {@code "col"::text} and parsed with the text array parser instead, see
 * {@link #hasBinaryDecoder}.
 */
public final class BinaryCopyDecoders {

    private static final long PG_EPOCH_UNIX_MILLIS = 946_684_800_000L;
    private static final long PG_EPOCH_UNIX_DAYS = 10_957L;
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private static final Set<Integer> KNOWN = Set.of(PgTypeOids.BOOL, PgTypeOids.INT2, PgTypeOids.INT4,
            PgTypeOids.INT8, PgTypeOids.FLOAT4, PgTypeOids.FLOAT8, PgTypeOids.TEXT, PgTypeOids.VARCHAR,
            PgTypeOids.BPCHAR, PgTypeOids.CHAR, PgTypeOids.UUID, PgTypeOids.BYTEA, PgTypeOids.JSON,
            PgTypeOids.JSONB, PgTypeOids.TIMESTAMP, PgTypeOids.TIMESTAMPTZ, PgTypeOids.DATE, PgTypeOids.TIME,
            PgTypeOids.TIMETZ, PgTypeOids.NUMERIC);

    // Element types whose binary form we decode inside arrays; bytea is excluded because upstream
    // has no element decoder for it either (its text path yields Buffer JSON).
    private static final Set<Integer> KNOWN_ELEMENTS = Set.of(PgTypeOids.BOOL, PgTypeOids.INT2, PgTypeOids.INT4,
            PgTypeOids.INT8, PgTypeOids.FLOAT4, PgTypeOids.FLOAT8, PgTypeOids.TEXT, PgTypeOids.VARCHAR,
            PgTypeOids.BPCHAR, PgTypeOids.CHAR, PgTypeOids.UUID, PgTypeOids.JSON, PgTypeOids.JSONB,
            PgTypeOids.TIMESTAMP, PgTypeOids.TIMESTAMPTZ, PgTypeOids.DATE, PgTypeOids.TIME, PgTypeOids.TIMETZ,
            PgTypeOids.NUMERIC);

    /** For columns selected as {@code ::text}. */
    public static final BinaryValueDecoder TEXT_CAST = (b, o, l) -> new String(b, o, l, StandardCharsets.UTF_8);

    private BinaryCopyDecoders() {}

    /**
     * Whether the column can be copied in its binary form. Arrays qualify when their element type
     * is decoded natively or is an enum (sent as UTF-8 labels).
     *
     * @param typeOid the column type
     * @param typeClass the column's type class
     * @param elemTypeOid for arrays the element type OID, else 0
     * @param elemTypeClass for arrays the element type class, else {@code null}
     */
    public static boolean hasBinaryDecoder(int typeOid, PgTypeClass typeClass, int elemTypeOid,
            PgTypeClass elemTypeClass) {
        if (elemTypeClass != null) {
            return elemTypeClass == PgTypeClass.ENUM || KNOWN_ELEMENTS.contains(elemTypeOid);
        }
        if (typeClass == PgTypeClass.ENUM) {
            return true;
        }
        return KNOWN.contains(typeOid);
    }

    /** The decoder for a column for which {@link #hasBinaryDecoder} is true. */
    public static BinaryValueDecoder forColumn(int typeOid, PgTypeClass typeClass, int elemTypeOid,
            PgTypeClass elemTypeClass) {
        if (elemTypeClass != null) {
            return (b, o, l) -> decodeArray(b, o, l);
        }
        if (typeClass == PgTypeClass.ENUM) {
            return TEXT_CAST;
        }
        switch (typeOid) {
            case PgTypeOids.BOOL:
                return (b, o, l) -> b[o] != 0 ? 1L : 0L;
            case PgTypeOids.INT2:
                return (b, o, l) -> (long) int16(b, o);
            case PgTypeOids.INT4:
                return (b, o, l) -> (long) int32(b, o);
            case PgTypeOids.INT8:
                return (b, o, l) -> int64(b, o);
            case PgTypeOids.FLOAT4:
                return (b, o, l) -> (double) Float.intBitsToFloat(int32(b, o));
            case PgTypeOids.FLOAT8:
                return (b, o, l) -> Double.longBitsToDouble(int64(b, o));
            case PgTypeOids.TEXT:
            case PgTypeOids.VARCHAR:
            case PgTypeOids.BPCHAR:
            case PgTypeOids.CHAR:
            case PgTypeOids.JSON:
                return TEXT_CAST;
            case PgTypeOids.UUID:
                return (b, o, l) -> uuid(b, o);
            case PgTypeOids.BYTEA:
                return (b, o, l) -> java.util.Arrays.copyOfRange(b, o, o + l);
            case PgTypeOids.JSONB:
                return (b, o, l) -> new String(b, o + 1, l - 1, StandardCharsets.UTF_8);
            case PgTypeOids.TIMESTAMP:
            case PgTypeOids.TIMESTAMPTZ:
                return (b, o, l) -> timestamp(b, o);
            case PgTypeOids.DATE:
                return (b, o, l) -> date(b, o);
            case PgTypeOids.TIME:
                return (b, o, l) -> time(b, o);
            case PgTypeOids.TIMETZ:
                return (b, o, l) -> timetz(b, o);
            case PgTypeOids.NUMERIC:
                return (b, o, l) -> numeric(b, o);
            default:
                throw new IllegalArgumentException("No binary decoder for type OID " + typeOid);
        }
    }

    static int int16(byte[] b, int o) {
        return (short) ((b[o] & 0xff) << 8 | (b[o + 1] & 0xff));
    }

    static int uint16(byte[] b, int o) {
        return (b[o] & 0xff) << 8 | (b[o + 1] & 0xff);
    }

    static int int32(byte[] b, int o) {
        return (b[o] & 0xff) << 24 | (b[o + 1] & 0xff) << 16 | (b[o + 2] & 0xff) << 8 | (b[o + 3] & 0xff);
    }

    static long int64(byte[] b, int o) {
        return ((long) int32(b, o) << 32) | (int32(b, o + 4) & 0xffffffffL);
    }

    static String uuid(byte[] b, int o) {
        StringBuilder sb = new StringBuilder(36);
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                sb.append('-');
            }
            sb.append(Character.forDigit((b[o + i] >> 4) & 0xf, 16)).append(Character.forDigit(b[o + i] & 0xf, 16));
        }
        return sb.toString();
    }

    /** µs since 2000-01-01 → fractional ms since 1970, with upstream's two double roundings. */
    static double timestamp(byte[] b, int o) {
        long micros = int64(b, o);
        if (micros == Long.MAX_VALUE) {
            return Double.POSITIVE_INFINITY;
        }
        if (micros == Long.MIN_VALUE) {
            return Double.NEGATIVE_INFINITY;
        }
        return (double) micros / 1000 + PG_EPOCH_UNIX_MILLIS;
    }

    static double date(byte[] b, int o) {
        int days = int32(b, o);
        if (days == Integer.MAX_VALUE) {
            return Double.POSITIVE_INFINITY;
        }
        if (days == Integer.MIN_VALUE) {
            return Double.NEGATIVE_INFINITY;
        }
        return (double) ((days + PG_EPOCH_UNIX_DAYS) * PgTextValues.MS_PER_DAY);
    }

    static long time(byte[] b, int o) {
        return int64(b, o) / 1000; // truncation toward zero, as Math.trunc
    }

    static long timetz(byte[] b, int o) {
        long local = int64(b, o);
        long offsetSeconds = int32(b, o + 8);
        long ms = (local + offsetSeconds * 1_000_000L) / 1000;
        if (ms < 0 || ms >= PgTextValues.MS_PER_DAY) {
            ms = ((ms % PgTextValues.MS_PER_DAY) + PgTextValues.MS_PER_DAY) % PgTextValues.MS_PER_DAY;
        }
        return ms;
    }

    /** Base-10000 numeric → double exactly as upstream (≤3 digit groups: one division; else via text). */
    static double numeric(byte[] b, int o) {
        int ndigits = int16(b, o);
        int weight = int16(b, o + 2);
        int sign = uint16(b, o + 4);
        if (sign == 0xc000) {
            return Double.NaN;
        }
        if (sign == 0xd000) {
            return Double.POSITIVE_INFINITY;
        }
        if (sign == 0xf000) {
            return Double.NEGATIVE_INFINITY;
        }
        if (ndigits == 0) {
            return 0;
        }
        if (ndigits > 3) {
            int intGroups = weight + 1;
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < ndigits; i++) {
                int d = int16(b, o + 8 + i * 2);
                if (i == intGroups) {
                    if (sb.length() == 0) {
                        sb.append('0');
                    }
                    sb.append('.');
                }
                String ds = Integer.toString(d);
                sb.append(i == 0 ? ds : "0".repeat(4 - ds.length()) + ds);
            }
            if (intGroups > ndigits) {
                sb.append("0".repeat((intGroups - ndigits) * 4));
            }
            return Double.parseDouble((sign == 0x4000 ? "-" : "") + sb);
        }
        double intVal = 0;
        for (int i = 0; i < ndigits; i++) {
            intVal = intVal * 10000 + int16(b, o + 8 + i * 2);
        }
        int shift = ndigits - weight - 1;
        double result;
        if (shift > 0) {
            result = intVal / Math.pow(10000, shift);
        } else if (shift < 0) {
            result = intVal * Math.pow(10000, -shift);
        } else {
            result = intVal;
        }
        return sign == 0x4000 ? -result : result;
    }

    /** Binary array → JSON text (nested, NULL elements → null), as stored in the replica. */
    static String decodeArray(byte[] b, int off, int len) {
        int ndim = int32(b, off);
        int elemOid = int32(b, off + 8);
        if (ndim == 0) {
            return "[]";
        }
        int[] dims = new int[ndim];
        int p = off + 12;
        for (int d = 0; d < ndim; d++) {
            dims[d] = int32(b, p);
            p += 8;
        }
        int[] pos = {p};
        List<Object> result = readDimension(b, pos, dims, 0, elementDecoder(elemOid));
        return CODEC.encodeValue(result);
    }

    private static List<Object> readDimension(byte[] b, int[] pos, int[] dims, int dim, BinaryValueDecoder elem) {
        List<Object> out = new ArrayList<>(dims[dim]);
        for (int i = 0; i < dims[dim]; i++) {
            if (dim < dims.length - 1) {
                out.add(readDimension(b, pos, dims, dim + 1, elem));
            } else {
                int l = int32(b, pos[0]);
                pos[0] += 4;
                if (l == -1) {
                    out.add(null);
                } else {
                    out.add(elem.decode(b, pos[0], l));
                    pos[0] += l;
                }
            }
        }
        return out;
    }

    private static BinaryValueDecoder elementDecoder(int elemOid) {
        switch (elemOid) {
            case PgTypeOids.BOOL:
                return (b, o, l) -> b[o] != 0;
            case PgTypeOids.INT8:
                return (b, o, l) -> PgTextValues.exactInteger(int64(b, o));
            case PgTypeOids.JSON:
                return (b, o, l) -> CODEC.decodeValue(new String(b, o, l, StandardCharsets.UTF_8));
            case PgTypeOids.JSONB:
                return (b, o, l) -> CODEC.decodeValue(new String(b, o + 1, l - 1, StandardCharsets.UTF_8));
            default:
                return KNOWN_ELEMENTS.contains(elemOid) ? forColumn(elemOid, PgTypeClass.BASE, 0, null) : TEXT_CAST;
        }
    }

}

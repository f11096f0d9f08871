package org.zrm.replica;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Converts column values to the values stored in the replica (upstream {@code liteValue}):
 * booleans become 0/1, values of JSON and array columns become JSON text (a string in a JSON column
 * is kept as it is when the transaction's format is {@link JsonFormat#STRINGIFIED}, because it
 * already is JSON text), other lists and maps become JSON text, and {@code null} and
 * {@code byte[]} are kept.
 *
 * <p>Input values follow {@link org.zrm.protocol.JsonValues} (as decoded from a change message or
 * parsed from Postgres). Results are {@code null}, {@code byte[]} (BLOB), {@link String},
 * {@link Long}, {@link java.math.BigInteger} (integers beyond ±2^53, to be bound as a long) or
 * {@link Double}, or the input itself for any other type.
 */
public final class LiteValues {

    /** Immutable and thread-safe (see {@link ProtocolCodec}). */
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private LiteValues() {}

    /**
     * Converts one value.
     *
     * @param value the value; may be {@code null}
     * @param liteType the column's lite type string or upstream data type; it decides whether the
     *     column holds JSON (see {@link LiteTypes#zqlType})
     * @param format the transaction's JSON format
     * @return the value to store
     */
    public static Object liteValue(Object value, String liteType, JsonFormat format) {
        if (value == null || value instanceof byte[]) {
            return value;
        }
        if (LiteTypes.zqlType(liteType).orElse(null) == ZqlType.JSON) {
            if (format == JsonFormat.STRINGIFIED && value instanceof String) {
                return value;
            }
            return CODEC.encodeValue(value);
        }
        Object v = toLite(value);
        if (v instanceof List || v instanceof Map) {
            return CODEC.encodeValue(v);
        }
        return v;
    }

    private static Object toLite(Object value) {
        if (value instanceof Boolean b) {
            return b ? 1L : 0L;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object o : list) {
                out.add(toLite(o));
            }
            return out;
        }
        return value;
    }
}

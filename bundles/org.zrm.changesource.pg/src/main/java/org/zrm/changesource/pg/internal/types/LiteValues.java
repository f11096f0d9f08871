package org.zrm.changesource.pg.internal.types;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Converts values (as produced by {@link PgValueParsers} or decoded from a change message) into
 * the values stored in the SQLite replica (spec §7.4, upstream {@code liteValue}).
 *
 * <p>Result types: {@code null}, {@code byte[]} (BLOB), {@link String}, {@link Long},
 * {@link java.math.BigInteger} (int8 beyond ±2^53, bind as long), {@link Double}.
 */
public final class LiteValues {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private LiteValues() {}

    /**
     * @param value the parsed value
     * @param pgType the column's upstream data type or lite type string (decides json-ness)
     * @param format the transaction's JSON format: with {@link JsonFormat#STRINGIFIED}, strings in
     *     json columns are already JSON text
     */
    public static Object liteValue(Object value, String pgType, JsonFormat format) {
        if (value == null || value instanceof byte[]) {
            return value;
        }
        if (LiteTypes.zqlType(pgType).orElse(null) == ZqlType.JSON) {
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

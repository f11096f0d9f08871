package org.zrm.replicator.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Converts change-message column values to the values stored in the replica (upstream
 * {@code liteValue}): booleans become 0/1, JSON and array values become JSON text (kept as they
 * are if the transaction's format is {@code 's'} and the value is already a string), bytes and
 * null are kept.
 */
final class LiteValues {

    private final ProtocolCodec codec;

    LiteValues(ProtocolCodec codec) {
        this.codec = codec;
    }

    Object liteValue(Object value, String liteType, JsonFormat format) {
        if (value == null || value instanceof byte[]) {
            return value;
        }
        if (Lite.isJson(liteType)) {
            if (format == JsonFormat.STRINGIFIED && value instanceof String) {
                return value;
            }
            return codec.encodeValue(value);
        }
        Object v = toLite(value);
        if (v instanceof List || v instanceof Map) {
            return codec.encodeValue(v);
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

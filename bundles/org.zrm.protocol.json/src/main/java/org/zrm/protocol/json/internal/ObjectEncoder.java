package org.zrm.protocol.json.internal;

import java.util.List;
import java.util.Map;
import org.zrm.protocol.Passthrough;

/**
 * Writes one object: modelled members (via a {@link Members} callback) interleaved with the
 * passthrough members, in the recorded order if there is one, else in the {@link Shape}'s
 * canonical order followed by the remaining passthrough members in their own order. Passthrough
 * members whose names are array indices come first, as in JavaScript ({@link JsObjectKeys}).
 */
final class ObjectEncoder {

    private ObjectEncoder() {}

    /** Writes the modelled members of one object type. */
    @FunctionalInterface
    interface Members<T> {
        /**
         * Writes member {@code name} of {@code obj} if it is present.
         *
         * @return whether {@code name} is a modelled member (even if absent and not written)
         */
        boolean write(T obj, String name, JsonWriter w);
    }

    static <T> void write(JsonWriter w, T obj, Shape shape, Passthrough extra, Members<T> members) {
        w.beginObject();
        List<String> order = extra.keyOrder();
        Map<String, Object> fields = extra.fields();
        // JavaScript puts array-index keys first, ascending (JsObjectKeys); modelled members never
        // are array indices, so only passthrough members can be hoisted.
        boolean hoist = !fields.isEmpty() && JsObjectKeys.anyArrayIndex(fields.keySet());
        if (hoist) {
            for (String name : JsObjectKeys.arrayIndices(fields.keySet())) {
                w.name(name).value(fields.get(name));
            }
        }
        if (order.isEmpty()) {
            for (String name : shape.canonical) {
                writeOne(w, obj, name, fields, members);
            }
            if (!fields.isEmpty()) {
                for (Map.Entry<String, Object> e : fields.entrySet()) {
                    if (!shape.isCanonical(e.getKey()) && !(hoist && JsObjectKeys.isArrayIndex(e.getKey()))) {
                        w.name(e.getKey()).value(e.getValue());
                    }
                }
            }
        } else {
            for (String name : order) {
                if (!(hoist && JsObjectKeys.isArrayIndex(name))) {
                    writeOne(w, obj, name, fields, members);
                }
            }
            // Members missing from the recorded order (possible for objects assembled in code
            // from a decoded passthrough) follow in canonical order, then the rest.
            for (String name : shape.canonical) {
                if (!order.contains(name)) {
                    writeOne(w, obj, name, fields, members);
                }
            }
            for (Map.Entry<String, Object> e : fields.entrySet()) {
                if (!order.contains(e.getKey()) && !shape.isCanonical(e.getKey())
                        && !(hoist && JsObjectKeys.isArrayIndex(e.getKey()))) {
                    w.name(e.getKey()).value(e.getValue());
                }
            }
        }
        w.endObject();
    }

    private static <T> void writeOne(
            JsonWriter w, T obj, String name, Map<String, Object> fields, Members<T> members) {
        if (!members.write(obj, name, w) && fields.containsKey(name)) {
            w.name(name).value(fields.get(name));
        }
    }
}

package org.zrm.protocol.json.internal;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * JavaScript's own-property order, which {@code JSON.stringify} (and so {@code BigIntJSON.stringify})
 * follows: keys that are array indices (canonical decimal integers {@code 0 … 2^32−2}) come first in
 * ascending numeric order, then all other keys in insertion order. Every object upstream stringifies
 * is a JavaScript object, whether parsed ({@code {"b":1,"1":2}} re-stringifies as
 * {@code {"1":2,"b":1}}) or built in code (a Postgres row with a column named {@code "1"}), so the
 * writer applies this order to every object it emits.
 */
public final class JsObjectKeys {

    private static final long MAX_ARRAY_INDEX = 4294967294L; // 2^32 - 2

    private JsObjectKeys() {}

    /** Whether {@code key} is an array index, i.e. JavaScript orders it before the other keys. */
    public static boolean isArrayIndex(String key) {
        int n = key.length();
        if (n == 0 || n > 10 || (n > 1 && key.charAt(0) == '0')) {
            return false;
        }
        long v = 0;
        for (int i = 0; i < n; i++) {
            char c = key.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
            v = v * 10 + (c - '0');
        }
        return v <= MAX_ARRAY_INDEX;
    }

    /** Whether any of {@code keys} is an array index. */
    static boolean anyArrayIndex(Collection<String> keys) {
        for (String k : keys) {
            if (!k.isEmpty() && k.charAt(0) >= '0' && k.charAt(0) <= '9' && isArrayIndex(k)) {
                return true;
            }
        }
        return false;
    }

    /** The array-index keys among {@code keys}, in ascending numeric order. */
    static List<String> arrayIndices(Collection<String> keys) {
        List<String> out = new ArrayList<>();
        for (String k : keys) {
            if (isArrayIndex(k)) {
                out.add(k);
            }
        }
        out.sort(Comparator.comparingLong(Long::parseLong));
        return out;
    }

    /** The entries of {@code map} in JavaScript property order (the map's own order if it has no array index). */
    static <V> Collection<Map.Entry<String, V>> entries(Map<String, V> map) {
        if (!anyArrayIndex(map.keySet())) {
            return map.entrySet();
        }
        List<Map.Entry<String, V>> out = new ArrayList<>(map.size());
        for (String k : arrayIndices(map.keySet())) {
            out.add(new AbstractMap.SimpleImmutableEntry<>(k, map.get(k))); // value may be JSON null
        }
        for (Map.Entry<String, V> e : map.entrySet()) {
            if (!isArrayIndex(e.getKey())) {
                out.add(e);
            }
        }
        return out;
    }
}

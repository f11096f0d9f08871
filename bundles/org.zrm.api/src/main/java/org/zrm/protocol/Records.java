package org.zrm.protocol;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** Defensive-copy helpers for the records of this package. */
final class Records {

    private Records() {}

    /** Unmodifiable insertion-ordered copy of a map of non-null model values. */
    static <V> Map<String, V> freezeRecordMap(Map<String, ? extends V> map) {
        Objects.requireNonNull(map, "map");
        if (map.isEmpty()) {
            return Map.of();
        }
        LinkedHashMap<String, V> copy = new LinkedHashMap<>(map.size() * 4 / 3 + 1);
        for (Map.Entry<String, ? extends V> e : map.entrySet()) {
            copy.put(Objects.requireNonNull(e.getKey(), "key"),
                    Objects.requireNonNull(e.getValue(), "value"));
        }
        return Collections.unmodifiableMap(copy);
    }
}

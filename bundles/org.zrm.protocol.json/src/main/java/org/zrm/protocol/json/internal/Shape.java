package org.zrm.protocol.json.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The member layout of one object type: which members the model names explicitly ("modelled")
 * and the canonical member order upstream emits. The canonical order also lists well-known
 * passthrough members (e.g. the Postgres source's {@code relationOid}) so that objects built in
 * Java come out in the same order as upstream's without recording an explicit order.
 */
final class Shape {

    final String[] canonical;
    private final Set<String> modelled;
    private final Map<String, Integer> rank;

    /**
     * @param modelled members the record models explicitly
     * @param canonical full canonical order (must contain every modelled member)
     */
    Shape(String[] modelled, String... canonical) {
        this.canonical = canonical;
        this.modelled = Set.of(modelled);
        this.rank = new HashMap<>();
        for (int i = 0; i < canonical.length; i++) {
            rank.put(canonical[i], i);
        }
        for (String m : modelled) {
            if (!rank.containsKey(m)) {
                throw new IllegalArgumentException("modelled member missing from canonical order: " + m);
            }
        }
    }

    boolean isModelled(String name) {
        return modelled.contains(name);
    }

    boolean isCanonical(String name) {
        return rank.containsKey(name);
    }

    /** Position in the canonical order; unknown members rank after all known ones. */
    int rank(String name) {
        Integer r = rank.get(name);
        return r == null ? canonical.length : r;
    }

    static String[] names(String... names) {
        return names;
    }
}

package org.zrm.admin.internal;

import java.util.List;

/**
 * What a component's metatype says about one property, reduced to what {@link ConfigGate} checks:
 * kept free of OSGi types so that the checks are unit-tested without a framework.
 *
 * @param id the property key
 * @param kind the value type
 * @param cardinality the metatype's cardinality: 0 one value; otherwise at most {@code |cardinality|}
 *        values ({@link Integer#MAX_VALUE} for unbounded)
 * @param options the accepted values when the metatype lists options; empty when any value of the
 *        type is accepted
 * @param min the metatype's inclusive lower bound (a length for text), or {@code null} for none
 * @param max the metatype's inclusive upper bound (a length for text), or {@code null} for none
 */
record AttributeRule(String id, Kind kind, int cardinality, List<String> options, String min, String max) {

    /** A rule without bounds. */
    AttributeRule(String id, Kind kind, int cardinality, List<String> options) {
        this(id, kind, cardinality, options, null, null);
    }

    /** The metatype's value types. */
    enum Kind { STRING, PASSWORD, LONG, INTEGER, SHORT, BYTE, CHARACTER, DOUBLE, FLOAT, BOOLEAN }

    AttributeRule {
        options = List.copyOf(options);
    }
}

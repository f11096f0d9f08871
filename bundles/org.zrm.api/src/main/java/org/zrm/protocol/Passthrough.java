package org.zrm.protocol;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The members of a JSON object that the protocol model does not name explicitly, plus (only when
 * needed) the order in which all members of the object appeared on the wire.
 *
 * <p>Upstream validates messages in "passthrough" mode: unknown members are kept and re-emitted when
 * the message is stringified again. This class carries those members. Their values are plain JSON
 * values (see the package documentation); a member mapped to {@code null} is a JSON {@code null}.
 *
 * <p><b>Member order.</b> The encoder writes each object in a canonical order that matches what
 * upstream emits (for instance the Postgres change source puts {@code relationOid} between
 * {@code tag} and {@code schema}). Members unknown to that canonical order follow at the end, in
 * the order of {@link #fields()}. When a decoded object used a different order, the decoder records
 * the complete member order in {@link #keyOrder()} and the encoder reproduces it, so that
 * decode→encode is byte-identical. For objects built in code {@code keyOrder} is normally empty.
 *
 * <p>Instances are immutable.
 */
public final class Passthrough {

    /** No unknown members, canonical order. */
    public static final Passthrough NONE = new Passthrough(Map.of(), List.of());

    private final Map<String, Object> fields;
    private final List<String> keyOrder;

    private Passthrough(Map<String, Object> fields, List<String> keyOrder) {
        this.fields = fields;
        this.keyOrder = keyOrder;
    }

    /**
     * Unknown members in canonical order.
     *
     * @param fields member name → JSON value (null values allowed); copied, iteration order kept
     */
    public static Passthrough of(Map<String, ?> fields) {
        return of(fields, List.of());
    }

    /**
     * Unknown members plus an explicit member order.
     *
     * @param fields member name → JSON value; copied, iteration order kept
     * @param keyOrder complete member order of the object (modelled and unknown members), or empty
     *     for canonical order; names that turn out to be absent are skipped when encoding
     */
    public static Passthrough of(Map<String, ?> fields, List<String> keyOrder) {
        Objects.requireNonNull(fields, "fields");
        Objects.requireNonNull(keyOrder, "keyOrder");
        if (fields.isEmpty() && keyOrder.isEmpty()) {
            return NONE;
        }
        return new Passthrough(JsonValues.freezeObject(fields), List.copyOf(keyOrder));
    }

    /** Unknown members, in wire order; unmodifiable, never {@code null}. */
    public Map<String, Object> fields() {
        return fields;
    }

    /** The recorded complete member order, or an empty list meaning "canonical order". */
    public List<String> keyOrder() {
        return keyOrder;
    }

    /** Whether there are no unknown members. */
    public boolean isEmpty() {
        return fields.isEmpty();
    }

    /** Whether {@code name} is an unknown member (possibly mapped to JSON {@code null}). */
    public boolean has(String name) {
        return fields.containsKey(name);
    }

    /** The value of an unknown member; {@code null} both for JSON null and absence, see {@link #has}. */
    public Object get(String name) {
        return fields.get(name);
    }

    /** A copy with one more (or a replaced) unknown member. */
    public Passthrough with(String name, Object value) {
        LinkedHashMap<String, Object> copy = new LinkedHashMap<>(fields);
        copy.put(Objects.requireNonNull(name, "name"), value);
        return new Passthrough(JsonValues.freezeObject(copy), keyOrder);
    }

    /**
     * Fails if an unknown member collides with a member the model names explicitly; used by the
     * records' constructors so that a member can never be encoded twice.
     *
     * @throws IllegalArgumentException on collision
     */
    public Passthrough requireNoneOf(String... modelled) {
        if (!fields.isEmpty()) {
            for (String name : modelled) {
                if (fields.containsKey(name)) {
                    throw new IllegalArgumentException(
                            "passthrough member '" + name + "' is modelled explicitly");
                }
            }
        }
        return this;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Passthrough p && fields.equals(p.fields) && keyOrder.equals(p.keyOrder);
    }

    @Override
    public int hashCode() {
        return fields.hashCode() * 31 + keyOrder.hashCode();
    }

    @Override
    public String toString() {
        return keyOrder.isEmpty() ? "Passthrough" + fields : "Passthrough" + fields + keyOrder;
    }

    /** Internal helper so records can reject a {@code null} passthrough cheaply. */
    static Passthrough orNone(Passthrough p) {
        return p == null ? NONE : p;
    }
}

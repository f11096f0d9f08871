package org.zrm.protocol;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Helpers for the plain-Java representation of JSON values used by the protocol model.
 *
 * <p>The representation: {@code null}; {@link Boolean}; {@link String}; {@link Long} (or another
 * integral boxed type) and {@link BigInteger} for integers, written as bare integer literals;
 * {@link Double} for other numbers, written like JavaScript's {@code Number.prototype.toString}
 * (non-finite values become {@code null}); {@link List} for arrays; {@link Map Map&lt;String,?&gt;}
 * for objects, whose iteration order is the member order.
 */
public final class JsonValues {

    /** Largest integer a JavaScript number represents exactly (2^53−1). */
    public static final long MAX_SAFE_INTEGER = (1L << 53) - 1;

    /** Smallest integer a JavaScript number represents exactly (−(2^53−1)). */
    public static final long MIN_SAFE_INTEGER = -MAX_SAFE_INTEGER;

    private static final Class<?> FROZEN_MAP =
            Collections.unmodifiableMap(new LinkedHashMap<>()).getClass();
    private static final Class<?> FROZEN_LIST =
            Collections.unmodifiableList(new ArrayList<>()).getClass();

    private JsonValues() {}

    /**
     * Returns an unmodifiable, insertion-ordered view of {@code object}. Maps produced by the
     * decoder (and by earlier calls) are returned as they are; anything else is copied shallowly,
     * so callers must not mutate nested containers afterwards.
     *
     * @throws NullPointerException if the map or one of its keys is {@code null}
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> freezeObject(Map<String, ?> object) {
        Objects.requireNonNull(object, "object");
        if (object.getClass() == FROZEN_MAP) {
            return (Map<String, Object>) object;
        }
        if (object.isEmpty()) {
            return Map.of();
        }
        LinkedHashMap<String, Object> copy = new LinkedHashMap<>(object.size() * 4 / 3 + 1);
        for (Map.Entry<String, ?> e : object.entrySet()) {
            copy.put(Objects.requireNonNull(e.getKey(), "object key"), e.getValue());
        }
        return Collections.unmodifiableMap(copy);
    }

    /** Like {@link #freezeObject} for a JSON object that may be {@code null} (absent). */
    public static Map<String, Object> freezeObjectOrNull(Map<String, ?> object) {
        return object == null ? null : freezeObject(object);
    }

    /**
     * Returns an unmodifiable view of {@code list}; decoder-produced lists are returned as they
     * are, others are copied shallowly (elements may be {@code null}).
     */
    @SuppressWarnings("unchecked")
    public static <T> List<T> freezeList(Collection<? extends T> list) {
        Objects.requireNonNull(list, "list");
        if (list.getClass() == FROZEN_LIST) {
            return (List<T>) list;
        }
        if (list.isEmpty()) {
            return List.of();
        }
        return Collections.unmodifiableList(new ArrayList<>(list));
    }

    /** Like {@link #freezeList} but rejects {@code null} elements (for lists of names/records). */
    public static <T> List<T> freezeNonNullList(Collection<? extends T> list) {
        Objects.requireNonNull(list, "list");
        for (T t : list) {
            Objects.requireNonNull(t, "list element");
        }
        return freezeList(list);
    }

    /**
     * The JSON type name of a value as used in error messages: {@code null}, {@code boolean},
     * {@code number}, {@code bigint} (an integer outside ±(2^53−1)), {@code string},
     * {@code array}, {@code object}, or the Java class name for unsupported values.
     */
    public static String typeName(Object value) {
        if (value == null) {
            return "null";
        } else if (value instanceof String) {
            return "string";
        } else if (value instanceof Boolean) {
            return "boolean";
        } else if (value instanceof Long l) {
            return l >= MIN_SAFE_INTEGER && l <= MAX_SAFE_INTEGER ? "number" : "bigint";
        } else if (value instanceof BigInteger) {
            return "bigint";
        } else if (value instanceof Number) {
            return "number";
        } else if (value instanceof List) {
            return "array";
        } else if (value instanceof Map) {
            return "object";
        }
        return value.getClass().getName();
    }
}

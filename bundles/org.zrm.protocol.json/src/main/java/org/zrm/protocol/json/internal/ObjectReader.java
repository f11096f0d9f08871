package org.zrm.protocol.json.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.zrm.protocol.JsonValues;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.json.ProtocolException;

/**
 * Typed, path-aware access to the members of one decoded JSON object. Getters named
 * {@code req…} fail on absence, {@code opt…} return {@code null} when the member is absent, and
 * {@code maybe…} distinguish absent, null and value. A present member with a wrong type (including
 * an unexpected {@code null}) always fails.
 */
final class ObjectReader {

    private final Map<String, Object> map;
    private final JsonPath path;
    private final Shape shape;

    @SuppressWarnings("unchecked")
    ObjectReader(Object value, JsonPath path, Shape shape) {
        if (!(value instanceof Map)) {
            throw Fail.type(path, "object", value);
        }
        this.map = (Map<String, Object>) value;
        this.path = path;
        this.shape = shape;
    }

    JsonPath path(String name) {
        return path.key(name);
    }

    JsonPath path() {
        return path;
    }

    boolean has(String name) {
        return map.containsKey(name);
    }

    /** The raw value of a required member (may be JSON null). */
    Object reqRaw(String name, String expected) {
        Object v = map.get(name);
        if (v == null && !map.containsKey(name)) {
            throw Fail.missing(path.key(name), expected);
        }
        return v;
    }

    String reqString(String name) {
        return Values.string(reqRaw(name, "string"), path.key(name));
    }

    String optString(String name) {
        return has(name) ? Values.string(map.get(name), path.key(name)) : null;
    }

    Maybe<String> maybeString(String name) {
        if (!has(name)) {
            return Maybe.absent();
        }
        Object v = map.get(name);
        return v == null ? Maybe.ofNull() : Maybe.of(Values.string(v, path.key(name)));
    }

    boolean reqBoolean(String name) {
        return Values.bool(reqRaw(name, "boolean"), path.key(name));
    }

    Boolean optBoolean(String name) {
        return has(name) ? Values.bool(map.get(name), path.key(name)) : null;
    }

    Maybe<Boolean> maybeBoolean(String name) {
        if (!has(name)) {
            return Maybe.absent();
        }
        Object v = map.get(name);
        return v == null ? Maybe.ofNull() : Maybe.of(Values.bool(v, path.key(name)));
    }

    long reqLong(String name) {
        return Values.integral(reqRaw(name, "number"), path.key(name));
    }

    Long optLong(String name) {
        return has(name) ? Values.integral(map.get(name), path.key(name)) : null;
    }

    Maybe<Long> maybeLong(String name) {
        if (!has(name)) {
            return Maybe.absent();
        }
        Object v = map.get(name);
        return v == null ? Maybe.ofNull() : Maybe.of(Values.integral(v, path.key(name)));
    }

    double reqDouble(String name) {
        return Values.number(reqRaw(name, "number"), path.key(name));
    }

    <E> E reqEnum(String name, Function<String, E> lookup, String allowed) {
        return Values.enumValue(reqString(name), lookup, allowed, path.key(name));
    }

    <E> E optEnum(String name, Function<String, E> lookup, String allowed) {
        String s = optString(name);
        return s == null ? null : Values.enumValue(s, lookup, allowed, path.key(name));
    }

    <E> Maybe<E> maybeEnum(String name, Function<String, E> lookup, String allowed) {
        Maybe<String> s = maybeString(name);
        if (s.value() == null) {
            return s.isPresent() ? Maybe.ofNull() : Maybe.absent();
        }
        return Maybe.of(Values.enumValue(s.value(), lookup, allowed, path.key(name)));
    }

    Map<String, Object> reqObject(String name) {
        return Values.object(reqRaw(name, "object"), path.key(name));
    }

    Map<String, Object> optObject(String name) {
        return has(name) ? Values.object(map.get(name), path.key(name)) : null;
    }

    /** A required member that is an object or JSON null ({@code null} returned for JSON null). */
    Map<String, Object> reqNullableObject(String name) {
        Object v = reqRaw(name, "object or null");
        return v == null ? null : Values.object(v, path.key(name));
    }

    List<String> reqStrings(String name) {
        return Values.strings(reqRaw(name, "array"), path.key(name));
    }

    List<String> optStrings(String name) {
        return has(name) ? Values.strings(map.get(name), path.key(name)) : null;
    }

    /** A required member decoded by {@code decoder} (which receives the value and its path). */
    <T> T req(String name, String expected, Decoder<T> decoder) {
        return decoder.decode(reqRaw(name, expected), path.key(name));
    }

    /** An optional member decoded by {@code decoder}; absent → {@code null}. */
    <T> T opt(String name, Decoder<T> decoder) {
        return has(name) ? decoder.decode(map.get(name), path.key(name)) : null;
    }

    /** A required array whose elements are decoded by {@code decoder}. */
    <T> List<T> reqList(String name, Decoder<T> decoder) {
        JsonPath p = path.key(name);
        List<Object> list = Values.array(reqRaw(name, "array"), p);
        ArrayList<T> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            out.add(decoder.decode(list.get(i), p.index(i)));
        }
        return Collections.unmodifiableList(out);
    }

    /** A required object whose member values are decoded by {@code decoder}, order kept. */
    <T> Map<String, T> reqRecord(String name, Decoder<T> decoder) {
        return record(reqRaw(name, "object"), path.key(name), decoder);
    }

    /** An optional record; absent → {@code null}. */
    <T> Map<String, T> optRecord(String name, Decoder<T> decoder) {
        return has(name) ? record(map.get(name), path.key(name), decoder) : null;
    }

    static <T> Map<String, T> record(Object value, JsonPath p, Decoder<T> decoder) {
        Map<String, Object> obj = Values.object(value, p);
        if (obj.isEmpty()) {
            return Map.of();
        }
        LinkedHashMap<String, T> out = new LinkedHashMap<>(obj.size() * 4 / 3 + 1);
        for (Map.Entry<String, Object> e : obj.entrySet()) {
            out.put(e.getKey(), decoder.decode(e.getValue(), p.key(e.getKey())));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * Checks a literal {@code tag} member.
     *
     * @throws ProtocolException if absent or different
     */
    void reqTag(String expected) {
        String tag = reqString("tag");
        if (!tag.equals(expected)) {
            throw new ProtocolException(path.key("tag").toString(),
                    "expected \"" + expected + "\", got \"" + tag + "\"");
        }
    }

    /**
     * The members that are not modelled, plus the member order if it is not the canonical one.
     * Allocates nothing for the common case of no unknown members in canonical order.
     */
    Passthrough passthrough() {
        LinkedHashMap<String, Object> extra = null;
        boolean canonical = true;
        int lastRank = -1;
        for (Map.Entry<String, Object> e : map.entrySet()) {
            String name = e.getKey();
            int r = shape.rank(name);
            if (r < lastRank) {
                canonical = false;
            }
            lastRank = r;
            if (!shape.isModelled(name)) {
                if (extra == null) {
                    extra = new LinkedHashMap<>();
                }
                extra.put(name, e.getValue());
            }
        }
        if (canonical && extra == null) {
            return Passthrough.NONE;
        }
        Map<String, Object> fields = extra == null ? Map.of() : Collections.unmodifiableMap(extra);
        return Passthrough.of(fields, canonical ? List.of() : List.copyOf(map.keySet()));
    }

    /** Decodes one value found at a path. */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(Object value, JsonPath path);
    }

    /** Type checks and conversions of single values. */
    static final class Values {
        private Values() {}

        static String string(Object v, JsonPath p) {
            if (v instanceof String s) {
                return s;
            }
            throw Fail.type(p, "string", v);
        }

        static boolean bool(Object v, JsonPath p) {
            if (v instanceof Boolean b) {
                return b;
            }
            throw Fail.type(p, "boolean", v);
        }

        /** A JavaScript number (not a bigint) as a double. */
        static double number(Object v, JsonPath p) {
            if (v instanceof Long l) {
                if (l >= JsonValues.MIN_SAFE_INTEGER && l <= JsonValues.MAX_SAFE_INTEGER) {
                    return l;
                }
            } else if (v instanceof Double d) {
                return d;
            }
            throw Fail.type(p, "number", v);
        }

        /** A JavaScript number that must be integral (model fields declared as long/int). */
        static long integral(Object v, JsonPath p) {
            double d = number(v, p);
            if (v instanceof Long l) {
                return l;
            }
            if (d != Math.rint(d) || Math.abs(d) > JsonValues.MAX_SAFE_INTEGER) {
                throw new ProtocolException(p.toString(), "expected integer, got " + JsNumbers.toJsString(d));
            }
            return (long) d;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(Object v, JsonPath p) {
            if (v instanceof Map) {
                return (Map<String, Object>) v;
            }
            throw Fail.type(p, "object", v);
        }

        @SuppressWarnings("unchecked")
        static List<Object> array(Object v, JsonPath p) {
            if (v instanceof List) {
                return (List<Object>) v;
            }
            throw Fail.type(p, "array", v);
        }

        static List<String> strings(Object v, JsonPath p) {
            List<Object> list = array(v, p);
            for (int i = 0; i < list.size(); i++) {
                if (!(list.get(i) instanceof String)) {
                    throw Fail.type(p.index(i), "string", list.get(i));
                }
            }
            @SuppressWarnings("unchecked")
            List<String> strings = (List<String>) (List<?>) list;
            return strings;
        }

        static <E> E enumValue(String s, Function<String, E> lookup, String allowed, JsonPath p) {
            E e = lookup.apply(s);
            if (e == null) {
                throw new ProtocolException(p.toString(), "expected one of " + allowed + ", got \"" + s + "\"");
            }
            return e;
        }

    }

    /** Factories for the common failures. */
    static final class Fail {
        private Fail() {}

        static ProtocolException type(JsonPath p, String expected, Object got) {
            return new ProtocolException(p.toString(), "expected " + expected + ", got " + JsonValues.typeName(got));
        }

        static ProtocolException missing(JsonPath p, String expected) {
            return new ProtocolException(p.toString(), "missing required " + expected);
        }
    }
}

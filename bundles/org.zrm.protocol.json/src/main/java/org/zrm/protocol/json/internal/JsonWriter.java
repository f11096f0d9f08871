package org.zrm.protocol.json.internal;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;

/**
 * A minimal JSON writer producing exactly what Zero's {@code BigIntJSON.stringify} produces:
 * no whitespace, integers (including bigints) as bare literals, other numbers per
 * {@link JsNumbers}, and strings escaped like the {@code json-custom-numbers} library does.
 *
 * <p><b>String escaping.</b> That library only calls the native {@code JSON.stringify} on a string
 * if it contains {@code "}, {@code \} or a control character; otherwise it wraps the string in
 * quotes untouched. Native well-formed {@code JSON.stringify} escapes {@code "} {@code \}, the
 * short forms {@code \b \f \n \r \t}, other controls as <code>&#92;u00xx</code> and lone surrogates as
 * <code>&#92;udxxx</code> (lower-case hex); everything else (non-ASCII, U+2028, DEL) stays raw. The
 * consequence, reproduced here: a lone surrogate is escaped only if the same string also contains
 * one of the escapable characters; otherwise it is emitted raw (and a UTF-8 encoder will replace
 * it, Node.js with U+FFFD).
 *
 * <p>Not thread-safe; one instance per encoding.
 */
public final class JsonWriter {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final StringBuilder out;
    private final NumberMemo numbers;
    private final RelationMemo relations;
    private boolean[] needsComma = new boolean[16];
    private int depth;
    private boolean afterName;

    /** A writer with a fresh buffer. */
    public JsonWriter() {
        this(new StringBuilder(256));
    }

    /** A writer appending to {@code out}. */
    public JsonWriter(StringBuilder out) {
        this(out, null, null);
    }

    /**
     * A writer with a fresh buffer that formats fractional numbers through {@code numbers} and
     * takes relations' text from {@code relations} (shared by one codec's encodings, see
     * {@link NumberMemo} and {@link RelationMemo}).
     */
    public JsonWriter(NumberMemo numbers, RelationMemo relations) {
        this(new StringBuilder(256), numbers, relations);
    }

    private JsonWriter(StringBuilder out, NumberMemo numbers, RelationMemo relations) {
        this.out = out;
        this.numbers = numbers;
        this.relations = relations;
    }

    /** @return where relations' text is remembered, or {@code null} if nowhere */
    RelationMemo relations() {
        return relations;
    }

    /** The text written so far. */
    @Override
    public String toString() {
        return out.toString();
    }

    /** Opens an object. */
    public JsonWriter beginObject() {
        beforeValue();
        out.append('{');
        push();
        return this;
    }

    /** Closes the current object. */
    public JsonWriter endObject() {
        depth--;
        out.append('}');
        return this;
    }

    /** Opens an array. */
    public JsonWriter beginArray() {
        beforeValue();
        out.append('[');
        push();
        return this;
    }

    /** Closes the current array. */
    public JsonWriter endArray() {
        depth--;
        out.append(']');
        return this;
    }

    /** Writes a member name; the next call must write its value. */
    public JsonWriter name(String name) {
        if (needsComma[depth]) {
            out.append(',');
        }
        needsComma[depth] = true;
        appendString(out, name);
        out.append(':');
        afterName = true;
        return this;
    }

    /** Writes a string value. */
    public JsonWriter string(String s) {
        beforeValue();
        appendString(out, s);
        return this;
    }

    /** Writes a boolean value. */
    public JsonWriter bool(boolean b) {
        beforeValue();
        out.append(b);
        return this;
    }

    /** Writes an integer literal. */
    public JsonWriter integer(long v) {
        beforeValue();
        out.append(v);
        return this;
    }

    /** Writes a JavaScript number. */
    public JsonWriter number(double v) {
        beforeValue();
        if (numbers != null) {
            numbers.appendJson(out, v);
        } else {
            JsNumbers.appendJson(out, v);
        }
        return this;
    }

    /** Writes {@code null}. */
    public JsonWriter nullValue() {
        beforeValue();
        out.append("null");
        return this;
    }

    /** Appends already-serialized JSON text verbatim as a value. */
    public JsonWriter raw(String json) {
        beforeValue();
        out.append(json);
        return this;
    }

    /**
     * Writes a plain-Java JSON value (see {@code org.zrm.protocol.JsonValues}). Object members come
     * out in JavaScript property order ({@link JsObjectKeys}).
     *
     * @throws IllegalArgumentException for values that have no JSON form
     */
    public JsonWriter value(Object v) {
        if (v == null) {
            return nullValue();
        } else if (v instanceof String s) {
            return string(s);
        } else if (v instanceof Boolean b) {
            return bool(b);
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return integer(((Number) v).longValue());
        } else if (v instanceof Double || v instanceof Float) {
            return number(((Number) v).doubleValue());
        } else if (v instanceof BigInteger b) {
            beforeValue();
            out.append(b);
            return this;
        } else if (v instanceof Map<?, ?> m) {
            beginObject();
            // One pass over the keys checks them and looks for array indices; a row is a map, and
            // walking its keys twice before writing it was a visible share of encoding a row.
            boolean reorder = false;
            for (Object k : m.keySet()) {
                if (!(k instanceof String key)) {
                    throw new IllegalArgumentException("JSON object key must be a string: " + k);
                }
                reorder = reorder || JsObjectKeys.isArrayIndex(key);
            }
            @SuppressWarnings("unchecked")
            Map<String, ?> sm = (Map<String, ?>) m;
            for (Map.Entry<String, ?> e : reorder ? JsObjectKeys.entries(sm) : sm.entrySet()) {
                name(e.getKey());
                value(e.getValue());
            }
            return endObject();
        } else if (v instanceof List<?> l) {
            beginArray();
            if (l instanceof RandomAccess) {
                // Backfill messages hold thousands of small row lists; an iterator per row (two
                // objects through an unmodifiable wrapper) was a visible share of their encoding.
                for (int i = 0, n = l.size(); i < n; i++) {
                    value(l.get(i));
                }
            } else {
                for (Object o : l) {
                    value(o);
                }
            }
            return endArray();
        }
        throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
    }

    private void push() {
        depth++;
        if (depth == needsComma.length) {
            needsComma = Arrays.copyOf(needsComma, depth * 2);
        }
        needsComma[depth] = false;
    }

    private void beforeValue() {
        if (afterName) {
            afterName = false;
        } else if (depth > 0) {
            if (needsComma[depth]) {
                out.append(',');
            }
            needsComma[depth] = true;
        }
    }

    /** Appends {@code s} as a JSON string literal, escaped as described in the class comment. */
    public static void appendString(StringBuilder out, String s) {
        out.append('"');
        if (!needsEscaping(s)) {
            out.append(s);
        } else {
            escapeFully(out, s);
        }
        out.append('"');
    }

    private static boolean needsEscaping(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == '"' || c == '\\') {
                return true;
            }
        }
        return false;
    }

    private static void escapeFully(StringBuilder out, String s) {
        int n = s.length();
        int start = 0; // start of the pending run of characters that need no escaping
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            String shortForm = null;
            boolean unicode = false;
            if (c < 0x20) {
                switch (c) {
                    case '\b' -> shortForm = "\\b";
                    case '\f' -> shortForm = "\\f";
                    case '\n' -> shortForm = "\\n";
                    case '\r' -> shortForm = "\\r";
                    case '\t' -> shortForm = "\\t";
                    default -> unicode = true;
                }
            } else if (c == '"') {
                shortForm = "\\\"";
            } else if (c == '\\') {
                shortForm = "\\\\";
            } else if (Character.isHighSurrogate(c)) {
                if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++; // a valid pair stays raw
                    continue;
                }
                unicode = true;
            } else if (Character.isLowSurrogate(c)) {
                unicode = true; // a low surrogate not preceded by a high one
            } else {
                continue;
            }
            out.append(s, start, i);
            if (shortForm != null) {
                out.append(shortForm);
            } else if (unicode) {
                out.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 0xF])
                        .append(HEX[(c >> 4) & 0xF]).append(HEX[c & 0xF]);
            }
            start = i + 1;
        }
        out.append(s, start, n);
    }
}

package org.zrm.protocol.json.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.JsonValues;
import org.zrm.protocol.json.ProtocolException;

/**
 * Parses JSON text into the plain-Java value representation, with {@code BigIntJSON.parse}'s
 * number rules: integer literals within ±(2^53−1) become {@link Long}, other integer literals
 * {@link BigInteger}, literals with {@code .}, {@code e} or {@code E} become {@link Double}
 * (possibly infinite, like JavaScript).
 *
 * <p>Strictness: standard JSON only (no comments, NaN, leading zeros, single quotes or trailing
 * commas), exactly one value (trailing non-whitespace is an error) and <b>no duplicate member
 * names</b>: JavaScript would silently keep the last value at the first position, which makes the
 * text ambiguous, so we reject it. Objects are unmodifiable insertion-ordered maps, arrays
 * unmodifiable lists.
 *
 * <p>Thread-safe (Jackson factories are).
 */
public final class JsonTreeParser {

    /** Messages may be large (upstream allows WebSocket payloads up to 100 MiB). */
    private static final int MAX_STRING_LENGTH = 512 * 1024 * 1024;

    private final JsonFactory factory;

    public JsonTreeParser() {
        factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxStringLength(MAX_STRING_LENGTH)
                        .maxNestingDepth(1000)
                        .build())
                .build();
    }

    /** The configured Jackson factory, for streaming readers that share the same limits. */
    public JsonFactory jsonFactory() {
        return factory;
    }

    /**
     * Parses a complete document.
     *
     * @throws ProtocolException on malformed JSON, duplicate members or trailing content
     */
    public Object parse(String text) {
        try (JsonParser p = factory.createParser(text)) {
            return parseDocument(p);
        } catch (IOException e) {
            throw new ProtocolException("$", "unreadable JSON: " + e.getMessage(), e);
        }
    }

    /**
     * Parses a complete document with JavaScript's {@code JSON.parse} rule for duplicate member
     * names: the member keeps the position of its first occurrence and takes the value of its
     * last. Only for JSON that upstream itself reads with {@code JSON.parse} and that may contain
     * duplicates, such as Postgres {@code json_object_agg} output.
     *
     * @throws ProtocolException on malformed JSON or trailing content
     */
    public Object parseLikeJsonParse(String text) {
        try (JsonParser p = factory.createParser(text)) {
            return parseDocument(p, false);
        } catch (IOException e) {
            throw new ProtocolException("$", "unreadable JSON: " + e.getMessage(), e);
        }
    }

    /** Parses a complete UTF-8 document. */
    public Object parse(byte[] utf8) {
        try (JsonParser p = factory.createParser(utf8)) {
            return parseDocument(p);
        } catch (IOException e) {
            throw new ProtocolException("$", "unreadable JSON: " + e.getMessage(), e);
        }
    }

    private static Object parseDocument(JsonParser p) throws IOException {
        return parseDocument(p, true);
    }

    private static Object parseDocument(JsonParser p, boolean rejectDuplicates) throws IOException {
        try {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new ProtocolException("$", "malformed JSON: empty document");
            }
            Object value = readValue(p, t, rejectDuplicates);
            if (p.nextToken() != null) {
                throw new ProtocolException("$", "malformed JSON: unexpected content after the value at "
                        + location(p));
            }
            return value;
        } catch (JsonProcessingException e) {
            throw new ProtocolException(pathOf(p.getParsingContext()),
                    "malformed JSON: " + e.getOriginalMessage() + " at " + location(p), e);
        }
    }

    /** Reads the value starting at the current token {@code t}. */
    static Object readValue(JsonParser p, JsonToken t) throws IOException {
        return readValue(p, t, true);
    }

    private static Object readValue(JsonParser p, JsonToken t, boolean rejectDuplicates) throws IOException {
        switch (t) {
            case START_OBJECT: {
                LinkedHashMap<String, Object> map = new LinkedHashMap<>();
                while ((t = p.nextToken()) != JsonToken.END_OBJECT) {
                    String name = p.currentName();
                    Object v = readValue(p, p.nextToken(), rejectDuplicates);
                    int before = map.size();
                    map.put(name, v);
                    if (map.size() == before && rejectDuplicates) {
                        throw new ProtocolException(pathOf(p.getParsingContext()),
                                "duplicate member name");
                    }
                }
                return map.isEmpty() ? Map.of() : Collections.unmodifiableMap(map);
            }
            case START_ARRAY: {
                ArrayList<Object> list = new ArrayList<>();
                while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                    list.add(readValue(p, t, rejectDuplicates));
                }
                return list.isEmpty() ? List.of() : Collections.unmodifiableList(list);
            }
            case VALUE_STRING:
                return p.getText();
            case VALUE_NUMBER_INT:
                return integer(p);
            case VALUE_NUMBER_FLOAT:
                return p.getDoubleValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return null;
            default:
                throw new ProtocolException(pathOf(p.getParsingContext()), "unexpected token " + t);
        }
    }

    private static Object integer(JsonParser p) throws IOException {
        JsonParser.NumberType type = p.getNumberType();
        if (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) {
            long v = p.getLongValue();
            if (v >= JsonValues.MIN_SAFE_INTEGER && v <= JsonValues.MAX_SAFE_INTEGER) {
                return v;
            }
            return BigInteger.valueOf(v);
        }
        return p.getBigIntegerValue();
    }

    private static String location(JsonParser p) {
        return "line " + p.currentLocation().getLineNr() + ", column " + p.currentLocation().getColumnNr();
    }

    /** Renders Jackson's parsing context as a {@code $[1].a.b} path. */
    static String pathOf(JsonStreamContext ctx) {
        if (ctx == null) {
            return "$";
        }
        List<JsonStreamContext> chain = new ArrayList<>();
        for (JsonStreamContext c = ctx; c != null && !c.inRoot(); c = c.getParent()) {
            chain.add(c);
        }
        StringBuilder sb = new StringBuilder("$");
        for (int i = chain.size() - 1; i >= 0; i--) {
            JsonStreamContext c = chain.get(i);
            if (c.inArray()) {
                sb.append('[').append(Math.max(0, c.getCurrentIndex())).append(']');
            } else if (c.getCurrentName() != null) {
                JsonPath.appendKey(sb, c.getCurrentName());
            }
        }
        return sb.toString();
    }
}

package org.zrm.protocol.json.internal;

/**
 * A position inside a JSON document, rendered like {@code $[1].relation.schema}. Built as a cheap
 * linked chain while decoding; the string is only produced for error messages.
 */
public final class JsonPath {

    /** The document root, {@code $}. */
    public static final JsonPath ROOT = new JsonPath(null, null, -1);

    private final JsonPath parent;
    private final String key;
    private final int index;

    private JsonPath(JsonPath parent, String key, int index) {
        this.parent = parent;
        this.key = key;
        this.index = index;
    }

    /** The path of member {@code name} of the object at this path. */
    public JsonPath key(String name) {
        return new JsonPath(this, name, -1);
    }

    /** The path of element {@code i} of the array at this path. */
    public JsonPath index(int i) {
        return new JsonPath(this, null, i);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        render(sb);
        return sb.toString();
    }

    private void render(StringBuilder sb) {
        if (parent == null) {
            sb.append('$');
            return;
        }
        parent.render(sb);
        if (key == null) {
            sb.append('[').append(index).append(']');
        } else {
            appendKey(sb, key);
        }
    }

    /** Appends {@code .name} for identifier-like names, {@code ["…"]} (JSON-quoted) otherwise. */
    static void appendKey(StringBuilder sb, String name) {
        if (isIdentifier(name)) {
            sb.append('.').append(name);
        } else {
            sb.append('[');
            JsonWriter.appendString(sb, name);
            sb.append(']');
        }
    }

    private static boolean isIdentifier(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                    || (i > 0 && c >= '0' && c <= '9');
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}

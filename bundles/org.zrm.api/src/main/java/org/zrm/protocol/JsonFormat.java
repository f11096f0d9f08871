package org.zrm.protocol;

/** Format of JSON/JSONB column values inside a transaction ({@code begin.json}): parsed JSON values, or JSON text carried as strings. */
public enum JsonFormat {
    /** Wire value {@code "p"}. */
    PARSED("p"),
    /** Wire value {@code "s"}. */
    STRINGIFIED("s");

    private final String wire;

    JsonFormat(String wire) {
        this.wire = wire;
    }

    /** The string used on the wire. */
    public String wire() {
        return wire;
    }

    /** The constant for a wire string, or {@code null} if there is none. */
    public static JsonFormat fromWire(String wire) {
        for (JsonFormat v : values()) {
            if (v.wire.equals(wire)) {
                return v;
            }
        }
        return null;
    }
}

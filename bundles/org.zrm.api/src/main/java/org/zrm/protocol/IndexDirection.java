package org.zrm.protocol;

/** Sort direction of an index column in {@link IndexSpec#columns()}. */
public enum IndexDirection {
    /** Wire value {@code "ASC"}. */
    ASC("ASC"),
    /** Wire value {@code "DESC"}. */
    DESC("DESC");

    private final String wire;

    IndexDirection(String wire) {
        this.wire = wire;
    }

    /** The string used on the wire. */
    public String wire() {
        return wire;
    }

    /** The constant for a wire string, or {@code null} if there is none. */
    public static IndexDirection fromWire(String wire) {
        for (IndexDirection v : values()) {
            if (v.wire.equals(wire)) {
                return v;
            }
        }
        return null;
    }
}

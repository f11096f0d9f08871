package org.zrm.protocol;

/** Postgres {@code pg_type.typtype} class of a column type ({@code pgTypeClass}, {@code elemPgTypeClass}). */
public enum PgTypeClass {
    /** Wire value {@code "b"}. */
    BASE("b"),
    /** Wire value {@code "c"}. */
    COMPOSITE("c"),
    /** Wire value {@code "d"}. */
    DOMAIN("d"),
    /** Wire value {@code "e"}. */
    ENUM("e"),
    /** Wire value {@code "p"}. */
    PSEUDO("p"),
    /** Wire value {@code "r"}. */
    RANGE("r"),
    /** Wire value {@code "m"}. */
    MULTIRANGE("m");

    private final String wire;

    PgTypeClass(String wire) {
        this.wire = wire;
    }

    /** The string used on the wire. */
    public String wire() {
        return wire;
    }

    /** The constant for a wire string, or {@code null} if there is none. */
    public static PgTypeClass fromWire(String wire) {
        for (PgTypeClass v : values()) {
            if (v.wire.equals(wire)) {
                return v;
            }
        }
        return null;
    }
}

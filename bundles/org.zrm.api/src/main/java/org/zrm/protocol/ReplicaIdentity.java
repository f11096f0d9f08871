package org.zrm.protocol;

/** How a row key is chosen ({@code rowKey.type}, deprecated {@code replicaIdentity}); mirrors Postgres REPLICA IDENTITY. */
public enum ReplicaIdentity {
    /** Wire value {@code "default"}. */
    DEFAULT("default"),
    /** Wire value {@code "nothing"}. */
    NOTHING("nothing"),
    /** Wire value {@code "full"}. */
    FULL("full"),
    /** Wire value {@code "index"}. */
    INDEX("index");

    private final String wire;

    ReplicaIdentity(String wire) {
        this.wire = wire;
    }

    /** The string used on the wire. */
    public String wire() {
        return wire;
    }

    /** The constant for a wire string, or {@code null} if there is none. */
    public static ReplicaIdentity fromWire(String wire) {
        for (ReplicaIdentity v : values()) {
            if (v.wire.equals(wire)) {
                return v;
            }
        }
        return null;
    }
}

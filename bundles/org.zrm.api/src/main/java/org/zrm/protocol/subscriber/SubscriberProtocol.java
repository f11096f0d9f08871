package org.zrm.protocol.subscriber;

/** Version constants of the change-streamer subscriber protocol. */
public final class SubscriberProtocol {

    /** The protocol version this implementation speaks (and the version in the URL paths). */
    public static final int PROTOCOL_VERSION = 6;

    /** The oldest protocol version the server accepts. */
    public static final int MIN_SUPPORTED_PROTOCOL_VERSION = 1;

    /** Path of the changes endpoint. */
    public static final String CHANGES_PATH = "/replication/v" + PROTOCOL_VERSION + "/changes";

    /** Path of the snapshot-reservation endpoint. */
    public static final String SNAPSHOT_PATH = "/replication/v" + PROTOCOL_VERSION + "/snapshot";

    private SubscriberProtocol() {}

    /** Whether the server accepts a subscription at {@code version}. */
    public static boolean isSupported(long version) {
        return version >= MIN_SUPPORTED_PROTOCOL_VERSION && version <= PROTOCOL_VERSION;
    }
}

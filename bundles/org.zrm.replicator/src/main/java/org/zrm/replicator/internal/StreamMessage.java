package org.zrm.replicator.internal;

/**
 * One incoming {@code Downstream} message of a {@link StreamConnection}, whichever transport
 * delivered it.
 *
 * <p>Why not {@link org.zrm.changestreamer.SubscriptionMessage}: that API type is implemented by
 * the change streamer (a provider type), so implementing it here for the WebSocket transport would
 * tie this bundle to the exact minor version of the change-streamer API. The in-process transport
 * wraps the streamer's messages instead.
 */
interface StreamMessage {

    /** @return the serialised {@code Downstream} text */
    String json();

    /** Acknowledges this message and every earlier one of the same connection. */
    void consumed();
}

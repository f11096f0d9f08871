package org.zrm.replicator.internal;

import java.io.IOException;
import org.zrm.changestreamer.SubscriberContext;

/** Opens subscriptions to a protocol-v6 change streamer, in process or over a WebSocket. */
interface ChangeStreamClient {

    /**
     * Subscribes.
     *
     * @throws IOException if the change streamer cannot be reached
     */
    StreamConnection subscribe(SubscriberContext context) throws IOException, InterruptedException;

    /** Where the subscriptions go, for logs and status (no secrets). */
    String target();
}

package org.zrm.replicator.internal;

import java.io.IOException;
import org.zrm.changestreamer.SubscriptionMessage;

/**
 * One subscription's incoming {@code Downstream} messages. Each message is acknowledged with
 * {@link SubscriptionMessage#consumed()} once the replicator has processed it, in order.
 */
interface StreamConnection extends AutoCloseable {

    /**
     * Waits for the next message.
     *
     * @return the message, or {@code null} if the change streamer ended the stream normally
     * @throws IOException if the connection failed or violated the framing protocol
     */
    SubscriptionMessage take() throws IOException, InterruptedException;

    /** Ends the subscription; idempotent, never throws. */
    @Override
    void close();
}

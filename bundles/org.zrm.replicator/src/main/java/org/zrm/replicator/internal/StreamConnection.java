package org.zrm.replicator.internal;

import java.io.IOException;

/**
 * One subscription's incoming {@code Downstream} messages. Each message is acknowledged with
 * {@link StreamMessage#consumed()} once the replicator has processed it, in order.
 */
interface StreamConnection extends AutoCloseable {

    /**
     * Waits for the next message.
     *
     * @return the message, or {@code null} if the change streamer ended the stream normally
     * @throws IOException if the connection failed or violated the framing protocol
     */
    StreamMessage take() throws IOException, InterruptedException;

    /** Ends the subscription; idempotent, never throws. */
    @Override
    void close();
}

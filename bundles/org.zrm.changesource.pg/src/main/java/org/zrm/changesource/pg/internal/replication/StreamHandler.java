package org.zrm.changesource.pg.internal.replication;

import org.zrm.changesource.ChangeSourceException;

/**
 * Receives what a {@link ReplicationStream} reads. All methods are called on the stream's pump
 * thread, in stream order.
 */
public interface StreamHandler {

    /**
     * Whether the handler can take another replication message now. While it returns
     * {@code false} the pump stops reading the socket (the walsender is then throttled by TCP) but
     * keeps sending acks and keepalives; it is woken by {@link ReplicationStream#wake()}.
     */
    boolean hasRoom();

    /**
     * An XLogData message.
     *
     * @param lsn the XLogData start position ({@code dataStart})
     * @param message the parsed pgoutput message
     * @param wireBytes the size of the CopyData message, for buffer accounting
     */
    void onMessage(long lsn, PgOutputMessage message, int wireBytes);

    /**
     * Called when the pump has no further message at hand (the socket has nothing pending, or it is
     * about to wait): a handler that collects messages to hand them over in batches delivers them
     * now. The pump also calls it at least every {@link ReplicationStream#FLUSH_EVERY} messages.
     */
    default void flush() {
    }

    /**
     * {@link #flush()}, telling whether the socket had nothing more pending ({@code drained}): a
     * handler that shares its output with other producers yields to them between transactions
     * when the stream is drained.
     */
    default void flush(boolean drained) {
        flush();
    }

    /**
     * An XLogData message whose pgoutput payload is well-formed but holds a value that cannot be
     * converted (e.g. a timestamp format the parser does not know). The stream continues.
     *
     * @param lsn the XLogData start position
     * @param error the conversion failure
     */
    void onUnparseable(long lsn, RuntimeException error);

    /**
     * A primary keepalive.
     *
     * @param walEnd the walsender's sent position
     * @param replyRequested whether the server asked for a status update
     */
    void onKeepalive(long walEnd, boolean replyRequested);

    /**
     * The stream ended; called exactly once, after which no other method is called.
     *
     * @param failure why it ended: a {@link org.zrm.changesource.ChangeStreamClosedException} when
     *     closed locally or ended cleanly by the server, another {@link ChangeSourceException}
     *     otherwise
     */
    void onEnd(ChangeSourceException failure);
}

package org.zrm.replica.sync;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;

/** A stream of given message texts that ends (closed) after the last one, or fails with {@code failure}. */
final class ListStream implements ChangeStream {

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    private final Deque<String> messages;
    private final ChangeSourceException failure;
    boolean closed;

    ListStream(List<String> messages) {
        this(messages, null);
    }

    ListStream(List<String> messages, ChangeSourceException failure) {
        this.messages = new ArrayDeque<>(messages);
        this.failure = failure;
    }

    @Override
    public ChangeStreamMessage take() throws ChangeSourceException {
        if (messages.isEmpty()) {
            if (failure != null) {
                throw failure;
            }
            throw new ChangeStreamClosedException("test stream ended");
        }
        return CODEC.decodeChangeStreamMessage(messages.poll());
    }

    @Override
    public ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException {
        return take();
    }

    @Override
    public void ack(ChangeSourceUpstream ack) {}

    @Override
    public void close() {
        closed = true;
    }
}

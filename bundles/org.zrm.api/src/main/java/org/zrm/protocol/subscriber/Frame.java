package org.zrm.protocol.subscriber;

import java.util.Objects;

/**
 * A server→subscriber WebSocket text frame, {@code {"id":<id>,"msg":<msg>}}. The message text is
 * carried verbatim: the server builds the frame by string concatenation around an
 * already-stringified {@link Downstream}, and catch-up messages are rebuilt from stored text, so
 * the message must never be re-serialized.
 *
 * @param id message number; starts at 1 per connection and increases by 1
 * @param msg the raw JSON text of the {@link Downstream} message
 */
public record Frame(long id, String msg) {

    public Frame {
        Objects.requireNonNull(msg, "msg");
    }

    /** The frame text, {@code {"id":<id>,"msg":<msg>}}. */
    public String toJson() {
        return new StringBuilder(msg.length() + 28).append("{\"id\":").append(id)
                .append(",\"msg\":").append(msg).append('}').toString();
    }
}

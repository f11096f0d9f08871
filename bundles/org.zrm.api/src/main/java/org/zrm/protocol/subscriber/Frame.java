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

    /** The character that ends every frame, after its message. */
    public static final char END = '}';

    /**
     * The frame text before its message, {@code {"id":<id>,"msg":}} (ASCII). A server that sends one
     * message to many connections writes this per connection, then the message's shared bytes, then
     * {@link #END}.
     *
     * @param id the frame's message number
     * @return the text up to the message
     * @since 1.1
     */
    public static String prefix(long id) {
        return "{\"id\":" + id + ",\"msg\":";
    }

    /** The frame text, {@code {"id":<id>,"msg":<msg>}}. */
    public String toJson() {
        String prefix = prefix(id);
        return new StringBuilder(prefix.length() + msg.length() + 1).append(prefix).append(msg).append(END)
                .toString();
    }
}

package org.zrm.protocol.subscriber;

import java.util.Objects;
import org.zrm.protocol.Passthrough;

/**
 * Body of an {@code error} message: {@code {"type":1,"message":"…"}}.
 *
 * @param type the error type
 * @param message description; {@code null} = absent
 * @param extra unknown members
 */
public record SubscriptionError(ErrorType type, String message, Passthrough extra) {

    public SubscriptionError {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(extra, "extra").requireNoneOf("type", "message");
    }

    /** An error without unknown members. */
    public SubscriptionError(ErrorType type, String message) {
        this(type, message, Passthrough.NONE);
    }
}

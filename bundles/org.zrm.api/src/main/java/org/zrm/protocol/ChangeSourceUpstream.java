package org.zrm.protocol;

import java.util.Objects;

/**
 * The upstream (change-streamer → change source) acknowledgement:
 * {@code ["status", body, {"watermark": W}]}, where {@code body} is the {@link Commit} body of a
 * durably stored transaction (unless its begin had {@code skipAck}) or the echo of a
 * {@link DownstreamStatus} whose {@code ack} was true. When decoding, a body whose {@code tag} is
 * {@code "commit"} is a {@link Commit}; anything else is a {@link DownstreamStatus}.
 *
 * @param body the acknowledged commit or status body
 * @param watermark the acknowledged position
 * @param trailerExtra unknown members of the third element
 */
public record ChangeSourceUpstream(UpstreamStatusBody body, String watermark, Passthrough trailerExtra) {

    /** First tuple element. */
    public static final String TYPE = "status";

    public ChangeSourceUpstream {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(watermark, "watermark");
        Objects.requireNonNull(trailerExtra, "trailerExtra").requireNoneOf("watermark");
    }

    /** An ack with a plain trailer. */
    public ChangeSourceUpstream(UpstreamStatusBody body, String watermark) {
        this(body, watermark, Passthrough.NONE);
    }
}

package org.zrm.protocol;

import java.util.Objects;

/**
 * Begin of a transaction: {@code {"tag":"begin", …}}. Apart from {@code json} and {@code skipAck}
 * the body is source specific; the Postgres source sends {@code commitLsn}, {@code commitTime}
 * (µs, a bigint) and {@code xid}, which live in {@link #extra()}.
 *
 * @param json format of JSON column values; {@code null} = absent, meaning {@link JsonFormat#PARSED}
 * @param skipAck whether the change-streamer must not ack the commit; {@code null} = absent (false)
 * @param extra unknown members (never {@code null}; use {@link Passthrough#NONE})
 */
public record Begin(JsonFormat json, Boolean skipAck, Passthrough extra) implements Change {

    /** Wire tag. */
    public static final String TAG = "begin";

    public Begin {
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "json", "skipAck");
    }

    @Override
    public String tag() {
        return TAG;
    }

    /** The effective JSON format ({@code p} when absent). */
    public JsonFormat effectiveJsonFormat() {
        return json == null ? JsonFormat.PARSED : json;
    }

    /** Whether the commit of this transaction must not be acknowledged upstream. */
    public boolean skipsAck() {
        return Boolean.TRUE.equals(skipAck);
    }
}

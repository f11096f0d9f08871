package org.zrm.protocol.subscriber;

/**
 * A subscriber→server acknowledgement frame, {@code {"ack":<id>}}; acks must arrive in id order.
 *
 * @param id the acknowledged {@link Frame#id()}
 */
public record Ack(long id) {

    /** The frame text, {@code {"ack":<id>}}. */
    public String toJson() {
        return "{\"ack\":" + id + "}";
    }
}

package org.zrm.changestreamer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One message of a {@link Subscription}, with its consumption acknowledgement.
 */
@ProviderType
public interface SubscriptionMessage {

    /**
     * @return the serialised {@code Downstream} message, e.g.
     *     {@code ["commit",{"tag":"commit",...},{"watermark":"4e672g"}]}; bigints are bare numbers
     *     and the text must be sent without re-serialising it
     */
    String json();

    /**
     * The length of {@link #json()} in {@code char}s, the unit in which subscriber buffers and send
     * windows are bounded. A message shared by many subscribers knows it without reading its text,
     * which a fan-out transport would otherwise do for every message and subscriber.
     *
     * @return {@code json().length()}
     * @since 2.6
     */
    default int jsonLength() {
        return json().length();
    }

    /**
     * The {@link #json()} text encoded as UTF-8, for a transport that writes bytes. A message that
     * the streamer hands to many subscribers returns views of one shared encoding, so a fan-out
     * encodes each message once rather than once per subscriber.
     *
     * @return a read-only buffer positioned at the first byte; each call returns a new view, so the
     *     caller may move its position freely, but must not assume it owns the bytes
     * @since 2.1
     */
    default ByteBuffer utf8() {
        return ByteBuffer.wrap(json().getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
    }

    /**
     * The {@link #utf8()} bytes without a view of their own: for a message the streamer hands to
     * many subscribers, the one buffer they all share. A fan-out transport copies each message
     * once per subscriber, and a new view per copy was one more object per message and
     * subscriber.
     *
     * @return a read-only buffer positioned at the first byte, which the caller reads with absolute
     *     gets only: it must not move the buffer's position, limit or mark, since other callers may
     *     be reading the same buffer
     * @since 2.3
     */
    default ByteBuffer sharedUtf8() {
        return utf8();
    }

    /**
     * Reports that the subscriber has consumed this message (its frame was acknowledged, or an
     * in-process consumer applied it). Acknowledging a {@code commit} also advances the
     * subscriber's acknowledged watermark, which gates purging. Messages must be acknowledged in
     * the order they were taken; consumption of one message implies consumption of all earlier
     * ones. Idempotent, thread-safe, non-blocking; calls after the subscription was closed are
     * ignored.
     */
    void consumed();
}

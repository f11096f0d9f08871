package org.zrm.changestreamer.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.zrm.changestreamer.SubscriptionMessage;

/**
 * A change on its way to subscribers: the commit watermark of its transaction, its tag (the
 * message type for {@code begin}/{@code commit}/{@code rollback}, the change's tag for
 * {@code data}) and its serialised downstream text, shared by every subscriber.
 *
 * <p>A class rather than a record only so that it can carry its text's UTF-8 encoding, made once
 * on first use and then shared by every subscriber's transport (a fan-out to 50 WebSockets encodes
 * each message once, not 50 times). It holds no other state; equality is by value.
 *
 * <p>It is also the message a transport that acknowledges by count is handed for it
 * ({@link org.zrm.changestreamer.Subscription#pollShared}): the same object for every subscriber,
 * which is why it cannot be {@linkplain #consumed() consumed} itself.
 */
final class WatermarkedChange implements SubscriptionMessage {

    private final String watermark;
    private final String tag;
    private final String json;
    /**
     * {@code json.length()} and whether this is a {@code commit}, kept so that the outboxes and
     * transports of a fan-out, which ask for every change and subscriber, read one object rather
     * than the text and the tag behind it.
     */
    private final int jsonLength;
    private final boolean commit;
    /**
     * The encoding of {@link #json}, as a read-only buffer whose position is never moved (callers
     * get duplicates). Racy on purpose, like {@link String#hashCode()}: two threads may both
     * encode it, and either result is the same bytes.
     */
    private volatile ByteBuffer utf8;

    /**
     * @param watermark the transaction's commit watermark
     * @param tag e.g. {@code begin}, {@code insert}, {@code update-table-metadata}, {@code commit}
     * @param json the downstream message text, sent verbatim
     */
    WatermarkedChange(String watermark, String tag, String json) {
        this.watermark = Objects.requireNonNull(watermark, "watermark");
        this.tag = Objects.requireNonNull(tag, "tag");
        this.json = Objects.requireNonNull(json, "json");
        this.jsonLength = json.length();
        this.commit = "commit".equals(tag);
    }

    String watermark() {
        return watermark;
    }

    String tag() {
        return tag;
    }

    @Override
    public String json() {
        return json;
    }

    @Override
    public int jsonLength() {
        return jsonLength;
    }

    /**
     * @return {@link #json()} as UTF-8: a new read-only view (one object per call and subscriber)
     *     of bytes shared by every caller
     */
    @Override
    public ByteBuffer utf8() {
        return sharedUtf8().duplicate();
    }

    /**
     * @return {@link #json()} as UTF-8: the one read-only buffer every caller shares, which they
     *     read with absolute gets only ({@link org.zrm.changestreamer.SubscriptionMessage#sharedUtf8()})
     */
    @Override
    public ByteBuffer sharedUtf8() {
        ByteBuffer shared = utf8;
        if (shared == null) {
            shared = ByteBuffer.wrap(json.getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
            utf8 = shared;
        }
        return shared;
    }

    /**
     * Refused: this change is shared by every subscriber it is sent to, so it cannot say which one
     * consumed it; the transport reports it through
     * {@link org.zrm.changestreamer.Subscription#consumedNext(int)}.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public void consumed() {
        throw new UnsupportedOperationException("a change shared by every subscriber is reported consumed through"
                + " Subscription.consumedNext, not by itself");
    }

    boolean isCommit() {
        return commit;
    }

    boolean endsTransaction() {
        return "commit".equals(tag) || "rollback".equals(tag);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WatermarkedChange c && watermark.equals(c.watermark) && tag.equals(c.tag)
                && json.equals(c.json);
    }

    @Override
    public int hashCode() {
        return Objects.hash(watermark, tag, json);
    }

    @Override
    public String toString() {
        return "WatermarkedChange[watermark=" + watermark + ", tag=" + tag + ", json=" + json + "]";
    }
}

package org.zrm.changestreamer;

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
     * Reports that the subscriber has consumed this message (its frame was acknowledged, or an
     * in-process consumer applied it). Acknowledging a {@code commit} also advances the
     * subscriber's acknowledged watermark, which gates purging. Messages must be acknowledged in
     * the order they were taken; consumption of one message implies consumption of all earlier
     * ones. Idempotent, thread-safe, non-blocking; calls after the subscription was closed are
     * ignored.
     */
    void consumed();
}

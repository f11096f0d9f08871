package org.zrm.protocol.subscriber;

import java.util.Objects;
import org.zrm.protocol.ChangeStreamData;

/**
 * A message from the change-streamer to a subscriber (the {@code msg} of a {@link Frame}):
 * <pre>
 * ["status", {"tag":"status","lagReport":{…}}]
 * ["begin", …] | ["data", …] | ["commit", …] | ["rollback", …]   (as in the change-source protocol)
 * ["error", {"type":n,"message":"…"}]
 * </pre>
 */
public sealed interface Downstream
        permits Downstream.StatusMessage, Downstream.ChangeMessage, Downstream.ErrorMessage {

    /** The first tuple element. */
    String type();

    /**
     * {@code ["status", status]}, sent first on every valid v2+ subscription and whenever the
     * source reports lag.
     *
     * @param status the status body
     */
    record StatusMessage(StreamerStatus status) implements Downstream {
        /** First tuple element. */
        public static final String TYPE = "status";

        public StatusMessage {
            Objects.requireNonNull(status, "status");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A {@code begin}, {@code data}, {@code commit} or {@code rollback} tuple.
     *
     * @param data the change tuple
     */
    record ChangeMessage(ChangeStreamData data) implements Downstream {
        public ChangeMessage {
            Objects.requireNonNull(data, "data");
        }

        @Override
        public String type() {
            return data.type();
        }
    }

    /**
     * {@code ["error", error]}: the subscription was rejected.
     *
     * @param error the error body
     */
    record ErrorMessage(SubscriptionError error) implements Downstream {
        /** First tuple element. */
        public static final String TYPE = "error";

        public ErrorMessage {
            Objects.requireNonNull(error, "error");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }
}

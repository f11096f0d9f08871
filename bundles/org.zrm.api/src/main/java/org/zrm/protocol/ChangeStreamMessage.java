package org.zrm.protocol;

import java.util.Objects;

/**
 * A downstream message of the change-source protocol (change source → change-streamer), a JSON
 * array whose first element names the kind:
 * <pre>
 * ["begin",    Begin,  {"commitWatermark":W}]
 * ["data",     DataChange | SchemaChange]
 * ["commit",   Commit, {"watermark":W}]
 * ["rollback", Rollback]
 * ["control",  ResetRequired]
 * ["status",   DownstreamStatus, {"watermark":W}]
 * </pre>
 * The first four form {@link ChangeStreamData}, which is also what subscribers of the
 * change-streamer receive. Unknown members of the trailing watermark objects are kept in
 * {@code trailerExtra}.
 */
public sealed interface ChangeStreamMessage
        permits ChangeStreamData, ChangeStreamMessage.ControlMessage, ChangeStreamMessage.StatusMessage {

    /** The first tuple element: {@code begin}, {@code data}, {@code commit}, … */
    String type();

    /** Classification of the carried change; {@link ChangeKind#NONE} for all but {@code data}. */
    default ChangeKind kind() {
        return ChangeKind.NONE;
    }

    /**
     * {@code ["begin", begin, {"commitWatermark": commitWatermark}]}.
     *
     * @param begin the begin body
     * @param commitWatermark watermark of the commit that will end this transaction
     * @param trailerExtra unknown members of the third element
     */
    record BeginMessage(Begin begin, String commitWatermark, Passthrough trailerExtra)
            implements ChangeStreamData {
        /** First tuple element. */
        public static final String TYPE = "begin";

        public BeginMessage {
            Objects.requireNonNull(begin, "begin");
            Objects.requireNonNull(commitWatermark, "commitWatermark");
            Objects.requireNonNull(trailerExtra, "trailerExtra").requireNoneOf("commitWatermark");
        }

        /** A begin message with a plain trailer. */
        public BeginMessage(Begin begin, String commitWatermark) {
            this(begin, commitWatermark, Passthrough.NONE);
        }

        @Override
        public String type() {
            return TYPE;
        }

        @Override
        public Change change() {
            return begin;
        }
    }

    /**
     * {@code ["data", change]}.
     *
     * @param change a data or schema change
     */
    record DataMessage(DataOrSchemaChange change) implements ChangeStreamData {
        /** First tuple element. */
        public static final String TYPE = "data";

        public DataMessage {
            Objects.requireNonNull(change, "change");
        }

        @Override
        public String type() {
            return TYPE;
        }

        @Override
        public ChangeKind kind() {
            return change.kind();
        }
    }

    /**
     * {@code ["commit", commit, {"watermark": watermark}]}.
     *
     * @param commit the commit body
     * @param watermark the commit watermark; equals the begin's {@code commitWatermark}
     * @param trailerExtra unknown members of the third element
     */
    record CommitMessage(Commit commit, String watermark, Passthrough trailerExtra)
            implements ChangeStreamData {
        /** First tuple element. */
        public static final String TYPE = "commit";

        public CommitMessage {
            Objects.requireNonNull(commit, "commit");
            Objects.requireNonNull(watermark, "watermark");
            Objects.requireNonNull(trailerExtra, "trailerExtra").requireNoneOf("watermark");
        }

        /** A commit message with a plain trailer. */
        public CommitMessage(Commit commit, String watermark) {
            this(commit, watermark, Passthrough.NONE);
        }

        @Override
        public String type() {
            return TYPE;
        }

        @Override
        public Change change() {
            return commit;
        }
    }

    /**
     * {@code ["rollback", rollback]}.
     *
     * @param rollback the rollback body
     */
    record RollbackMessage(Rollback rollback) implements ChangeStreamData {
        /** First tuple element. */
        public static final String TYPE = "rollback";

        public RollbackMessage {
            Objects.requireNonNull(rollback, "rollback");
        }

        @Override
        public String type() {
            return TYPE;
        }

        @Override
        public Change change() {
            return rollback;
        }
    }

    /**
     * {@code ["control", resetRequired]}; never forwarded to subscribers.
     *
     * @param control the control body
     */
    record ControlMessage(ResetRequired control) implements ChangeStreamMessage {
        /** First tuple element. */
        public static final String TYPE = "control";

        public ControlMessage {
            Objects.requireNonNull(control, "control");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * {@code ["status", status, {"watermark": watermark}]}.
     *
     * @param status the status body
     * @param watermark the source's position
     * @param trailerExtra unknown members of the third element
     */
    record StatusMessage(DownstreamStatus status, String watermark, Passthrough trailerExtra)
            implements ChangeStreamMessage {
        /** First tuple element. */
        public static final String TYPE = "status";

        public StatusMessage {
            Objects.requireNonNull(status, "status");
            Objects.requireNonNull(watermark, "watermark");
            Objects.requireNonNull(trailerExtra, "trailerExtra").requireNoneOf("watermark");
        }

        /** A status message with a plain trailer. */
        public StatusMessage(DownstreamStatus status, String watermark) {
            this(status, watermark, Passthrough.NONE);
        }

        @Override
        public String type() {
            return TYPE;
        }
    }
}

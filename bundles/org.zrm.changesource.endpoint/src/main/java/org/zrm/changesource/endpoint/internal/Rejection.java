package org.zrm.changesource.endpoint.internal;

/**
 * Why a connection is refused or closed. Every reason has one WebSocket close code, a stable
 * name (the label of the rejects counter in {@code /status} and {@code /metrics}) and a message
 * that goes into the close reason and the single log line; the message never contains the API key.
 */
final class Rejection extends Exception {

    private static final long serialVersionUID = 1L;

    /** WebSocket close codes (RFC 6455 §7.4.1, plus the 4000 range for application codes). */
    enum Reason {
        /** Missing or wrong apiKey. 1008: policy violation. */
        UNAUTHORIZED(1008, "unauthorized"),
        /** Missing or invalid appID, shardNum, publications, lastWatermark/replicaVersion pairing. */
        BAD_PARAMETERS(1008, "bad-parameters"),
        /** Undecodable, oversized or unexpected upstream frames. 1002: protocol error. */
        PROTOCOL(1002, "protocol"),
        /** The watermark or replica version cannot be served; sent after a reset-required message. */
        RESET_REQUIRED(1000, "reset-required"),
        /** No change streamer, or its change log failed. 1011: internal error; clients retry. */
        UNAVAILABLE(1011, "unavailable");

        final int closeCode;
        final String label;

        Reason(int closeCode, String label) {
            this.closeCode = closeCode;
            this.label = label;
        }
    }

    private final Reason reason;

    Rejection(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    Reason reason() {
        return reason;
    }
}

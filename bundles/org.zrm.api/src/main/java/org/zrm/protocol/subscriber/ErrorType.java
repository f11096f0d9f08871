package org.zrm.protocol.subscriber;

/** The {@code type} of a subscription {@code error} message (a number on the wire). */
public enum ErrorType {
    /** {@code 0}: unknown failure; never actually sent (upstream quirk), the socket just closes. */
    UNKNOWN(0),
    /** {@code 1}: the subscriber's replica version differs from the change-streamer's. */
    WRONG_REPLICA_VERSION(1),
    /** {@code 2}: the requested watermark is older than the change log's oldest entry. */
    WATERMARK_TOO_OLD(2);

    private final int code;

    ErrorType(int code) {
        this.code = code;
    }

    /** The wire number. */
    public int code() {
        return code;
    }

    /** The constant for a wire number, or {@code null} if there is none. */
    public static ErrorType fromCode(long code) {
        for (ErrorType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        return null;
    }
}

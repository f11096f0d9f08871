package org.zrm.changestreamer.http.internal;

import java.nio.ByteBuffer;

/**
 * RFC 6455 constants and the header of the frames this server writes: always final (whole
 * messages, never fragmented), never masked (RFC 6455 §5.1: a server must not mask), no
 * extensions (none is negotiated, so the RSV bits stay clear).
 */
final class WebSocketFrames {

    static final int OP_CONTINUATION = 0x0;
    static final int OP_TEXT = 0x1;
    static final int OP_BINARY = 0x2;
    static final int OP_CLOSE = 0x8;
    static final int OP_PING = 0x9;
    static final int OP_PONG = 0xA;

    /** Close codes (RFC 6455 §7.4.1, and the IANA registry for 1012–1014). */
    static final int NORMAL = 1000;
    static final int SHUTDOWN = 1001;
    static final int PROTOCOL = 1002;
    /** Received in no close frame: the peer's close frame carried no code. Never sent. */
    static final int NO_CODE = 1005;
    static final int BAD_PAYLOAD = 1007;
    static final int MESSAGE_TOO_LARGE = 1009;
    static final int SERVER_ERROR = 1011;
    static final int TRY_AGAIN_LATER = 1013;

    /** Control frames carry at most 125 bytes (§5.5). */
    static final int MAX_CONTROL_PAYLOAD = 125;
    /** The longest header of a server frame: 2 bytes plus a 64-bit length. */
    static final int MAX_SERVER_HEADER = 10;

    private WebSocketFrames() {
    }

    /** @return the header length of a server frame with {@code payloadLength} bytes */
    static int headerLength(long payloadLength) {
        return payloadLength <= 125 ? 2 : payloadLength <= 0xFFFF ? 4 : 10;
    }

    /** Writes a final, unmasked frame header for {@code opcode} and {@code payloadLength} bytes. */
    static void putHeader(ByteBuffer out, int opcode, long payloadLength) {
        out.put((byte) (0x80 | opcode));
        if (payloadLength <= 125) {
            out.put((byte) payloadLength);
        } else if (payloadLength <= 0xFFFF) {
            out.put((byte) 126).putShort((short) payloadLength);
        } else {
            out.put((byte) 127).putLong(payloadLength);
        }
    }

    /**
     * Whether a peer may send {@code code} in a close frame (§7.4: 1004–1006 and 1015 are reserved
     * for local use, codes below 3000 must be registered, 5000 and above are not valid).
     */
    static boolean isValidReceivedCloseCode(int code) {
        return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
    }
}

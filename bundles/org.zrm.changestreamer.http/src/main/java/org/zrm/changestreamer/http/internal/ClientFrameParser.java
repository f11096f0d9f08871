package org.zrm.changestreamer.http.internal;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;

/**
 * Reads the frames a WebSocket client sends (RFC 6455 §5), from bytes as they arrive.
 *
 * <p>Only whole frames are handed on: {@link #parse} consumes the complete frames at the front of
 * the buffer and leaves a partial one in place, telling the caller how many bytes that frame
 * needs, so that the caller can make room for it. A frame's payload is unmasked in place and
 * handed on as a view of the caller's buffer, from the view's position to its limit, valid
 * during the call only: no payload is copied, and one view serves all the frames of a
 * {@link #parse} call, repositioned for each, which matters because a subscriber acks every
 * message it receives (a view per frame was two buffer objects per ack).
 *
 * <p>Every violation of the protocol stops the parser with a {@link Violation} carrying the close
 * code and reason to send: an unmasked frame, RSV bits (no extension is negotiated), an unknown
 * opcode, a fragmented or oversized control frame, a continuation without a message, a new
 * message inside a fragmented one, a data frame above the size bound (1009), and an invalid close
 * frame. After a violation or a close frame the parser reads nothing more.
 *
 * <p>Not thread-safe: one connection's reads arrive one at a time.
 */
final class ClientFrameParser {

    /**
     * What the frames say. A payload is the bytes from its position to its limit, valid during the
     * call only; the handler may move its position, but must not keep it or read outside it.
     */
    interface Handler {
        /** A data frame: the first of a message ({@code first}) or a continuation. */
        void data(int opcode, ByteBuffer payload, boolean first, boolean fin);

        void ping(ByteBuffer payload);

        void pong();

        /** The client's close frame; {@code code} is {@link WebSocketFrames#NO_CODE} without one. */
        void closeFrame(int code, String reason);
    }

    /** A protocol violation: the connection must be closed with {@code code} and {@code reason}. */
    static final class Violation extends Exception {
        private static final long serialVersionUID = 1L;
        final int code;

        Violation(int code, String reason) {
            super(reason, null, false, false);
            this.code = code;
        }
    }

    private final long maxDataPayload;
    /** The opcode of the fragmented message in progress, or -1 between messages. */
    private int messageOpcode = -1;
    private boolean stopped;

    /**
     * @param maxDataPayload the largest data frame payload accepted; larger ones close with 1009.
     *     A frame is held whole in one buffer, so at most about 2 GiB whatever is configured.
     */
    ClientFrameParser(long maxDataPayload) {
        this.maxDataPayload = Math.min(maxDataPayload, Integer.MAX_VALUE - 64);
    }

    /**
     * Consumes the whole frames from {@code in}'s position, handing each to {@code handler}.
     *
     * @return 0 if {@code in} is empty afterwards, otherwise the total size of the partial frame
     *     left at its position (its header, or header and payload once the header is complete),
     *     which the caller must make room for before the next read
     * @throws Violation on a protocol violation; the parser reads nothing more
     */
    int parse(ByteBuffer in, Handler handler) throws Violation {
        ByteBuffer view = null;
        while (in.hasRemaining() && !stopped) {
            int start = in.position();
            int available = in.remaining();
            if (available < 2) {
                return 2;
            }
            int b0 = in.get(start) & 0xFF;
            int b1 = in.get(start + 1) & 0xFF;
            boolean fin = (b0 & 0x80) != 0;
            int opcode = b0 & 0x0F;
            if ((b0 & 0x70) != 0) {
                throw violation(WebSocketFrames.PROTOCOL, "RSV bits set without a negotiated extension");
            }
            if ((b1 & 0x80) == 0) {
                throw violation(WebSocketFrames.PROTOCOL, "Client frame is not masked");
            }
            int len7 = b1 & 0x7F;
            int lengthBytes = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
            int headerLength = 2 + lengthBytes + 4;
            if (available < headerLength) {
                return headerLength;
            }
            long payloadLength = len7 == 126 ? in.getShort(start + 2) & 0xFFFF
                    : len7 == 127 ? in.getLong(start + 2) : len7;
            if (payloadLength < 0) {
                // RFC 6455 §5.2: the most significant bit of a 64-bit length must be 0. Read as a
                // signed number it would move the position backwards and parse one frame forever.
                throw violation(WebSocketFrames.PROTOCOL, "Frame length with its most significant bit set");
            }
            check(opcode, fin, payloadLength);
            long frameLength = headerLength + payloadLength;
            if (available < frameLength) {
                return (int) frameLength; // bounded by check(): a data frame by maxDataPayload
            }
            int mask = in.getInt(start + 2 + lengthBytes);
            int payloadStart = start + headerLength;
            int payloadEnd = (int) (payloadStart + payloadLength);
            unmask(in, payloadStart, payloadEnd, mask);
            if (view == null) {
                view = in.duplicate();
            }
            // The limit first: the position a handler left may be beyond this frame's end.
            view.limit(payloadEnd).position(payloadStart);
            in.position(payloadEnd);
            deliver(opcode, fin, view, handler);
        }
        return 0;
    }

    private void check(int opcode, boolean fin, long payloadLength) throws Violation {
        switch (opcode) {
            case WebSocketFrames.OP_CLOSE, WebSocketFrames.OP_PING, WebSocketFrames.OP_PONG -> {
                if (!fin) {
                    throw violation(WebSocketFrames.PROTOCOL, "Fragmented control frame");
                }
                if (payloadLength > WebSocketFrames.MAX_CONTROL_PAYLOAD) {
                    throw violation(WebSocketFrames.PROTOCOL, "Control frame payload of " + payloadLength
                            + " bytes exceeds " + WebSocketFrames.MAX_CONTROL_PAYLOAD);
                }
            }
            case WebSocketFrames.OP_TEXT, WebSocketFrames.OP_BINARY, WebSocketFrames.OP_CONTINUATION -> {
                if (opcode == WebSocketFrames.OP_CONTINUATION && messageOpcode < 0) {
                    throw violation(WebSocketFrames.PROTOCOL, "Continuation frame without a message to continue");
                }
                if (opcode != WebSocketFrames.OP_CONTINUATION && messageOpcode >= 0) {
                    throw violation(WebSocketFrames.PROTOCOL, "New message inside a fragmented message");
                }
                if (payloadLength > maxDataPayload) {
                    int kind = opcode == WebSocketFrames.OP_CONTINUATION ? messageOpcode : opcode;
                    throw violation(WebSocketFrames.MESSAGE_TOO_LARGE,
                            (kind == WebSocketFrames.OP_TEXT ? "Text" : "Binary") + " message too large: more than "
                                    + maxDataPayload + " bytes");
                }
            }
            default -> throw violation(WebSocketFrames.PROTOCOL, "Unknown opcode " + opcode);
        }
    }

    private void deliver(int opcode, boolean fin, ByteBuffer payload, Handler handler) throws Violation {
        switch (opcode) {
            case WebSocketFrames.OP_PING -> handler.ping(payload);
            case WebSocketFrames.OP_PONG -> handler.pong();
            case WebSocketFrames.OP_CLOSE -> {
                stopped = true;
                readClose(payload, handler);
            }
            case WebSocketFrames.OP_CONTINUATION -> {
                int message = messageOpcode;
                if (fin) {
                    messageOpcode = -1;
                }
                handler.data(message, payload, false, fin);
            }
            default -> {
                if (!fin) {
                    messageOpcode = opcode;
                }
                handler.data(opcode, payload, true, fin);
            }
        }
    }

    private static void readClose(ByteBuffer payload, Handler handler) throws Violation {
        if (payload.remaining() == 0) {
            handler.closeFrame(WebSocketFrames.NO_CODE, "");
            return;
        }
        if (payload.remaining() == 1) {
            throw new Violation(WebSocketFrames.PROTOCOL, "Close frame with a one-byte payload");
        }
        int code = payload.getShort() & 0xFFFF;
        if (!WebSocketFrames.isValidReceivedCloseCode(code)) {
            throw new Violation(WebSocketFrames.PROTOCOL, "Invalid close code " + code);
        }
        String reason;
        try {
            reason = StandardCharsets.UTF_8.newDecoder().decode(payload).toString();
        } catch (CharacterCodingException e) {
            throw new Violation(WebSocketFrames.BAD_PAYLOAD, "Close reason is not valid UTF-8");
        }
        handler.closeFrame(code, reason);
    }

    private Violation violation(int code, String reason) {
        stopped = true;
        return new Violation(code, reason);
    }

    /** XORs the payload with the 4-byte mask (big-endian in {@code mask}), a long at a time. */
    private static void unmask(ByteBuffer in, int from, int to, int mask) {
        long mask8 = ((mask & 0xFFFFFFFFL) << 32) | (mask & 0xFFFFFFFFL);
        int i = from;
        for (; i + 8 <= to; i += 8) {
            in.putLong(i, in.getLong(i) ^ mask8);
        }
        for (int k = 0; i < to; i++, k++) {
            int shift = 24 - 8 * (k & 3);
            in.put(i, (byte) (in.get(i) ^ (mask >>> shift)));
        }
    }
}

package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ClientFrameParser} on frames built byte by byte (RFC 6455 §5.2): masking, the three
 * length encodings, partial frames, fragmentation, control frames and every violation with the
 * close code the connection must send.
 */
class ClientFrameParserTest {

    private static final int MAX = 64 << 10;
    private static final byte[] MASK = {0x37, (byte) 0xFA, 0x21, 0x3D};

    /** One call the parser made to its handler; payloads are copied, as they are valid during the call only. */
    record Event(String kind, int opcode, byte[] payload, boolean first, boolean fin, int code, String reason) {

        static Event data(int opcode, byte[] payload, boolean first, boolean fin) {
            return new Event("data", opcode, payload, first, fin, 0, null);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Event e && kind.equals(e.kind) && opcode == e.opcode
                    && Arrays.equals(payload, e.payload) && first == e.first && fin == e.fin && code == e.code
                    && Objects.equals(reason, e.reason);
        }

        @Override
        public int hashCode() {
            return kind.hashCode();
        }

        @Override
        public String toString() {
            return kind + "(op=" + opcode + ", payload=" + (payload == null ? null : new String(payload,
                    StandardCharsets.UTF_8)) + ", first=" + first + ", fin=" + fin + ", code=" + code + ", reason="
                    + reason + ")";
        }
    }

    static class Recorder implements ClientFrameParser.Handler {
        final List<Event> events = new ArrayList<>();

        @Override
        public void data(int opcode, ByteBuffer payload, boolean first, boolean fin) {
            events.add(Event.data(opcode, bytes(payload), first, fin));
        }

        @Override
        public void ping(ByteBuffer payload) {
            events.add(new Event("ping", WebSocketFrames.OP_PING, bytes(payload), true, true, 0, null));
        }

        @Override
        public void pong() {
            events.add(new Event("pong", WebSocketFrames.OP_PONG, null, true, true, 0, null));
        }

        @Override
        public void closeFrame(int code, String reason) {
            events.add(new Event("close", WebSocketFrames.OP_CLOSE, null, true, true, code, reason));
        }

        private static byte[] bytes(ByteBuffer b) {
            byte[] copy = new byte[b.remaining()];
            b.duplicate().get(copy);
            return copy;
        }
    }

    // ------------------------------------------------------------------ frame building

    /** A final or non-final client frame with the shortest length encoding, masked with {@code mask} if {@code masked}. */
    static byte[] frame(int b0, byte[] payload, byte[] mask, boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        int maskBit = masked ? 0x80 : 0;
        if (payload.length <= 125) {
            out.write(maskBit | payload.length);
        } else if (payload.length <= 0xFFFF) {
            out.write(maskBit | 126);
            out.write(payload.length >>> 8);
            out.write(payload.length);
        } else {
            out.write(maskBit | 127);
            out.writeBytes(ByteBuffer.allocate(8).putLong(payload.length).array());
        }
        if (masked) {
            out.writeBytes(mask);
        }
        for (int i = 0; i < payload.length; i++) {
            out.write(masked ? payload[i] ^ mask[i & 3] : payload[i]);
        }
        return out.toByteArray();
    }

    static byte[] masked(int opcode, boolean fin, byte[] payload) {
        return frame((fin ? 0x80 : 0) | opcode, payload, MASK, true);
    }

    static byte[] text(String s) {
        return masked(WebSocketFrames.OP_TEXT, true, utf8(s));
    }

    static byte[] close(int code, byte[] reason) {
        ByteBuffer payload = ByteBuffer.allocate(2 + reason.length).putShort((short) code).put(reason);
        return masked(WebSocketFrames.OP_CLOSE, true, payload.array());
    }

    /** A frame header with a 64-bit length field holding {@code length}, masked, no payload. */
    static byte[] header64(int b0, long length) {
        return ByteBuffer.allocate(14).put((byte) b0).put((byte) (0x80 | 127)).putLong(length).put(MASK).array();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] random(Random r, int length) {
        byte[] b = new byte[length];
        r.nextBytes(b);
        return b;
    }

    private static ClientFrameParser.Violation violation(byte[] bytes) {
        return violation(new ClientFrameParser(MAX), bytes);
    }

    private static ClientFrameParser.Violation violation(ClientFrameParser parser, byte[] bytes) {
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(bytes);
        ClientFrameParser.Violation v = assertThrows(ClientFrameParser.Violation.class, () -> parser.parse(in, h));
        assertEquals(List.of(), h.events, "nothing delivered for the offending frame");
        return v;
    }

    // ------------------------------------------------------------------ well-formed frames

    @Test
    void aMaskedTextFrameIsUnmaskedAndDeliveredWhole() throws Exception {
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(text("{\"ack\":1}"));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(Event.data(WebSocketFrames.OP_TEXT, utf8("{\"ack\":1}"), true, true)), h.events);
        assertFalse(in.hasRemaining());
    }

    @Test
    void severalFramesInOneBufferAreDeliveredInOrder() throws Exception {
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(concat(text("{\"ack\":1}"), masked(WebSocketFrames.OP_PING, true, utf8("p")),
                text("{\"ack\":2}"), masked(WebSocketFrames.OP_PONG, true, new byte[0]),
                masked(WebSocketFrames.OP_BINARY, true, new byte[] {1, 2, 3})));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(
                Event.data(WebSocketFrames.OP_TEXT, utf8("{\"ack\":1}"), true, true),
                new Event("ping", WebSocketFrames.OP_PING, utf8("p"), true, true, 0, null),
                Event.data(WebSocketFrames.OP_TEXT, utf8("{\"ack\":2}"), true, true),
                new Event("pong", WebSocketFrames.OP_PONG, null, true, true, 0, null),
                Event.data(WebSocketFrames.OP_BINARY, new byte[] {1, 2, 3}, true, true)), h.events);
        assertEquals(in.limit(), in.position());
    }

    /**
     * The frames of one parse share one view of the buffer, repositioned for each: a handler that
     * reads its payload to the end (moving the view past where the next, shorter frame ends) must
     * not disturb the payloads after it.
     */
    @Test
    void aHandlerThatReadsItsPayloadDoesNotDisturbTheFramesAfterIt() throws Exception {
        List<String> seen = new ArrayList<>();
        ClientFrameParser.Handler reading = new Recorder() {
            @Override
            public void data(int opcode, ByteBuffer payload, boolean first, boolean fin) {
                seen.add(drain(payload));
            }

            @Override
            public void ping(ByteBuffer payload) {
                seen.add("ping " + drain(payload));
            }

            private String drain(ByteBuffer payload) {
                byte[] b = new byte[payload.remaining()];
                payload.get(b);
                return new String(b, StandardCharsets.UTF_8);
            }
        };
        String long1 = "{\"ack\":1234567890}";
        ByteBuffer in = ByteBuffer.wrap(concat(text(long1), text("{\"ack\":2}"),
                masked(WebSocketFrames.OP_PING, true, utf8("p")), text("{\"ack\":33}")));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, reading));
        assertEquals(List.of(long1, "{\"ack\":2}", "ping p", "{\"ack\":33}"), seen);
    }

    /**
     * The caller sizes its read buffer by the return value, so each prefix must ask for exactly
     * what is known to be missing, and must neither consume nor unmask anything.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 9, 125, 126, 1000, 0xFFFF, 0x10000, 70_000})
    void aFrameSplitAtEveryByteAsksForWhatItNeedsAndIsDeliveredOnceComplete(int length) throws Exception {
        byte[] payload = random(new Random(length), length);
        byte[] frame = masked(WebSocketFrames.OP_TEXT, true, payload);
        int header = 2 + (length <= 125 ? 0 : length <= 0xFFFF ? 2 : 8) + 4;
        assertEquals(header + length, frame.length);
        byte[] pristine = frame.clone();
        ClientFrameParser parser = new ClientFrameParser(1 << 20);
        Recorder h = new Recorder();
        for (int k = 1; k < frame.length; k++) {
            ByteBuffer in = ByteBuffer.wrap(frame, 0, k);
            int expected = k < 2 ? 2 : k < header ? header : frame.length;
            assertEquals(expected, parser.parse(in, h), "prefix of " + k + " bytes");
            assertEquals(0, in.position(), "prefix of " + k + " bytes is not consumed");
        }
        assertEquals(List.of(), h.events);
        assertArrayEquals(pristine, frame, "a partial frame is not unmasked");

        ByteBuffer in = ByteBuffer.wrap(frame);
        assertEquals(0, parser.parse(in, h));
        assertEquals(List.of(Event.data(WebSocketFrames.OP_TEXT, payload, true, true)), h.events);
        assertEquals(frame.length, in.position());
    }

    @Test
    void bytesArrivingInPiecesAreParsedAsTheWireFeedsThem() throws Exception {
        // The wire reads into a buffer it compacts; simulate arbitrary read sizes over a stream of frames.
        Random r = new Random(42);
        List<Event> expected = new ArrayList<>();
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (int i = 0; i < 200; i++) {
            byte[] p = random(r, r.nextInt(4) == 0 ? 126 + r.nextInt(2000) : r.nextInt(40));
            stream.writeBytes(masked(WebSocketFrames.OP_BINARY, true, p));
            expected.add(Event.data(WebSocketFrames.OP_BINARY, p, true, true));
        }
        byte[] all = stream.toByteArray();
        ClientFrameParser parser = new ClientFrameParser(MAX);
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.allocate(all.length).flip();
        int offset = 0;
        while (offset < all.length) {
            int n = Math.min(1 + r.nextInt(300), all.length - offset);
            in.compact().put(all, offset, n).flip();
            offset += n;
            int needed = parser.parse(in, h);
            assertEquals(needed == 0, !in.hasRemaining(), "0 exactly when everything was consumed");
            assertTrue(needed == 0 || needed > in.remaining(), "asks for more than it has");
        }
        assertEquals(expected, h.events);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 23, 31, 33, 61,
        125, 126, 127, 1001, 0xFFFF, 0x10000, 0x10003})
    void payloadsOfEveryLengthAreUnmaskedExactly(int length) throws Exception {
        Random r = new Random(1000 + length);
        byte[] payload = random(r, length);
        // Several random masks and starting offsets: the long-at-a-time loop must line up with
        // the mask wherever the payload begins, and the tail must continue the mask's phase.
        for (int trial = 0; trial < 8; trial++) {
            byte[] mask = random(r, 4);
            byte[] frame = frame(0x80 | WebSocketFrames.OP_BINARY, payload, mask, true);
            int start = trial;
            ByteBuffer in = ByteBuffer.allocate(start + frame.length);
            in.position(start).put(frame).flip().position(start);
            Recorder h = new Recorder();
            assertEquals(0, new ClientFrameParser(1 << 20).parse(in, h));
            assertEquals(List.of(Event.data(WebSocketFrames.OP_BINARY, payload, true, true)), h.events,
                    "length " + length + ", mask " + Arrays.toString(mask) + ", start " + start);
        }
    }

    @Test
    void aDirectBufferIsUnmaskedLikeAHeapBuffer() throws Exception {
        byte[] payload = random(new Random(7), 77);
        byte[] frame = masked(WebSocketFrames.OP_TEXT, true, payload);
        ByteBuffer in = ByteBuffer.allocateDirect(frame.length + 3);
        in.position(3);
        in.put(frame).flip().position(3);
        Recorder h = new Recorder();
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(Event.data(WebSocketFrames.OP_TEXT, payload, true, true)), h.events);
    }

    @Test
    void sixteenAndSixtyFourBitLengthsAreRead() throws Exception {
        byte[] p16 = random(new Random(16), 300);
        byte[] p64 = random(new Random(64), 70_000);
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(concat(masked(WebSocketFrames.OP_TEXT, true, p16),
                masked(WebSocketFrames.OP_TEXT, true, p64)));
        assertEquals(126, in.get(1) & 0x7F);
        assertEquals(127, in.get(2 + 2 + 4 + 300 + 1) & 0x7F);
        assertEquals(0, new ClientFrameParser(1 << 20).parse(in, h));
        assertEquals(List.of(Event.data(WebSocketFrames.OP_TEXT, p16, true, true),
                Event.data(WebSocketFrames.OP_TEXT, p64, true, true)), h.events);
    }

    @Test
    void aFragmentedTextMessageIsDeliveredAsItsFramesWithTheTextOpcode() throws Exception {
        Recorder h = new Recorder();
        ClientFrameParser parser = new ClientFrameParser(MAX);
        ByteBuffer in = ByteBuffer.wrap(concat(
                masked(WebSocketFrames.OP_TEXT, false, utf8("{\"ack\"")),
                masked(WebSocketFrames.OP_CONTINUATION, false, utf8(":")),
                // Control frames may come between the fragments of a message (§5.4).
                masked(WebSocketFrames.OP_PING, true, utf8("x")),
                masked(WebSocketFrames.OP_CONTINUATION, true, utf8("2}")),
                // The message is over: a new one may start, and a continuation may not.
                text("{\"ack\":3}")));
        assertEquals(0, parser.parse(in, h));
        assertEquals(List.of(
                Event.data(WebSocketFrames.OP_TEXT, utf8("{\"ack\""), true, false),
                Event.data(WebSocketFrames.OP_TEXT, utf8(":"), false, false),
                new Event("ping", WebSocketFrames.OP_PING, utf8("x"), true, true, 0, null),
                Event.data(WebSocketFrames.OP_TEXT, utf8("2}"), false, true),
                Event.data(WebSocketFrames.OP_TEXT, utf8("{\"ack\":3}"), true, true)), h.events);
        ClientFrameParser.Violation v = violation(parser, masked(WebSocketFrames.OP_CONTINUATION, true, utf8("x")));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
    }

    @Test
    void aFragmentedBinaryMessageKeepsTheBinaryOpcode() throws Exception {
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(concat(masked(WebSocketFrames.OP_BINARY, false, new byte[] {1}),
                masked(WebSocketFrames.OP_CONTINUATION, true, new byte[] {2})));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(Event.data(WebSocketFrames.OP_BINARY, new byte[] {1}, true, false),
                Event.data(WebSocketFrames.OP_BINARY, new byte[] {2}, false, true)), h.events);
    }

    @Test
    void aPingDeliversItsPayloadAndAPongIsReported() throws Exception {
        Recorder h = new Recorder();
        byte[] longest = random(new Random(125), WebSocketFrames.MAX_CONTROL_PAYLOAD);
        ByteBuffer in = ByteBuffer.wrap(concat(masked(WebSocketFrames.OP_PING, true, utf8("hi")),
                masked(WebSocketFrames.OP_PING, true, longest), masked(WebSocketFrames.OP_PONG, true, utf8("ignored"))));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(new Event("ping", WebSocketFrames.OP_PING, utf8("hi"), true, true, 0, null),
                new Event("ping", WebSocketFrames.OP_PING, longest, true, true, 0, null),
                new Event("pong", WebSocketFrames.OP_PONG, null, true, true, 0, null)), h.events);
    }

    @Test
    void aCloseFrameDeliversItsCodeAndReason() throws Exception {
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(close(1000, utf8("bye \u00e9\ud83d\ude00")));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(new Event("close", WebSocketFrames.OP_CLOSE, null, true, true, 1000,
                "bye \u00e9\ud83d\ude00")), h.events);
    }

    @Test
    void aCloseFrameWithoutPayloadHasNoCode() throws Exception {
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(masked(WebSocketFrames.OP_CLOSE, true, new byte[0]));
        assertEquals(0, new ClientFrameParser(MAX).parse(in, h));
        assertEquals(List.of(new Event("close", WebSocketFrames.OP_CLOSE, null, true, true, WebSocketFrames.NO_CODE,
                "")), h.events);
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1001, 1002, 1003, 1007, 1008, 1011, 1014, 3000, 4000, 4999})
    void everyCodeAPeerMaySendIsAccepted(int code) throws Exception {
        Recorder h = new Recorder();
        assertEquals(0, new ClientFrameParser(MAX).parse(ByteBuffer.wrap(close(code, new byte[0])), h));
        assertEquals(List.of(new Event("close", WebSocketFrames.OP_CLOSE, null, true, true, code, "")), h.events);
    }

    @Test
    void nothingIsReadAfterACloseFrame() throws Exception {
        Recorder h = new Recorder();
        ClientFrameParser parser = new ClientFrameParser(MAX);
        byte[] closeFrame = close(1000, new byte[0]);
        ByteBuffer in = ByteBuffer.wrap(concat(closeFrame, text("{\"ack\":1}"), masked(WebSocketFrames.OP_PING, true,
                new byte[0])));
        assertEquals(0, parser.parse(in, h));
        assertEquals(List.of(new Event("close", WebSocketFrames.OP_CLOSE, null, true, true, 1000, "")), h.events);
        assertEquals(closeFrame.length, in.position(), "the frames behind the close frame stay unread");
        // Later reads, even invalid bytes, are ignored as well.
        assertEquals(0, parser.parse(ByteBuffer.wrap(concat(text("{\"ack\":2}"), new byte[] {(byte) 0xFF, 0})), h));
        assertEquals(1, h.events.size());
    }

    @Test
    void nothingIsReadAfterAViolation() throws Exception {
        ClientFrameParser parser = new ClientFrameParser(MAX);
        violation(parser, frame(0x80 | WebSocketFrames.OP_TEXT, utf8("x"), MASK, false));
        Recorder h = new Recorder();
        ByteBuffer in = ByteBuffer.wrap(text("{\"ack\":1}"));
        assertEquals(0, parser.parse(in, h));
        assertEquals(List.of(), h.events);
    }

    // ------------------------------------------------------------------ violations

    @Test
    void anUnmaskedFrameIsAProtocolError() {
        byte[] bytes = frame(0x80 | WebSocketFrames.OP_TEXT, utf8("{\"ack\":1}"), MASK, false);
        ClientFrameParser.Violation v = violation(bytes);
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Client frame is not masked", v.getMessage());
    }

    @Test
    void anUnmaskedFrameIsRefusedFromItsFirstTwoBytes() {
        // No need to wait for a length or payload that will never be valid.
        ClientFrameParser.Violation v = violation(new byte[] {(byte) 0x81, 0x7F});
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
    }

    @ParameterizedTest
    @ValueSource(ints = {0x40, 0x20, 0x10, 0x70})
    void rsvBitsAreAProtocolError(int rsv) {
        ClientFrameParser.Violation v = violation(frame(0x80 | rsv | WebSocketFrames.OP_TEXT, utf8("x"), MASK, true));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("RSV bits set without a negotiated extension", v.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 4, 5, 6, 7, 11, 12, 13, 14, 15})
    void unknownOpcodesAreAProtocolError(int opcode) {
        ClientFrameParser.Violation v = violation(masked(opcode, true, utf8("x")));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Unknown opcode " + opcode, v.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {WebSocketFrames.OP_PING, WebSocketFrames.OP_PONG, WebSocketFrames.OP_CLOSE})
    void aFragmentedControlFrameIsAProtocolError(int opcode) {
        ClientFrameParser.Violation v = violation(masked(opcode, false, new byte[0]));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Fragmented control frame", v.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {WebSocketFrames.OP_PING, WebSocketFrames.OP_PONG, WebSocketFrames.OP_CLOSE})
    void aControlPayloadAbove125BytesIsAProtocolError(int opcode) {
        ClientFrameParser.Violation v = violation(masked(opcode, true, new byte[126]));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Control frame payload of 126 bytes exceeds 125", v.getMessage());
    }

    @Test
    void aContinuationWithoutAMessageIsAProtocolError() {
        ClientFrameParser.Violation v = violation(masked(WebSocketFrames.OP_CONTINUATION, true, utf8("x")));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Continuation frame without a message to continue", v.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {WebSocketFrames.OP_TEXT, WebSocketFrames.OP_BINARY})
    void aNewMessageInsideAFragmentedOneIsAProtocolError(int opcode) throws Exception {
        ClientFrameParser parser = new ClientFrameParser(MAX);
        Recorder h = new Recorder();
        assertEquals(0, parser.parse(ByteBuffer.wrap(masked(WebSocketFrames.OP_TEXT, false, utf8("{"))), h));
        ClientFrameParser.Violation v = violation(parser, masked(opcode, true, utf8("x")));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("New message inside a fragmented message", v.getMessage());
    }

    @Test
    void aDataFrameAboveTheBoundIsTooLargeAndRefusedFromItsHeader() throws Exception {
        ClientFrameParser parser = new ClientFrameParser(100);
        Recorder h = new Recorder();
        assertEquals(0, parser.parse(ByteBuffer.wrap(masked(WebSocketFrames.OP_TEXT, true, new byte[100])), h));
        assertEquals(1, h.events.size(), "exactly the bound is accepted");
        byte[] tooLarge = masked(WebSocketFrames.OP_TEXT, true, new byte[101]);
        // Only the header has arrived: the parser must not ask the caller to buffer the payload.
        ClientFrameParser.Violation v = violation(parser, Arrays.copyOf(tooLarge, 2 + 4));
        assertEquals(WebSocketFrames.MESSAGE_TOO_LARGE, v.code);
        assertEquals("Text message too large: more than 100 bytes", v.getMessage());
    }

    @Test
    void aHugeDeclaredLengthIsRefusedWithoutBuffering() {
        ClientFrameParser.Violation v = violation(new ClientFrameParser(MAX),
                header64(0x80 | WebSocketFrames.OP_TEXT, Integer.MAX_VALUE + 10L));
        assertEquals(WebSocketFrames.MESSAGE_TOO_LARGE, v.code);
        assertEquals("Text message too large: more than " + MAX + " bytes", v.getMessage());
    }

    @Test
    void aBinaryOrContinuationFrameAboveTheBoundNamesItsMessageKind() throws Exception {
        ClientFrameParser.Violation binary = violation(new ClientFrameParser(100),
                masked(WebSocketFrames.OP_BINARY, true, new byte[101]));
        assertEquals(WebSocketFrames.MESSAGE_TOO_LARGE, binary.code);
        assertEquals("Binary message too large: more than 100 bytes", binary.getMessage());

        ClientFrameParser parser = new ClientFrameParser(100);
        parser.parse(ByteBuffer.wrap(masked(WebSocketFrames.OP_TEXT, false, utf8("{"))), new Recorder());
        ClientFrameParser.Violation continuation = violation(parser,
                masked(WebSocketFrames.OP_CONTINUATION, true, new byte[101]));
        assertEquals(WebSocketFrames.MESSAGE_TOO_LARGE, continuation.code);
        assertEquals("Text message too large: more than 100 bytes", continuation.getMessage());
    }

    @Test
    void aOneBytePayloadInACloseFrameIsAProtocolError() {
        ClientFrameParser.Violation v = violation(masked(WebSocketFrames.OP_CLOSE, true, new byte[] {3}));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Close frame with a one-byte payload", v.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535})
    void aCloseCodeAPeerMayNotSendIsAProtocolError(int code) {
        ClientFrameParser.Violation v = violation(close(code, utf8("r")));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals("Invalid close code " + code, v.getMessage());
    }

    @Test
    void aCloseReasonThatIsNotUtf8IsABadPayload() {
        ClientFrameParser.Violation v = violation(close(1000, new byte[] {'o', (byte) 0xC3, 0x28}));
        assertEquals(WebSocketFrames.BAD_PAYLOAD, v.code);
        assertEquals("Close reason is not valid UTF-8", v.getMessage());
    }

    @Test
    void aDataFrameWithTheTopBitOfItsLengthSetIsRefused() {
        // §5.2: "the most significant bit MUST be 0". As a signed long it is negative.
        ClientFrameParser.Violation v = violation(header64(0x80 | WebSocketFrames.OP_TEXT, -1L));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
    }

    /**
     * The same length field on a control frame: a negative length passes the {@code > 125} check,
     * and {@code payloadEnd} wraps to before the payload, so the parser moves its position
     * backwards; with the length {@code -14} (minus the header) it lands on the frame's own start
     * and delivers the same ping forever, each answered by a pong. The handler stops it after a
     * few deliveries so that the failure is reported instead of hanging.
     */
    @ParameterizedTest
    @ValueSource(longs = {-14L, -1L, Long.MIN_VALUE})
    void aControlFrameWithTheTopBitOfItsLengthSetIsAProtocolError(long length) {
        byte[] bytes = concat(header64(0x80 | WebSocketFrames.OP_PING, length), new byte[8]);
        ClientFrameParser parser = new ClientFrameParser(MAX);
        List<String> delivered = new ArrayList<>();
        ClientFrameParser.Handler stopAfterTen = new Recorder() {
            @Override
            public void ping(ByteBuffer payload) {
                delivered.add("ping of " + payload.remaining());
                if (delivered.size() >= 10) {
                    throw new IllegalStateException("delivered " + delivered);
                }
            }
        };
        ClientFrameParser.Violation v = assertThrows(ClientFrameParser.Violation.class,
                () -> parser.parse(ByteBuffer.wrap(bytes), stopAfterTen));
        assertEquals(WebSocketFrames.PROTOCOL, v.code);
        assertEquals(List.of(), delivered);
    }
}

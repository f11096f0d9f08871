package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.function.Consumer;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FrameOutput} against the plain answer: the same appends into one large heap buffer. The
 * chunking must be invisible on the socket (one byte stream, whatever chunk a frame starts or
 * ends in), and the chunks must go back to Jetty's pool, or every connection would leak 64 KiB
 * buffers for each write.
 */
class FrameOutputTest {

    private static final int CHUNK = FrameOutput.CHUNK_BYTES;

    /** The appends {@link FrameOutput} offers, so one script drives it and the reference alike. */
    private interface Sink {
        void header(int opcode, long payloadLength);

        void textFrame(long id, ByteBuffer body, byte suffix);

        void put(byte value);

        void putShort(short value);

        void put(ByteBuffer src);
    }

    private static Sink of(FrameOutput out) {
        return new Sink() {
            @Override
            public void header(int opcode, long payloadLength) {
                out.header(opcode, payloadLength);
            }

            @Override
            public void textFrame(long id, ByteBuffer body, byte suffix) {
                out.textFrame(id, body, suffix);
            }

            @Override
            public void put(byte value) {
                out.put(value);
            }

            @Override
            public void putShort(short value) {
                out.putShort(value);
            }

            @Override
            public void put(ByteBuffer src) {
                out.put(src);
            }
        };
    }

    private static Sink of(ByteBuffer ref) {
        return new Sink() {
            @Override
            public void header(int opcode, long payloadLength) {
                WebSocketFrames.putHeader(ref, opcode, payloadLength);
            }

            @Override
            public void textFrame(long id, ByteBuffer body, byte suffix) {
                byte[] prefix = prefix(id).getBytes(StandardCharsets.US_ASCII);
                WebSocketFrames.putHeader(ref, WebSocketFrames.OP_TEXT, prefix.length + (long) body.remaining() + 1);
                ref.put(prefix).put(body.duplicate()).put(suffix);
            }

            @Override
            public void put(byte value) {
                ref.put(value);
            }

            @Override
            public void putShort(short value) {
                ref.putShort(value);
            }

            @Override
            public void put(ByteBuffer src) {
                ref.put(src.duplicate());
            }
        };
    }

    /** The id prefix as the protocol's definition spells it. */
    private static String prefix(long id) {
        return org.zrm.protocol.subscriber.Frame.prefix(id);
    }

    /** @return the expected bytes: what the same appends put into one plain buffer */
    private static byte[] reference(Consumer<Sink> script, int capacity) {
        ByteBuffer ref = ByteBuffer.allocate(capacity);
        script.accept(of(ref));
        return Arrays.copyOf(ref.array(), ref.position());
    }

    /** @return the chunks' remaining bytes in order, without moving their positions */
    private static byte[] concat(RetainableByteBuffer[] chunks) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (RetainableByteBuffer c : chunks) {
            ByteBuffer b = c.getByteBuffer().duplicate();
            byte[] part = new byte[b.remaining()];
            b.get(part);
            all.writeBytes(part);
        }
        return all.toByteArray();
    }

    // ------------------------------------------------------------------ headers

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 125, 126, 127, 1000, 0xFFFF, 0x10000, 70_000, 0xFFFF_FFFFL, 1L << 40})
    void headersAreThoseOfWebSocketFrames(long payloadLength) {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        for (int opcode : new int[] {WebSocketFrames.OP_TEXT, WebSocketFrames.OP_PONG, WebSocketFrames.OP_CLOSE}) {
            FrameOutput out = new FrameOutput(pool);
            out.header(opcode, payloadLength);
            int expectedLength = payloadLength <= 125 ? 2 : payloadLength <= 0xFFFF ? 4 : 10;
            assertEquals(expectedLength, out.bytes(), "bytes() of the header of " + payloadLength);
            RetainableByteBuffer[] chunks = out.take();
            byte[] actual = concat(chunks);
            FrameOutput.release(chunks);
            assertArrayEquals(reference(s -> s.header(opcode, payloadLength), 16), actual,
                    "header of opcode " + opcode + " and " + payloadLength + " bytes");
        }
    }

    // ------------------------------------------------------------------ id prefixes

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 9, 10, 99, 100, 999_999_999, 1_000_000_000, 4_294_967_296L, Long.MAX_VALUE})
    void aTextFramesIdPrefixIsTheProtocolsPrefixInAsciiAndItsLengthIsKnownBeforehand(long id) {
        FrameOutput out = new FrameOutput(new ArrayByteBufferPool());
        ByteBuffer body = ByteBuffer.wrap("[\"x\"]".getBytes(StandardCharsets.US_ASCII));
        out.textFrame(id, body, (byte) '}');
        assertEquals(0, body.position(), "the body is read, not consumed");
        assertEquals(prefix(id).length(), FrameOutput.idPrefixLength(id));
        String text = prefix(id) + "[\"x\"]}";
        assertEquals(2 + text.length(), out.bytes());
        RetainableByteBuffer[] chunks = out.take();
        byte[] frame = concat(chunks);
        assertEquals(0x81, frame[0] & 0xff, "a final text frame");
        assertEquals(text.length(), frame[1], "its payload length");
        assertEquals(text, new String(frame, 2, frame.length - 2, StandardCharsets.US_ASCII));
        FrameOutput.release(chunks);
    }

    /** Around every power of ten a long holds, where the digit count changes. */
    @Test
    void anIdPrefixsLengthIsRightOnEitherSideOfEveryPowerOfTen() {
        long power = 1;
        for (int k = 0; k <= 18; k++, power *= 10) {
            for (long id = Math.max(0, power - 2); id <= power + 1; id++) {
                assertEquals(prefix(id).length(), FrameOutput.idPrefixLength(id), "id " + id);
            }
        }
    }

    @Test
    void aNegativeIdIsRefused() {
        FrameOutput out = new FrameOutput(new ArrayByteBufferPool());
        assertThrows(IllegalArgumentException.class, () -> out.textFrame(-1, ByteBuffer.allocate(0), (byte) '}'));
        assertThrows(IllegalArgumentException.class, () -> FrameOutput.idPrefixLength(-1));
        assertEquals(0, out.bytes());
    }

    // ------------------------------------------------------------------ chunking

    /**
     * Many frames of assorted sizes (so headers, id prefixes and bodies fall across chunk
     * edges at many offsets), a body of more than three chunks, and appends that leave a chunk
     * exactly full or one byte short of what the next append needs in one piece.
     */
    private static void manyFrames(Sink s) {
        Random r = new Random(42);
        for (int i = 0; i < 2_000; i++) {
            byte[] body = new byte[r.nextInt(300)];
            r.nextBytes(body);
            // Ids of every length, so that prefixes of every size meet the chunk edges.
            long id = i % 5 == 0 ? Long.MAX_VALUE - i : i % 5 == 1 ? i : (long) Math.pow(10, i % 19) - 1 + i % 2;
            s.textFrame(id, ByteBuffer.wrap(body), (byte) '}');
            if (i % 97 == 0) {
                s.header(WebSocketFrames.OP_PONG, 3);
                s.put(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            }
        }
        // A body of more than three chunks behind a 64-bit length, from a direct buffer whose
        // readable part does not start at 0.
        byte[] huge = new byte[3 * CHUNK + 12_345];
        r.nextBytes(huge);
        ByteBuffer direct = ByteBuffer.allocateDirect(huge.length + 7);
        direct.put(new byte[7]).put(huge).flip().position(7);
        s.header(WebSocketFrames.OP_TEXT, huge.length);
        s.put(direct);
        // Tiny close frames: 5 bytes each, so their 2-byte codes fall on every offset of a chunk.
        for (int i = 0; i < 3 * CHUNK / 7; i++) {
            s.header(WebSocketFrames.OP_CLOSE, 3);
            s.putShort((short) (1000 + i % 4000));
            s.put((byte) i);
        }
    }

    @Test
    void framesAcrossManyChunksComeOutAsOneByteStream() {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        FrameOutput out = new FrameOutput(pool);
        manyFrames(of(out));
        byte[] expected = reference(FrameOutputTest::manyFrames, 4 << 20);
        assertTrue(expected.length > 8L * CHUNK, "the test needs several chunks, got " + expected.length);
        assertEquals(expected.length, out.bytes());

        RetainableByteBuffer[] chunks = out.take();
        assertEquals(0, out.bytes(), "take() empties the output");
        assertTrue(chunks.length > 8, "chunks: " + chunks.length);
        for (RetainableByteBuffer c : chunks) {
            assertTrue(c.getByteBuffer().remaining() <= CHUNK, "a chunk holds at most CHUNK_BYTES");
        }
        assertArrayEquals(expected, concat(chunks));
        FrameOutput.release(chunks);
        assertEquals(0, out.take().length, "nothing is left after take()");
    }

    @Test
    void appendsAfterATakeStartANewStream() {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        FrameOutput out = new FrameOutput(pool);
        out.put(ascii("first"));
        RetainableByteBuffer[] first = out.take();
        out.put(ascii("second"));
        assertEquals(6, out.bytes());
        RetainableByteBuffer[] second = out.take();
        // The first batch may still be on its way to the socket: the second must not touch it.
        assertEquals("first", new String(concat(first), StandardCharsets.US_ASCII));
        assertEquals("second", new String(concat(second), StandardCharsets.US_ASCII));
        FrameOutput.release(first);
        FrameOutput.release(second);
    }

    @Test
    void putLeavesTheSourcePositionAlone() {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        FrameOutput out = new FrameOutput(pool);
        byte[] bytes = new byte[2 * CHUNK + 100];
        new Random(7).nextBytes(bytes);
        ByteBuffer src = ByteBuffer.wrap(bytes, 10, bytes.length - 20);
        out.put(src);
        // The same buffer is shared by every subscriber of a message, so it must read as before.
        assertEquals(10, src.position());
        assertEquals(bytes.length - 10, src.limit());
        out.put(src);
        assertEquals(10, src.position());
        RetainableByteBuffer[] chunks = out.take();
        byte[] once = Arrays.copyOfRange(bytes, 10, bytes.length - 10);
        assertArrayEquals(ClientFrameParserTest.concat(once, once), concat(chunks));
        FrameOutput.release(chunks);
    }

    @Test
    void anEmptyOutputTakesNoChunk() {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        FrameOutput out = new FrameOutput(pool);
        assertEquals(0, out.bytes());
        assertEquals(0, out.take().length);
        out.put(ByteBuffer.allocate(0));
        assertEquals(0, out.take().length, "an empty source appends nothing");
        assertEquals(0, pool.getDirectByteBufferCount() + pool.getHeapByteBufferCount(), "nothing was acquired");
    }

    // ------------------------------------------------------------------ the pool

    @Test
    void releasedChunksGoBackToThePoolAndAreReused() {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        FrameOutput out = new FrameOutput(pool);
        byte[] body = new byte[5 * CHUNK];
        out.put(ByteBuffer.wrap(body));
        RetainableByteBuffer[] chunks = out.take();
        assertEquals(5, chunks.length);
        // Jetty 12.0 adds a buffer acquired from an empty bucket to the pool only on its release,
        // so the counts are only meaningful from here on.
        FrameOutput.release(chunks);
        assertEquals(5, pool.getAvailableDirectByteBufferCount(), "released chunks are in the pool (direct buffers)");
        long pooled = pool.getDirectByteBufferCount();
        assertEquals(5, pooled);

        out.put(ByteBuffer.wrap(body, 0, 3 * CHUNK));
        assertEquals(2, pool.getAvailableDirectByteBufferCount(), "a second round takes pooled chunks");
        RetainableByteBuffer[] again = out.take();
        assertEquals(3, again.length);
        assertEquals(pooled, pool.getDirectByteBufferCount(), "reused, not allocated anew");
        FrameOutput.release(again);
        assertEquals(5, pool.getAvailableDirectByteBufferCount());
    }

    @Test
    void discardReturnsWhatWasNeverTaken() {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        FrameOutput out = new FrameOutput(pool);
        out.put(ByteBuffer.wrap(new byte[2 * CHUNK + 1]));
        out.header(WebSocketFrames.OP_CLOSE, 2);
        out.putShort((short) 1000);

        out.discard();
        assertEquals(0, out.bytes());
        assertEquals(0, out.take().length, "nothing is left to write after discard()");
        assertEquals(3, pool.getAvailableDirectByteBufferCount(), "discarded chunks are back in the pool");
    }

    private static ByteBuffer ascii(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    }
}

package org.zrm.changestreamer.http.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;

/**
 * The bytes of one connection's frames that are not on the socket yet, in chunks of
 * {@link #CHUNK_BYTES} taken from Jetty's shared buffer pool.
 *
 * <p>Why chunks: a connection that is catching up appends far more than one buffer's worth while a
 * write is in flight. A single buffer would have to grow by copying, and a grown buffer cannot go
 * back to a pool; chunks are appended to as they are, written together with one gathering write,
 * and returned to the pool once written, so memory follows what is pending and no copy is made
 * beyond the one into the chunk. A frame may span chunks: the socket sees one byte stream.
 *
 * <p>Not thread-safe: the wire guards it with its output lock. Bounded by the caller: the wire's
 * send windows bound the data frames, and it keeps at most one pong pending.
 */
final class FrameOutput {

    /** Large enough for hundreds of small frames, small enough that pooled chunks are cheap to keep. */
    static final int CHUNK_BYTES = 64 << 10;

    /** 10^0 .. 10^18, for {@link #digits}. */
    private static final long[] POWERS_OF_TEN = new long[19];

    static {
        POWERS_OF_TEN[0] = 1;
        for (int i = 1; i < POWERS_OF_TEN.length; i++) {
            POWERS_OF_TEN[i] = POWERS_OF_TEN[i - 1] * 10;
        }
    }

    private static final byte[] ID_OPEN = "{\"id\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ID_CLOSE = ",\"msg\":".getBytes(StandardCharsets.US_ASCII);

    private final ByteBufferPool pool;
    /** Chunks that are full, each in flush mode (ready to write). */
    private final ArrayDeque<RetainableByteBuffer> full = new ArrayDeque<>();
    /** The chunk being appended to, in fill mode, or {@code null}. */
    private RetainableByteBuffer current;
    /**
     * Where {@link #textFrame} puts a frame's header and id prefix together: at most a 10-byte
     * header and a 19-digit id.
     */
    private final ByteBuffer frameStart =
            ByteBuffer.allocate(WebSocketFrames.MAX_SERVER_HEADER + ID_OPEN.length + 19 + ID_CLOSE.length);
    private long bytes;

    FrameOutput(ByteBufferPool pool) {
        this.pool = pool;
    }

    /** @return the bytes appended and not yet taken */
    long bytes() {
        return bytes;
    }

    /** Appends a final, unmasked frame header (see {@link WebSocketFrames#putHeader}). */
    void header(int opcode, long payloadLength) {
        WebSocketFrames.putHeader(room(WebSocketFrames.MAX_SERVER_HEADER), opcode, payloadLength);
        bytes += WebSocketFrames.headerLength(payloadLength);
    }

    /**
     * Appends a final text frame of the id prefix {@code {"id":<id>,"msg":}}, the remaining bytes
     * of {@code body} (its position is not moved) and {@code suffix}: a data frame of the change
     * stream. The prefix is the only per-connection part of a fanned-out frame, and it is encoded
     * here digit by digit, with no string built per frame and subscriber. The header and the
     * prefix are put together in a small heap buffer and copied into the chunk at once: the
     * chunks are direct buffers, where each single-byte put costs far more than a heap store, and
     * a frame's start is about twenty of them.
     *
     * @param id the frame id, not negative
     */
    void textFrame(long id, ByteBuffer body, byte suffix) {
        int prefix = idPrefixLength(id);
        ByteBuffer start = frameStart.clear();
        WebSocketFrames.putHeader(start, WebSocketFrames.OP_TEXT, prefix + (long) body.remaining() + 1);
        start.put(ID_OPEN);
        int p = start.position();
        int digits = prefix - ID_OPEN.length - ID_CLOSE.length;
        long v = id;
        for (int i = p + digits - 1; i >= p; i--) {
            start.put(i, (byte) ('0' + (int) (v % 10)));
            v /= 10;
        }
        start.position(p + digits).put(ID_CLOSE).flip();
        room(start.remaining()).put(start);
        bytes += start.limit();
        put(body);
        put(suffix);
    }

    /** @return the length of the id prefix of {@link #textFrame}'s frame {@code id} */
    static int idPrefixLength(long id) {
        return ID_OPEN.length + digits(id) + ID_CLOSE.length;
    }

    /**
     * Decimal digits of {@code id}, without a loop: the bit length gives {@code floor(log10)} to
     * within one (1233 / 4096 is log10(2) to five places), and one comparison settles it. The send path
     * asks this three times per frame and subscriber (window, payload length, prefix).
     */
    private static int digits(long id) {
        if (id < 0) {
            throw new IllegalArgumentException("negative frame id " + id);
        }
        // id | 1 has as many digits as id (no power of ten above 1 is odd) and makes 0 count as 1.
        long v = id | 1;
        int guess = (Long.SIZE - Long.numberOfLeadingZeros(v)) * 1233 >>> 12;
        return guess + (v < POWERS_OF_TEN[guess] ? 0 : 1);
    }

    void put(byte value) {
        room(1).put(value);
        bytes++;
    }

    void putShort(short value) {
        room(2).putShort(value);
        bytes += 2;
    }

    /** Appends the remaining bytes of {@code src}; its position is not moved. */
    void put(ByteBuffer src) {
        int from = src.position();
        int end = src.limit();
        while (from < end) {
            ByteBuffer b = room(1);
            int n = Math.min(b.remaining(), end - from);
            b.put(b.position(), src, from, n);
            b.position(b.position() + n);
            from += n;
            bytes += n;
        }
    }

    /**
     * Takes everything appended, as buffers in flush mode for one gathering write. The output is
     * empty afterwards; the caller hands the chunks back through {@link #release} once written.
     *
     * @return the chunks, or an empty array if nothing was appended
     */
    RetainableByteBuffer[] take() {
        if (current != null) {
            full.addLast(flipped(current));
            current = null;
        }
        RetainableByteBuffer[] out = full.toArray(new RetainableByteBuffer[0]);
        full.clear();
        bytes = 0;
        return out;
    }

    /** Returns written (or abandoned) chunks to the pool. */
    static void release(RetainableByteBuffer[] chunks) {
        for (RetainableByteBuffer c : chunks) {
            c.release();
        }
    }

    /** Returns what was appended and never taken to the pool (the connection closed). */
    void discard() {
        release(take());
    }

    /** @return the current chunk, in fill mode, with at least {@code n} bytes free ({@code n <= CHUNK_BYTES}) */
    private ByteBuffer room(int n) {
        if (current != null && current.getByteBuffer().remaining() >= n) {
            return current.getByteBuffer();
        }
        if (current != null) {
            full.addLast(flipped(current));
        }
        current = pool.acquire(CHUNK_BYTES, true);
        ByteBuffer b = current.getByteBuffer();
        b.clear(); // a pooled buffer comes empty in flush mode; append from its start
        return b;
    }

    private static RetainableByteBuffer flipped(RetainableByteBuffer chunk) {
        chunk.getByteBuffer().flip();
        return chunk;
    }
}

package org.zrm.changestreamer.http.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.IteratingCallback;

/**
 * The WebSocket protocol on one upgraded connection, written directly on Jetty's {@link EndPoint}:
 * the frames of {@code /replication/*} go out below Jetty's WebSocket API.
 *
 * <p><b>Why not Jetty's WebSocket session.</b> A change stream is a long burst of small frames to
 * each of many subscribers, each frame acked by the client. Jetty's session sends every frame
 * through three flushers, each with a lock, a queue entry, a callback and a timeout registration,
 * and dispatches every incoming ack through its extension stack, its context scope and a method
 * handle; that per-frame machinery was most of the server's CPU per delivered frame in the
 * fan-out and catch-up benchmarks. Here a frame is its header and payload appended to one buffer
 * per connection, and acks are parsed in place from the read buffer ({@link ClientFrameParser}).
 *
 * <p><b>Writing.</b> Frames are appended to {@code pending} under {@code outLock} by whichever
 * thread sends. One write is in flight at a time ({@link Flusher}); it takes everything pending,
 * so a burst leaves in a few large writes. A frame appended with {@code flush == false} may wait
 * for the next one until {@link #WRITE_AT_BYTES} are pending; the caller flushes after the last
 * frame of a burst. The buffer is bounded by the caller's send window of characters written but
 * not yet on the socket ({@code send.maxQueuedChars}, released through
 * {@link Peer#written(long)}); at most one frame larger than that is held beyond it, and a buffer
 * grown for it is dropped after its write.
 *
 * <p><b>Reading.</b> Frames are parsed as they arrive. Pings are answered with pongs, a close frame
 * with a close frame; a protocol violation closes the connection with the parser's code and
 * reason. The read buffer holds one frame at most, bounded by {@code receive.maxMessageBytes}.
 *
 * <p><b>Closing.</b> {@link #close} appends a close frame after the frames already pending and
 * refuses later frames; once it is written the output is shut down, and the connection closes
 * when the client answers or goes away (the endpoint's idle timeout bounds a client that does
 * neither). {@link #abort} closes the socket at once.
 */
final class WebSocketWire extends AbstractConnection implements Connection.UpgradeTo, ClientFrameParser.Handler {

    /** The connection a wire serves; its calls come from Jetty's threads, one read at a time. */
    interface Peer {
        /** The upgrade completed; frames may be sent from now on. */
        void upgraded(WebSocketWire wire);

        /** A text or binary data frame; the payload is valid during the call only. */
        void data(int opcode, ByteBuffer payload, boolean first, boolean fin);

        /** A ping or pong arrived. */
        void heard();

        /**
         * A protocol violation; the peer closes the connection with {@code code} and
         * {@code reason} ({@link #closeOutput}). Nothing more is read.
         */
        void violated(int code, String reason);

        /** The client's close frame; the wire answers it. */
        void closedByClient(int code, String reason);

        /** Frames of {@code chars} characters (as counted by the sender) reached the socket. */
        void written(long chars);

        /** The socket closed, for whatever reason; {@code cause} is {@code null} after a clean close. */
        void disconnected(Throwable cause);
    }

    /**
     * Bytes pending at which a write starts without waiting for a flush: large enough for
     * hundreds of small frames per system call, small enough that the socket has work while a
     * long burst is still being appended.
     */
    static final int WRITE_AT_BYTES = 32 << 10;
    /** The output buffers' usual size; a buffer grown beyond it for one large frame is not kept. */
    static final int BUFFER_BYTES = 64 << 10;

    private final Peer peer;
    private final ClientFrameParser parser;
    private final int inputBytes;
    private final long idleTimeoutMillis;
    private final Flusher flusher = new Flusher();
    private ByteBuffer input;
    /**
     * After a close frame or a violation nothing more is parsed: what arrives is dropped, and
     * reading goes on only to see the client's end of the connection. Reading thread only.
     */
    private boolean discarding;

    private final Object outLock = new Object();
    /** Frames not yet handed to the socket, in fill mode; guarded by outLock. */
    private ByteBuffer pending = ByteBuffer.allocateDirect(BUFFER_BYTES);
    /** The characters of the frames in {@code pending}; guarded by outLock. */
    private long pendingChars;
    /** A flush was asked for the pending frames; guarded by outLock. */
    private boolean flushWanted;
    /** A close frame is pending or written: nothing more may be sent; guarded by outLock. */
    private boolean outputClosed;
    /** The pending bytes end with the close frame; guarded by outLock. */
    private boolean closePending;
    /** The client sent its close frame; guarded by outLock. */
    private boolean clientClosed;
    /** The buffer the flusher writes, and a free one; only the flusher touches them. */
    private ByteBuffer writing;
    private ByteBuffer spare = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private long writingChars;
    private boolean writingClose;

    /**
     * @param inputBytes the read buffer's usual size
     * @param maxMessageBytes the largest data frame accepted (1009 above it)
     * @param idleTimeoutMillis the socket's idle timeout, behind the peer's own liveness pings
     */
    WebSocketWire(EndPoint endPoint, Executor executor, Peer peer, int inputBytes, long maxMessageBytes,
            long idleTimeoutMillis) {
        super(endPoint, executor);
        this.peer = peer;
        this.parser = new ClientFrameParser(maxMessageBytes);
        this.inputBytes = inputBytes;
        this.idleTimeoutMillis = idleTimeoutMillis;
        this.input = ByteBuffer.allocate(inputBytes).flip();
    }

    @Override
    public void onUpgradeTo(ByteBuffer prefilled) {
        // Bytes the client sent right behind its upgrade request.
        if (prefilled != null && prefilled.hasRemaining()) {
            ensureInputRoom(prefilled.remaining());
            input.compact().put(prefilled).flip();
        }
    }

    @Override
    public void onOpen() {
        super.onOpen();
        getEndPoint().setIdleTimeout(idleTimeoutMillis);
        peer.upgraded(this);
        if (input.hasRemaining()) {
            readInput();
        }
        fillInterested();
    }

    // ------------------------------------------------------------------ reading

    @Override
    public void onFillable() {
        try {
            while (true) {
                int n = getEndPoint().fill(input);
                if (n < 0) {
                    // The client half-closed or went away: after our close frame, or without one.
                    getEndPoint().close();
                    return;
                }
                if (n == 0) {
                    fillInterested();
                    return;
                }
                readInput();
            }
        } catch (IOException e) {
            getEndPoint().close(e);
        }
    }

    /** Parses what was read; the buffer then has room for the rest of a partial frame. */
    private void readInput() {
        if (discarding) {
            input.position(input.limit());
            return;
        }
        int needed;
        try {
            needed = parser.parse(input, this);
        } catch (ClientFrameParser.Violation v) {
            discard();
            peer.violated(v.code, v.getMessage());
            return;
        }
        synchronized (outLock) {
            if (clientClosed) {
                discard();
                return;
            }
        }
        if (!input.hasRemaining() && input.capacity() > inputBytes) {
            input = ByteBuffer.allocate(inputBytes).flip(); // the large frame is done
        }
        ensureInputRoom(needed);
    }

    private void discard() {
        discarding = true;
        input = ByteBuffer.allocate(inputBytes).flip();
    }

    /** Makes room for a frame of {@code frameBytes} (0: nothing partial) behind the unread bytes. */
    private void ensureInputRoom(int frameBytes) {
        int unread = input.remaining();
        int needed = Math.max(frameBytes, unread + 1);
        if (input.capacity() < needed) {
            ByteBuffer larger = ByteBuffer.allocate(Math.max(needed, inputBytes));
            larger.put(input).flip();
            input = larger;
        } else if (input.capacity() - input.limit() < needed - unread) {
            input.compact().flip();
        }
    }

    @Override
    public void data(int opcode, ByteBuffer payload, boolean first, boolean fin) {
        peer.data(opcode, payload, first, fin);
    }

    @Override
    public void ping(ByteBuffer payload) {
        peer.heard();
        control(WebSocketFrames.OP_PONG, payload);
    }

    @Override
    public void pong() {
        peer.heard();
    }

    @Override
    public void closeFrame(int code, String reason) {
        boolean answer;
        synchronized (outLock) {
            clientClosed = true;
            answer = !outputClosed;
        }
        if (answer) {
            // Echo the client's code (RFC 6455 §5.5.1); without one, a plain normal close.
            closeOutput(code == WebSocketFrames.NO_CODE ? WebSocketFrames.NORMAL : code, "");
        } else {
            flusher.iterate(); // our close frame may be written already: then close the socket now
        }
        peer.closedByClient(code, reason);
    }

    @Override
    public boolean onIdleExpired(TimeoutException timeout) {
        peer.disconnected(timeout);
        return true; // Jetty closes the endpoint
    }

    @Override
    public void onClose(Throwable cause) {
        super.onClose(cause);
        flusher.abort(cause == null ? new IOException("connection closed") : cause);
        peer.disconnected(cause);
    }

    // ------------------------------------------------------------------ writing

    /**
     * Appends a text frame of {@code prefix} (ASCII), the remaining bytes of {@code body} and
     * {@code suffix}.
     *
     * @param chars what the caller counts for this frame; reported to {@link Peer#written} once the
     *     frame is on the socket
     * @param flush whether to write it, and the frames before it, now
     * @return {@code false} if the output is closed; nothing was appended
     */
    boolean sendText(String prefix, ByteBuffer body, byte suffix, long chars, boolean flush) {
        long payload = prefix.length() + (long) body.remaining() + 1;
        boolean write;
        synchronized (outLock) {
            if (outputClosed) {
                return false;
            }
            reserve(WebSocketFrames.headerLength(payload) + payload);
            WebSocketFrames.putHeader(pending, WebSocketFrames.OP_TEXT, payload);
            for (int i = 0; i < prefix.length(); i++) {
                pending.put((byte) prefix.charAt(i));
            }
            pending.put(body.duplicate()).put(suffix);
            pendingChars += chars;
            flushWanted |= flush;
            write = flushWanted || pending.position() >= WRITE_AT_BYTES;
        }
        if (write) {
            flusher.iterate();
        }
        return true;
    }

    /** Writes the frames appended without a flush. */
    void flush() {
        synchronized (outLock) {
            if (pending.position() == 0) {
                return;
            }
            flushWanted = true;
        }
        flusher.iterate();
    }

    /** Sends a ping with an empty payload. */
    void ping() {
        control(WebSocketFrames.OP_PING, ByteBuffer.allocate(0));
    }

    /**
     * Sends a close frame after the pending frames and refuses frames from now on; no-op if a close
     * frame was sent already.
     *
     * @param reason at most 123 bytes of UTF-8 (the caller elides it)
     */
    void closeOutput(int code, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        synchronized (outLock) {
            if (outputClosed) {
                return;
            }
            outputClosed = true;
            closePending = true;
            reserve(2 + 2 + text.length);
            WebSocketFrames.putHeader(pending, WebSocketFrames.OP_CLOSE, 2 + text.length);
            pending.putShort((short) code).put(text);
            flushWanted = true;
        }
        flusher.iterate();
    }

    /** Closes the socket at once, without a close handshake; pending frames are dropped. */
    void abort() {
        getEndPoint().close();
    }

    private void control(int opcode, ByteBuffer payload) {
        synchronized (outLock) {
            if (outputClosed) {
                return;
            }
            reserve(2 + payload.remaining());
            WebSocketFrames.putHeader(pending, opcode, payload.remaining());
            pending.put(payload.duplicate());
            flushWanted = true;
        }
        flusher.iterate();
    }

    /** Makes room for {@code bytes} in {@code pending}; guarded by outLock. */
    private void reserve(long bytes) {
        if (pending.remaining() >= bytes) {
            return;
        }
        long needed = pending.position() + bytes;
        if (needed > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("frame of " + bytes + " bytes does not fit a buffer");
        }
        ByteBuffer larger = ByteBuffer.allocate((int) Math.max(needed, 2L * pending.capacity()));
        larger.put(pending.flip());
        pending = larger;
    }

    /** Writes what is pending, one write at a time; Jetty's iterating callback avoids recursion. */
    private final class Flusher extends IteratingCallback {

        @Override
        protected Action process() {
            ByteBuffer next;
            synchronized (outLock) {
                if (writingClose) {
                    // The close frame is on the socket: half-close, or close once the client has answered.
                    writingClose = false;
                    if (clientClosed) {
                        getEndPoint().close();
                    } else {
                        getEndPoint().shutdownOutput();
                    }
                    return Action.IDLE;
                }
                if (pending.position() == 0 || !(flushWanted || pending.position() >= WRITE_AT_BYTES)) {
                    if (outputClosed && !closePending && clientClosed && writing == null) {
                        getEndPoint().close();
                    }
                    return Action.IDLE;
                }
                next = pending;
                pending = spare != null ? spare : ByteBuffer.allocateDirect(BUFFER_BYTES);
                spare = null;
                writingChars = pendingChars;
                pendingChars = 0;
                flushWanted = false;
                writingClose = closePending;
                closePending = false;
                writing = next;
            }
            getEndPoint().write(this, next.flip());
            return Action.SCHEDULED;
        }

        @Override
        protected void onSuccess() {
            long chars;
            synchronized (outLock) {
                chars = writingChars;
                writingChars = 0;
                ByteBuffer done = writing;
                writing = null;
                if (done.isDirect() && done.capacity() == BUFFER_BYTES) {
                    spare = done.clear();
                }
            }
            if (chars > 0) {
                peer.written(chars);
            }
        }

        @Override
        protected void onCompleteFailure(Throwable cause) {
            getEndPoint().close(cause);
        }
    }
}

package org.zrm.changestreamer.http.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The WebSocket protocol on one upgraded connection, written directly on Jetty's {@link EndPoint}:
 * the frames of {@code /replication/*} go out below Jetty's WebSocket API.
 *
 * <p><b>Why not Jetty's WebSocket session.</b> A change stream is a long burst of small frames to
 * each of many subscribers, each frame acked by the client. Jetty's session sends every frame
 * through three flushers, each with a lock, a queue entry, a callback and a timeout registration,
 * and dispatches every incoming ack through its extension stack, its context scope and a method
 * handle; that per-frame machinery was most of the server's CPU per delivered frame in the
 * fan-out and catch-up benchmarks. Here a frame is its header and payload appended to the
 * connection's {@link FrameOutput}, and acks are parsed in place from the read buffer
 * ({@link ClientFrameParser}).
 *
 * <p><b>Writing.</b> Frames are appended under {@code outLock} by whichever thread sends. One write
 * is in flight at a time ({@link Flusher}); it takes everything pending, so a burst leaves in a few
 * gathering writes. A frame appended with {@code flush == false} may wait for the next ones until
 * {@link #WRITE_AT_BYTES} are pending; the caller flushes after the last frame of a burst. What is
 * pending is bounded by the caller's send window of characters not yet on the socket
 * ({@code send.maxQueuedChars}, released through {@link Peer#written(long)}; up to three bytes a
 * character), plus at most one pong: a client that pings while it does not read gets one pong
 * for the first unanswered ping (RFC 6455 §5.5.3 allows answering only one).
 *
 * <p><b>Reading.</b> Frames are parsed as they arrive. Pings are answered with pongs, a close frame
 * with a close frame; a protocol violation is reported to the peer, which closes with the
 * parser's code and reason, and nothing more is parsed. The read buffer grows for one frame larger
 * than itself, bounded by {@code receive.maxMessageBytes}, and shrinks back after it.
 *
 * <p><b>Closing.</b> {@link #closeOutput} appends a close frame after the frames already pending and
 * refuses later frames; once it is written the output is shut down, and the connection closes
 * when the client answers or goes away, or after {@link #CLOSE_TIMEOUT_MILLIS} whatever the client
 * does. {@link #abort} closes the socket at once.
 */
final class WebSocketWire extends AbstractConnection implements Connection.UpgradeTo, ClientFrameParser.Handler {

    /**
     * The connection a wire serves. Reading calls ({@link #data}, {@link #heard}, {@link #violated},
     * {@link #closedByClient}, {@link #readFailed}) come one read at a time from Jetty's threads;
     * {@link #written} from whichever thread drives the write; {@link #disconnected} from any
     * thread, possibly more than once.
     */
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

        /**
         * Handling what was read failed unexpectedly (a bug, not the client's fault); the peer
         * closes the connection (1011). Nothing more is read.
         */
        void readFailed(RuntimeException failure);

        /**
         * One read's frames have all been handled, or reading stopped at a violation: the peer
         * finishes what it gathered over the read's frames (it settles their acks at once). A
         * runtime exception thrown here is reported through {@link #readFailed}, like one from
         * {@link #data}.
         */
        void readDone();

        /** Frames of {@code chars} characters (as counted by the sender) reached the socket. */
        void written(long chars);

        /** The socket closed or failed; {@code cause} is {@code null} after a clean close. */
        void disconnected(Throwable cause);
    }

    /**
     * Bytes pending at which a write starts without waiting for a flush: large enough for
     * hundreds of small frames per system call, small enough that the socket has work while a
     * long burst is still being appended.
     */
    static final int WRITE_AT_BYTES = 32 << 10;
    /**
     * How long the socket stays open after our close frame was written, for the client's close
     * frame and its end of the connection. A client that keeps sending instead would otherwise
     * keep the socket (and the idle timer) alive for ever.
     */
    static final long CLOSE_TIMEOUT_MILLIS = 5_000;

    private final Peer peer;
    private final ClientFrameParser parser;
    private final Scheduler scheduler;
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
    /** Frames not yet handed to the socket; guarded by outLock. */
    private final FrameOutput pending;
    /** The characters of the frames in {@code pending}; guarded by outLock. */
    private long pendingChars;
    /** A flush was asked for the pending frames; guarded by outLock. */
    private boolean flushWanted;
    /** A pong is pending and not yet written; guarded by outLock. */
    private boolean pongPending;
    /** A close frame is pending or written: nothing more may be sent; guarded by outLock. */
    private boolean outputClosed;
    /** The pending bytes end with the close frame; guarded by outLock. */
    private boolean closePending;
    /** The client sent its close frame; guarded by outLock. */
    private boolean clientClosed;
    /** The chunks in flight and what they carry; guarded by outLock. */
    private RetainableByteBuffer[] writing;
    private long writingChars;
    private boolean writingClose;

    /**
     * @param pool where the output's chunks come from (the connector's pool)
     * @param inputBytes the read buffer's usual size
     * @param maxMessageBytes the largest data frame accepted (1009 above it)
     * @param idleTimeoutMillis the socket's idle timeout, behind the peer's own liveness pings
     */
    WebSocketWire(EndPoint endPoint, Executor executor, Scheduler scheduler, ByteBufferPool pool, Peer peer,
            int inputBytes, long maxMessageBytes, long idleTimeoutMillis) {
        super(endPoint, executor);
        this.peer = peer;
        this.scheduler = scheduler;
        this.parser = new ClientFrameParser(maxMessageBytes);
        this.pending = new FrameOutput(pool);
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
        if (!getEndPoint().isOpen()) {
            // The client went away between the 101 and the upgrade: Jetty closed the socket
            // before this connection was installed, so onClose will not come.
            peer.disconnected(new IOException("connection closed during the WebSocket upgrade"));
            return;
        }
        if (input.hasRemaining()) {
            readInput();
        }
        fillInterested();
    }

    // ------------------------------------------------------------------ reading

    /**
     * Reading never blocks: it parses the client's frames and settles their acks, which only
     * releases window room, completes futures and schedules senders; a pong or a close frame is
     * queued for the flusher, not written here. Saying so lets Jetty's selector run
     * {@link #onFillable} itself instead of handing each read to a pool thread. A client acks every
     * frame, so in a fan-out there is a read per connection every few frames, and the hand-off
     * (waking a pool thread, switching to it) cost more than the read: the pool's threads used a
     * third of the server's CPU in the fan-out benchmark, about as much as the minimal writer's
     * whole send and read path.
     */
    @Override
    public InvocationType getInvocationType() {
        return InvocationType.NON_BLOCKING;
    }

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
            // Inside the try: the peer settles the read's acks here, which runs the streamer's code.
            peer.readDone();
        } catch (ClientFrameParser.Violation v) {
            discard();
            peer.readDone();
            peer.violated(v.code, v.getMessage());
            return;
        } catch (RuntimeException e) {
            // Not the client's fault: reading must not just stop (acks would never be read again).
            discard();
            peer.readDone();
            peer.readFailed(e);
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
        synchronized (outLock) {
            if (outputClosed || pongPending) {
                return; // one pong is enough for a client that pings faster than it reads
            }
            pongPending = true;
            pending.header(WebSocketFrames.OP_PONG, payload.remaining());
            pending.put(payload);
            flushWanted = true;
        }
        flusher.iterate();
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
        // Tell the peer first: the answer may close the socket at once, and the peer should learn
        // of the client's close before it learns of the socket's.
        peer.closedByClient(code, reason);
        if (answer) {
            // Echo the client's code (RFC 6455 §5.5.1); without one, a plain normal close.
            closeOutput(code == WebSocketFrames.NO_CODE ? WebSocketFrames.NORMAL : code, "");
        } else {
            flusher.iterate(); // our close frame may be written already: then close the socket now
        }
    }

    @Override
    public boolean onIdleExpired(TimeoutException timeout) {
        peer.disconnected(timeout);
        getEndPoint().close(timeout); // not Jetty's default, which half-closes and waits another period
        return false;
    }

    @Override
    public void onClose(Throwable cause) {
        super.onClose(cause);
        flusher.abort(cause == null ? new IOException("connection closed") : cause);
        peer.disconnected(cause);
    }

    // ------------------------------------------------------------------ writing

    /**
     * Appends consecutive text frames: frame {@code firstId + i}, for {@code i < n}, is the id
     * prefix {@code {"id":<firstId + i>,"msg":}}, the remaining bytes of {@code bodies[from + i]}
     * (not modified) and {@code suffix}, and counts {@code chars[from + i]}, which is reported to
     * {@link Peer#written} once the frame is on the socket. One call, and one lock, per batch: the
     * sender of a fan-out appends many small frames at once, and the output lock per frame was
     * shared with the flusher and the pongs of the same connection.
     *
     * @param flush whether to write these frames, and those before them, now
     * @return {@code false} if the output is closed; nothing was appended
     */
    boolean sendTexts(long firstId, ByteBuffer[] bodies, long[] chars, int from, int n, byte suffix, boolean flush) {
        boolean write;
        synchronized (outLock) {
            if (outputClosed) {
                return false;
            }
            for (int i = 0; i < n; i++) {
                pending.textFrame(firstId + i, bodies[from + i], suffix);
                pendingChars += chars[from + i];
            }
            flushWanted |= flush;
            write = flushWanted || pending.bytes() >= WRITE_AT_BYTES;
        }
        if (write) {
            flusher.iterate();
        }
        return true;
    }

    /** Writes the frames appended without a flush. */
    void flush() {
        synchronized (outLock) {
            if (pending.bytes() == 0) {
                return;
            }
            flushWanted = true;
        }
        flusher.iterate();
    }

    /** Sends a ping with an empty payload. */
    void ping() {
        synchronized (outLock) {
            if (outputClosed) {
                return;
            }
            pending.header(WebSocketFrames.OP_PING, 0);
            flushWanted = true;
        }
        flusher.iterate();
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
            pending.header(WebSocketFrames.OP_CLOSE, 2 + text.length);
            pending.putShort((short) code);
            pending.put(ByteBuffer.wrap(text));
            flushWanted = true;
        }
        flusher.iterate();
    }

    /** Closes the socket at once, without a close handshake; pending frames are dropped. */
    void abort() {
        getEndPoint().close();
    }

    /** What the flusher does next, decided under outLock and done outside it. */
    private enum Next { WRITE, SHUT_OUTPUT, CLOSE, IDLE }

    /** Writes what is pending, one write at a time; Jetty's iterating callback avoids recursion. */
    private final class Flusher extends IteratingCallback {

        @Override
        protected Action process() {
            RetainableByteBuffer[] chunks = null;
            Next next;
            synchronized (outLock) {
                if (writingClose) {
                    // The close frame is on the socket: half-close, or close once the client has answered.
                    writingClose = false;
                    next = clientClosed ? Next.CLOSE : Next.SHUT_OUTPUT;
                } else if (pending.bytes() > 0 && (flushWanted || pending.bytes() >= WRITE_AT_BYTES)) {
                    chunks = pending.take();
                    writing = chunks;
                    writingChars = pendingChars;
                    pendingChars = 0;
                    flushWanted = false;
                    pongPending = false;
                    writingClose = closePending;
                    closePending = false;
                    next = Next.WRITE;
                } else if (outputClosed && !closePending && clientClosed) {
                    next = Next.CLOSE; // the client answered after our close frame was written
                } else {
                    next = Next.IDLE;
                }
            }
            switch (next) {
                case WRITE -> {
                    ByteBuffer[] buffers = new ByteBuffer[chunks.length];
                    for (int i = 0; i < chunks.length; i++) {
                        buffers[i] = chunks[i].getByteBuffer();
                    }
                    getEndPoint().write(this, buffers);
                    return Action.SCHEDULED;
                }
                case SHUT_OUTPUT -> {
                    getEndPoint().shutdownOutput();
                    scheduler.schedule(() -> getEndPoint().close(), CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
                }
                case CLOSE -> getEndPoint().close();
                default -> {
                    // nothing to write
                }
            }
            return Action.IDLE;
        }

        @Override
        protected void onSuccess() {
            RetainableByteBuffer[] done;
            long chars;
            synchronized (outLock) {
                done = writing;
                writing = null;
                chars = writingChars;
                writingChars = 0;
            }
            FrameOutput.release(done);
            if (chars > 0) {
                peer.written(chars);
            }
        }

        @Override
        protected void onCompleteFailure(Throwable cause) {
            RetainableByteBuffer[] abandoned;
            synchronized (outLock) {
                abandoned = writing;
                writing = null;
                pending.discard();
                outputClosed = true;
            }
            if (abandoned != null) {
                FrameOutput.release(abandoned);
            }
            getEndPoint().close(cause);
            peer.disconnected(cause);
        }
    }
}

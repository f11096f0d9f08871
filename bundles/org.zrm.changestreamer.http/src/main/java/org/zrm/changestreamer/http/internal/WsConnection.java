package org.zrm.changestreamer.http.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;
import org.zrm.protocol.subscriber.Frame;

/**
 * One server-side WebSocket of the change-streamer endpoints: the parts {@code /changes} and
 * {@code /snapshot} share (upstream {@code streamOut} plus {@code sendPingsForLiveness}).
 *
 * <ul>
 *   <li><b>Framing.</b> Messages go out as {@code {"id":n,"msg":<json>}} with ids 1, 2, ...; the
 *       message text is inserted verbatim.</li>
 *   <li><b>Acks.</b> The client's only messages are {@code {"ack":n}}, read as bytes (see
 *       {@link #data}); see {@link AckTracker}.
 *       Anything else (malformed JSON, another shape, a binary frame, an unexpected id) closes
 *       this connection with code 1002 and a reason naming the problem; other connections are
 *       unaffected.</li>
 *   <li><b>Bounds.</b> Two {@link SendWindow}s per connection: characters sent but not yet
 *       acknowledged, and characters handed to the {@link WebSocketWire} but not yet written. Only
 *       {@link #sendFrame} blocks on them.</li>
 *   <li><b>Liveness.</b> A ping every interval; a connection from which neither a pong nor a
 *       message arrived during the previous interval is terminated (no close handshake).</li>
 * </ul>
 *
 * <p>Subclasses implement {@link #opened()} and {@link #ended()}; every way a connection ends
 * (client close, error, server close, termination) runs {@link #ended()} exactly once.
 *
 * <p>The frames themselves are read and written by the connection's {@link WebSocketWire}, whose
 * calls arrive here as {@link WebSocketWire.Peer}.
 */
abstract class WsConnection implements WebSocketWire.Peer {

    /** Upstream {@code PROTOCOL_ERROR}. */
    static final int PROTOCOL_ERROR = WebSocketFrames.PROTOCOL;
    /** Upstream {@code INTERNAL_ERROR}. */
    static final int INTERNAL_ERROR = WebSocketFrames.SERVER_ERROR;
    /** A WebSocket close reason is limited to 123 bytes of UTF-8. */
    static final int MAX_REASON_BYTES = 123;

    private static final Logger LOG = LoggerFactory.getLogger(WsConnection.class);
    /** Frames one {@link #trySendFrames} call may send. */
    static final int SEND_BATCH = 64;

    protected final ConnectionResources resources;
    private final ChangeStreamer streamer;
    private final AckTracker acks = new AckTracker();
    /** {@link #settled}, made once rather than per ack. */
    private final AckTracker.Settled settle = this::settled;
    private final SendWindow unacked;
    private final SendWindow queued;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile WebSocketWire wire;
    private volatile boolean heardFromClient = true;
    private volatile ScheduledFuture<?> pings;
    /**
     * Written only by the one thread sending at a time (see {@link #trySendFrames}); volatile because
     * with a sender pool that thread changes from drain to drain.
     */
    private volatile long lastFrameId;
    /**
     * Scratch for the batch being sent: each frame's characters and message bytes. The sending
     * thread only (one at a time, like {@link #lastFrameId}); the wire copies the bytes before
     * {@link #emit} returns. The bodies are not cleared: they are the encodings every subscriber
     * shares, and the next batch overwrites them.
     */
    private final long[] batchChars = new long[SEND_BATCH];
    private final ByteBuffer[] bodies = new ByteBuffer[SEND_BATCH];
    /**
     * Frames and characters sent but not yet added to the endpoint's metrics, by the sending
     * thread ({@link #reportSent}); acks likewise, by the reading thread ({@link #readDone}). The
     * shared counters are updated once per drain and once per read rather than once per frame:
     * with a counter update per frame, the sender and reader threads of every connection wrote
     * the same cache lines, and that was a sixth of the server's CPU in the fan-out benchmark.
     * Drains are serialised per connection, and so are reads, so plain fields suffice.
     */
    private long unreportedFrames;
    private long unreportedChars;
    private long unreportedAcks;
    /**
     * The newest ack id read and not yet settled (0 if none), and the newest settled: see
     * {@link #receive}. The wire delivers one connection's frames one at a time, so only that
     * thread touches them.
     */
    private long ackPending;
    private long ackedThrough;
    /**
     * The frames so far of a text message the client split into several, or {@code null}; the wire
     * delivers one connection's frames one at a time, so only that thread touches it.
     */
    private java.io.ByteArrayOutputStream partialText;

    WsConnection(ConnectionResources resources, ChangeStreamer streamer) {
        this.resources = resources;
        this.streamer = streamer;
        this.unacked = new SendWindow(resources.settings().maxUnackedChars());
        this.queued = new SendWindow(resources.settings().maxQueuedChars());
    }

    /** Starts the connection's work once the upgrade has completed; may close it at once. */
    protected abstract void opened();

    /** Releases what the connection holds; called once, on any thread, after it ended. */
    protected abstract void ended();

    /** @return a short description for log lines, e.g. {@code changes[id=…, task=…]} */
    protected abstract String describe();

    /** @return the streamer this connection uses, or {@code null} if it has none (rejected) */
    final ChangeStreamer streamer() {
        return streamer;
    }

    final boolean hasEnded() {
        return ended.get();
    }

    @Override
    public final void upgraded(WebSocketWire wire) {
        this.wire = wire;
        resources.register(this); // may close it at once, if its streamer already left
        if (ended.get()) {
            return;
        }
        long interval = resources.settings().pingInterval().toMillis();
        try {
            pings = resources.scheduler().scheduleAtFixedRate(this::checkLiveness, interval, interval,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            close(WebSocketFrames.SHUTDOWN, "Error: change streamer endpoint stopped");
            return;
        }
        try {
            opened();
        } catch (RuntimeException e) {
            LOG.error("{}: failed to start: {}", describe(), e.toString(), e);
            close(PROTOCOL_ERROR, "Error: " + e.getMessage());
        }
    }

    /**
     * Reads the client's text frames as bytes: no String is built per incoming message, and the
     * canonical ack is read from the payload without decoding or allocating
     * ({@link ProtocolCodec#canonicalAckId}); a subscriber sends one ack per frame it receives. A
     * text message split into several frames is collected here, bounded by
     * {@code receive.maxMessageBytes} (1009 above it). A binary message is a protocol error.
     */
    @Override
    public final void data(int opcode, ByteBuffer payload, boolean first, boolean fin) {
        heard();
        if (opcode == WebSocketFrames.OP_BINARY) {
            if (first) {
                protocolError("Expected string message");
            }
        } else if (first || partialText != null) {
            textFrame(payload, fin, first);
        }
    }

    private void textFrame(ByteBuffer bytes, boolean fin, boolean first) {
        long max = resources.settings().maxIncomingMessageBytes();
        if (first && fin && bytes.remaining() <= max) {
            receive(bytes);
            return;
        }
        if (first) {
            partialText = new java.io.ByteArrayOutputStream();
        }
        long total = (long) partialText.size() + bytes.remaining();
        if (total > max) {
            partialText = null;
            if (!ended.get()) {
                LOG.warn("{}: text message of at least {} bytes exceeds receive.maxMessageBytes {}, closing connection",
                        describe(), total, max);
            }
            close(WebSocketFrames.MESSAGE_TOO_LARGE, "Text message too large: more than " + max + " bytes");
            return;
        }
        byte[] chunk = new byte[bytes.remaining()];
        bytes.duplicate().get(chunk);
        partialText.writeBytes(chunk);
        if (fin) {
            ByteBuffer whole = ByteBuffer.wrap(partialText.toByteArray());
            partialText = null;
            receive(whole);
        }
    }

    /** One whole text message from the client: an ack, or a protocol error. */
    private void receive(ByteBuffer utf8) {
        if (ended.get()) {
            // The rest of a read that closed the connection: the subscription is closed, and its
            // unacknowledged messages were released as not consumed.
            return;
        }
        long id = resources.codec().canonicalAckId(utf8);
        if (id < 0) {
            String text;
            try {
                text = StandardCharsets.UTF_8.newDecoder().decode(utf8.duplicate()).toString();
            } catch (java.nio.charset.CharacterCodingException e) {
                resources.metrics().protocolError();
                LOG.warn("{}: text message is not valid UTF-8, closing connection", describe());
                close(WebSocketFrames.BAD_PAYLOAD, "Error: text message is not valid UTF-8");
                return;
            }
            try {
                id = resources.codec().decodeAck(text).id();
            } catch (ProtocolException e) {
                protocolError("invalid ack " + abbreviate(text) + ": " + e.getMessage());
                return;
            }
        }
        // Acks are settled once per read (readDone), for the newest id: acknowledging a frame
        // acknowledges every earlier one, and a client acks each frame, so settling them one by
        // one took the tracker's and the window's locks once per frame. An id that is not after
        // the previous one, or not sent yet, is refused here as the tracker would refuse it,
        // after the acks before it are settled. (lastFrameId is published after the frames are
        // recorded, so every id up to it can be settled.)
        long floor = Math.max(ackedThrough, ackPending);
        if (id <= floor || id > lastFrameId) {
            settleAcks();
            protocolError("Unexpected ack for " + (floor + 1) + ": " + id);
            return;
        }
        ackPending = id;
    }

    /** Settles the acks of the read just handled, up to the newest (the reading thread only). */
    private void settleAcks() {
        long id = ackPending;
        if (id == 0) {
            return;
        }
        ackPending = 0;
        long released;
        try {
            released = acks.ack(id, settle);
        } catch (AckTracker.UnexpectedAckException e) {
            protocolError(e.getMessage());
            return;
        }
        unreportedAcks += id - ackedThrough;
        ackedThrough = id;
        unacked.release(released);
    }

    /**
     * Reports the messages of acknowledged frames consumed, on the reading thread, all at once:
     * the oldest {@code n} of those sent with {@link #trySendFrames} and not yet reported (see
     * {@link org.zrm.changestreamer.Subscription#consumedNext(int)}). A connection that sends
     * messages overrides it; the others' frames ({@link #sendFrame}) carry none.
     *
     * @param n at least 1
     */
    void settled(int n) {
        throw new UnsupportedOperationException(describe() + " sent no messages, yet " + n + " were acknowledged");
    }

    @Override
    public final void heard() {
        // Written only when it changes: a volatile store is a full fence, and this runs for every
        // ack. The liveness check clears it once an interval; a frame read just before that clear
        // belongs to the interval that ended, so skipping the store then loses nothing.
        if (!heardFromClient) {
            heardFromClient = true;
        }
    }

    @Override
    public final void violated(int code, String reason) {
        heardFromClient = true;
        if (ended.get()) {
            return;
        }
        resources.metrics().protocolError();
        LOG.warn("{}: protocol error, closing connection: {}", describe(), reason);
        close(code, reason);
    }

    @Override
    public final void readDone() {
        settleAcks();
        if (unreportedAcks > 0) {
            resources.metrics().acksReceived(unreportedAcks);
            unreportedAcks = 0;
        }
    }

    /** Adds the frames sent since the last call to the metrics (the sending thread only). */
    final void reportSent() {
        if (unreportedFrames > 0) {
            resources.metrics().framesSent(unreportedFrames, unreportedChars);
            unreportedFrames = 0;
            unreportedChars = 0;
        }
    }

    @Override
    public final void readFailed(RuntimeException failure) {
        if (ended.get()) {
            return;
        }
        LOG.error("{}: handling the client's frames failed, closing connection: {}", describe(), failure.toString(),
                failure);
        close(INTERNAL_ERROR, "Error: " + failure.getMessage());
    }

    @Override
    public final void closedByClient(int statusCode, String reason) {
        if (!ended.get()) {
            LOG.info("{}: closed by client ({} {})", describe(), statusCode, reason);
        }
        end();
    }

    @Override
    public final void written(long chars) {
        queued.release(chars);
    }

    @Override
    public final void disconnected(Throwable cause) {
        if (!ended.get() && cause != null) {
            if (cause instanceof IOException || cause instanceof TimeoutException) {
                // The usual way a client vanishes (abort, network loss): not a server problem.
                LOG.info("{}: connection lost: {}", describe(), cause.toString());
            } else {
                LOG.warn("{}: connection error: {}", describe(), cause.toString());
            }
        } else if (!ended.get()) {
            LOG.info("{}: connection closed by the client without a close frame", describe());
        }
        end();
    }

    /**
     * Sends one message as the next frame and writes it at once, blocking while either send window
     * is full: for a connection with a thread of its own ({@code /snapshot}, one status message).
     * Called by one thread at a time.
     *
     * @param msg the serialised message, inserted verbatim; nothing waits for its ack
     * @return {@code false} if the connection ended, so the message was not sent
     */
    final boolean sendFrame(String msg) throws InterruptedException {
        long chars = frameChars(lastFrameId + 1, msg.length());
        if (!unacked.acquire(chars) || !queued.acquire(chars)) {
            return false;
        }
        batchChars[0] = chars;
        bodies[0] = ByteBuffer.wrap(msg.getBytes(StandardCharsets.UTF_8));
        emit(false, 1, true);
        reportSent();
        return true;
    }

    /**
     * Sends {@code messages[from..to)} as the next frames without blocking, for the shared sender
     * threads: as many as fit both send windows now, in order. If not even the first fits, the
     * frames held back are flushed and {@code onWindow} runs on the thread that next releases
     * room; the caller keeps the messages not sent and offers them again then. Called by one
     * thread at a time, with at most {@link #SEND_BATCH} messages.
     *
     * <p>A batch takes each window's lock, the ack tracker's and the wire's once, not once per
     * frame: in a fan-out the sender, the ack reader and the wire's flusher take those locks for
     * every connection, and per-frame locking was most of what the sender did beyond copying
     * bytes.
     *
     * <p>With {@code flush == false} the wire may hold the frames in its output buffer together
     * with the next ones, so that a burst of small messages leaves in a few writes rather than one
     * system call (and one wake-up of the client) per message; the caller passes {@code true} for
     * the last batch of a burst.
     *
     * <p>A frame is {@code {"id":n,"msg":} + the message's bytes + {@code }}: only the short id
     * prefix is encoded here, and the message's bytes are copied from the encoding the streamer
     * shares among all subscribers of a message ({@link SubscriptionMessage#sharedUtf8()}), not
     * re-encoded. The send windows count characters of the frame text, so the bounds mean the same
     * whichever way the frame was built.
     *
     * @param messages each is reported consumed, through {@link #settled(int)}, once the client
     *     acknowledges its frame (never if the connection ends first); the connection does not
     *     keep them
     * @param flush whether to write the frames sent, and those held before them, now
     * @param onWindow must not block (it schedules the sender again)
     * @return how many messages were sent, from {@code from}; fewer than offered if a window
     *     filled up or the connection ended ({@link #hasEnded()} tells which)
     */
    final int trySendFrames(SubscriptionMessage[] messages, int from, int to, boolean flush, Runnable onWindow) {
        int n = to - from;
        if (n > SEND_BATCH) {
            throw new IllegalArgumentException(n + " frames at once, more than " + SEND_BATCH);
        }
        long id = lastFrameId;
        for (int i = 0; i < n; i++) {
            batchChars[i] = frameChars(++id, messages[from + i].jsonLength());
        }
        int admitted = unacked.tryAcquireFrames(batchChars, 0, n, onWindow);
        int sent = admitted == 0 ? 0 : queued.tryAcquireFrames(batchChars, 0, admitted, onWindow);
        if (sent < admitted) {
            long excess = 0;
            for (int i = sent; i < admitted; i++) {
                excess += batchChars[i];
            }
            unacked.release(excess);
        }
        if (sent == 0) {
            flushHeldFrames();
            return 0;
        }
        for (int i = 0; i < sent; i++) {
            bodies[i] = messages[from + i].sharedUtf8();
        }
        // Fewer than offered means a window is full: the frames must leave for its acks to come.
        emit(true, sent, flush || sent < n);
        return sent;
    }

    /**
     * Whether a frame of {@code msg} fits both send windows now; if not, {@code onWindow} runs on
     * the next release (as after a refused {@link #trySendFrames}). The sender asks after it
     * stopped on a full window, so that a release it raced with is not lost.
     */
    final boolean windowsOpenFor(SubscriptionMessage msg, Runnable onWindow) {
        long chars = frameChars(lastFrameId + 1, msg.jsonLength());
        return unacked.fitsOrNotify(chars, onWindow) && queued.fitsOrNotify(chars, onWindow);
    }

    /**
     * @return the characters of the frame text {@code {"id":<id>,"msg":} + a message of
     *     {@code msgChars} + END}, what the windows count
     */
    private static long frameChars(long id, int msgChars) {
        return FrameOutput.idPrefixLength(id) + msgChars + 1L;
    }

    /**
     * Hands {@code n} admitted frames to the wire, numbered from the next id: frame {@code i}
     * carries {@code bodies[i]} (read with absolute gets only) and counts {@code batchChars[i]}
     * (in both windows already).
     *
     * @param carryMessages whether the frames carry messages, reported through {@link #settled}
     *     when acknowledged
     */
    private void emit(boolean carryMessages, int n, boolean flush) {
        long firstId = lastFrameId + 1;
        acks.sentAll(firstId, carryMessages, batchChars, n);
        lastFrameId = firstId + n - 1;
        long chars = 0;
        for (int i = 0; i < n; i++) {
            chars += batchChars[i];
        }
        unreportedFrames += n;
        unreportedChars += chars;
        if (!wire.sendTexts(firstId, bodies, batchChars, 0, n, (byte) Frame.END, flush)) {
            queued.release(chars); // the connection is closing: the frames are not sent, and never acked
        }
    }

    /** Writes the frames sent without a flush (the sending thread only). */
    final void flushHeldFrames() {
        WebSocketWire w = wire;
        if (w != null) {
            w.flush();
        }
    }

    /**
     * Closes the connection with a close frame (sent after the frames already queued) and ends
     * it. No-op if it already ended.
     *
     * @param code the close code
     * @param reason the reason, truncated like upstream's {@code elide} to 123 bytes
     */
    final void close(int code, String reason) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        cleanUp();
        WebSocketWire w = wire;
        if (w != null) {
            w.closeOutput(code, elide(reason, MAX_REASON_BYTES));
        }
    }

    /** Drops the connection without a close handshake (upstream {@code ws.terminate()}). */
    final void terminate() {
        if (ended.compareAndSet(false, true)) {
            cleanUp();
        }
        WebSocketWire w = wire;
        if (w != null) {
            w.abort();
        }
    }

    private void protocolError(String problem) {
        if (ended.get()) {
            return;
        }
        resources.metrics().protocolError();
        LOG.warn("{}: protocol error, closing connection: {}", describe(), problem);
        close(PROTOCOL_ERROR, "Error: " + problem);
    }

    private void checkLiveness() {
        if (ended.get()) {
            // cleanUp() may have run before the schedule was stored.
            ScheduledFuture<?> p = pings;
            if (p != null) {
                p.cancel(false);
            }
            return;
        }
        if (!heardFromClient) {
            resources.metrics().livenessTimeout();
            LOG.warn("{}: no pong or message for {} ms, terminating connection", describe(),
                    resources.settings().pingInterval().toMillis());
            terminate();
            return;
        }
        heardFromClient = false;
        wire.ping();
    }

    private void end() {
        if (ended.compareAndSet(false, true)) {
            cleanUp();
        }
    }

    private void cleanUp() {
        ScheduledFuture<?> p = pings;
        if (p != null) {
            p.cancel(false);
        }
        unacked.close();
        queued.close();
        resources.unregister(this);
        ended();
    }

    /** Upstream's {@code elide}: at most {@code maxBytes} of UTF-8, ending in {@code ...} when cut. */
    static String elide(String value, int maxBytes) {
        if (value.getBytes(StandardCharsets.UTF_8).length <= maxBytes) {
            return value;
        }
        String cut = value.substring(0, Math.min(value.length(), maxBytes - 3));
        while ((cut + "...").getBytes(StandardCharsets.UTF_8).length > maxBytes) {
            cut = cut.substring(0, cut.length() - 1);
        }
        return cut + "...";
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 37) + "...";
    }
}

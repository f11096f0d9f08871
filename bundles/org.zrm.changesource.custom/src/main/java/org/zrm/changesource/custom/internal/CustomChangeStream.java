package org.zrm.changesource.custom.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;

/**
 * One WebSocket connection to a custom change source: text frames in, each one
 * {@link ChangeStreamMessage} in BigIntJSON, acks ({@link ChangeSourceUpstream}) out.
 *
 * <p><b>Buffering.</b> Frames are requested from the socket only while fewer than
 * {@code bufferMessages} decoded messages and {@code bufferChars} characters wait for the
 * consumer; at that bound the JDK client stops reading, and the source is throttled by TCP.
 * Nothing is dropped. A single message over {@code maxMessageChars} fails the stream.
 *
 * <p><b>Checks.</b> The consumer thread checks what the change log relies on before handing a
 * message out: {@code begin}/{@code commit}/{@code rollback} pairing, {@code data} only inside a
 * transaction, commit equal to its begin, and commit watermarks strictly increasing and after the
 * watermark the stream was started from. A violation, a malformed or unknown message, a silent
 * socket or a connection lost inside a transaction fails the stream with a
 * {@link ChangeSourceException} naming the source; the open transaction never reaches a commit, so
 * the change streamer discards it, and the next stream restarts from the last stored watermark.
 *
 * <p><b>Acks</b> coalesce: while one is being sent, only the latest further ack is kept and sent
 * next (upstream's {@code coalesce}), so a slow source never makes {@link #ack} block or queue.
 */
final class CustomChangeStream implements ChangeStream {

    private static final int CLOSE_GRACE_SECONDS = 5;

    /** A decoded message with its size, or the end of the stream. */
    private record Event(ChangeStreamMessage message, int chars, ChangeSourceException error, boolean end) {}

    private final String source;
    private final ProtocolCodec codec;
    private final StreamSettings settings;
    private final LinkedBlockingQueue<Event> events;
    private final AtomicLong bufferedChars = new AtomicLong();
    private final Listener listener = new Listener();
    private final CompletableFuture<Void> inputClosed = new CompletableFuture<>();
    private final Object ackLock = new Object();
    private volatile WebSocket socket;
    private volatile boolean terminal;
    private volatile boolean closed;
    private volatile boolean heardSinceLastPing = true;
    private ScheduledFuture<?> pinger;

    // consumer thread only
    private long deferredCredits;
    private String lastCommit;
    private String openTx;
    private ChangeSourceException failure;

    // guarded by ackLock
    private boolean ackInFlight;
    private ChangeSourceUpstream pendingAck;

    private CustomChangeStream(String source, ProtocolCodec codec, StreamSettings settings, String afterWatermark) {
        this.source = source;
        this.codec = codec;
        this.settings = settings;
        this.events = new LinkedBlockingQueue<>(settings.bufferMessages() + 1);
        this.lastCommit = afterWatermark == null ? "" : afterWatermark;
    }

    /**
     * Connects and returns the open stream.
     *
     * @param source names the source in errors (no secrets)
     * @param afterWatermark the stream's start; commits must be after it ({@code null} for initial sync)
     * @throws ChangeSourceException if the connection cannot be opened (retryable)
     */
    static CustomChangeStream open(HttpClient http, URI uri, String source, ProtocolCodec codec,
            StreamSettings settings, ScheduledExecutorService timer, String afterWatermark)
            throws ChangeSourceException, InterruptedException {
        CustomChangeStream s = new CustomChangeStream(source, codec, settings, afterWatermark);
        CompletableFuture<WebSocket> connecting = http.newWebSocketBuilder().connectTimeout(settings.connectTimeout())
                .buildAsync(uri, s.listener);
        try {
            s.socket = connecting.get(settings.connectTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // Nobody will own a socket that opens after this: drop it when it does.
            connecting.thenAccept(WebSocket::abort);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new ChangeSourceException("cannot connect to custom change source " + source + ": " + cause, cause);
        } catch (TimeoutException e) {
            connecting.thenAccept(WebSocket::abort);
            throw new ChangeSourceException("timed out connecting to custom change source " + source, e);
        }
        long ms = settings.pingInterval().toMillis();
        s.pinger = timer.scheduleAtFixedRate(s::ping, ms, ms, TimeUnit.MILLISECONDS);
        return s;
    }

    /**
     * A stream over a socket that is already open, for tests that drive the listener and watch
     * what is sent and requested; no pings are scheduled.
     */
    static CustomChangeStream attached(WebSocket socket, String source, ProtocolCodec codec, StreamSettings settings,
            String afterWatermark) {
        CustomChangeStream s = new CustomChangeStream(source, codec, settings, afterWatermark);
        s.socket = socket;
        return s;
    }

    /** The socket's listener (tests feed frames through it). */
    WebSocket.Listener listener() {
        return listener;
    }

    private void ping() {
        WebSocket ws = socket;
        if (terminal || ws == null) {
            return;
        }
        if (!heardSinceLastPing) {
            fail(new ChangeSourceException("custom change source " + source + " sent neither a message nor a pong for "
                    + settings.pingInterval().toMillis() + " ms; terminating the socket"));
            return;
        }
        heardSinceLastPing = false;
        ws.sendPing(ByteBuffer.allocate(0)).whenComplete((r, t) -> {
            if (t != null) {
                fail(new ChangeSourceException("ping to custom change source " + source + " failed: " + t, t));
            }
        });
    }

    /** Records the terminal event once (the extra queue slot guarantees it fits) and drops the socket. */
    private void fail(ChangeSourceException error) {
        finish(new Event(null, 0, error, false));
        WebSocket ws = socket;
        if (ws != null) {
            ws.abort();
        }
    }

    private synchronized void finish(Event event) {
        inputClosed.complete(null);
        if (!terminal) {
            terminal = true;
            events.offer(event);
            if (pinger != null) {
                pinger.cancel(false);
            }
        }
    }

    @Override
    public ChangeStreamMessage take() throws ChangeSourceException, InterruptedException {
        if (failure != null) {
            throw failure;
        }
        return next(events.take());
    }

    @Override
    public ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException, InterruptedException {
        if (failure != null) {
            throw failure;
        }
        Event e = timeout.isNegative() || timeout.isZero() ? events.poll()
                : events.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        return e == null ? null : next(e);
    }

    private ChangeStreamMessage next(Event e) throws ChangeSourceException {
        if (e.message() == null) {
            events.offer(e); // later pulls fail the same way
            if (closed) {
                throw new ChangeStreamClosedException("stream from custom change source " + source + " was closed");
            }
            if (openTx != null) {
                ChangeSourceException cause = e.error();
                throw failure = new ChangeSourceException("custom change source " + source
                        + " ended the stream inside transaction " + openTx
                        + (cause == null ? "" : ": " + cause.getMessage()), cause);
            }
            if (e.error() != null) {
                throw failure = e.error();
            }
            throw new ChangeStreamClosedException("custom change source " + source + " closed the stream");
        }
        ChangeStreamMessage m = e.message();
        long buffered = bufferedChars.addAndGet(-e.chars());
        deferredCredits++;
        if (buffered < settings.bufferChars()) {
            // Replace the credits of taken frames; deferred while the character bound is exceeded.
            socket.request(deferredCredits);
            deferredCredits = 0;
        }
        String violation = sequence(m);
        if (violation != null) {
            failure = new ChangeSourceException("custom change source " + source + " broke the protocol: " + violation);
            fail(failure);
            throw failure;
        }
        return m;
    }

    /** Checks begin/commit pairing and watermark order; returns the violation, or null. */
    private String sequence(ChangeStreamMessage m) {
        if (m instanceof BeginMessage b) {
            if (openTx != null) {
                return "begin " + b.commitWatermark() + " inside transaction " + openTx;
            }
            if (b.commitWatermark().compareTo(lastCommit) <= 0) {
                return "non-increasing watermark: begin " + b.commitWatermark() + " is not after " + lastCommit;
            }
            openTx = b.commitWatermark();
        } else if (m instanceof DataMessage d) {
            if (openTx == null) {
                return "data (" + d.change().tag() + ") outside a transaction";
            }
        } else if (m instanceof CommitMessage c) {
            if (openTx == null) {
                return "commit " + c.watermark() + " without begin";
            }
            if (!c.watermark().equals(openTx)) {
                return "commit " + c.watermark() + " does not match begin " + openTx;
            }
            lastCommit = openTx;
            openTx = null;
        } else if (m instanceof RollbackMessage) {
            if (openTx == null) {
                return "rollback without begin";
            }
            openTx = null;
        }
        return null;
    }

    @Override
    public void ack(ChangeSourceUpstream ack) {
        if (terminal || closed) {
            return; // a restarted stream resumes from the change log
        }
        synchronized (ackLock) {
            if (ackInFlight) {
                pendingAck = ack; // coalesce: only the latest waiting ack matters
                return;
            }
            ackInFlight = true;
        }
        send(ack);
    }

    private void send(ChangeSourceUpstream ack) {
        String text;
        try {
            text = codec.encode(ack);
        } catch (RuntimeException e) {
            fail(new ChangeSourceException("cannot encode ack for custom change source " + source + ": " + e, e));
            return;
        }
        socket.sendText(text, true).whenComplete((r, t) -> {
            if (t != null) {
                fail(new ChangeSourceException("sending ack to custom change source " + source + " failed: " + t, t));
                return;
            }
            ChangeSourceUpstream next;
            synchronized (ackLock) {
                next = pendingAck;
                pendingAck = null;
                ackInFlight = next != null;
            }
            if (next != null && !terminal) {
                send(next);
            }
        });
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        boolean wasTerminal = terminal;
        finish(new Event(null, 0, null, true));
        WebSocket ws = socket;
        if (ws == null) {
            return;
        }
        if (wasTerminal || ws.isOutputClosed()) {
            ws.abort();
            return;
        }
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "")
                .thenCompose(x -> inputClosed)
                .orTimeout(CLOSE_GRACE_SECONDS, TimeUnit.SECONDS)
                .whenComplete((r, t) -> ws.abort());
    }

    /** The socket's callbacks; the JDK calls them one at a time. */
    private final class Listener implements WebSocket.Listener {

        private final StringBuilder partial = new StringBuilder();

        @Override
        public void onOpen(WebSocket webSocket) {
            socket = webSocket;
            webSocket.request(settings.bufferMessages());
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            heardSinceLastPing = true;
            if (partial.length() + data.length() > settings.maxMessageChars()) {
                partial.setLength(0);
                fail(new ChangeSourceException("custom change source " + source + " sent a message over "
                        + settings.maxMessageChars() + " characters"));
                return null;
            }
            partial.append(data);
            if (!last) {
                webSocket.request(1); // a fragment does not fill a buffer slot
                return null;
            }
            String text = partial.toString();
            partial.setLength(0);
            ChangeStreamMessage m;
            try {
                m = codec.decodeChangeStreamMessage(text);
            } catch (ProtocolException | IllegalArgumentException e) {
                fail(new ChangeSourceException("custom change source " + source + " sent an invalid message ("
                        + e.getMessage() + "): " + abbreviate(text), e));
                return null;
            }
            bufferedChars.addAndGet(text.length());
            if (!events.offer(new Event(m, text.length(), null, false))) {
                // Cannot happen: no more frames are requested than there are free slots.
                fail(new ChangeSourceException("receive buffer of custom change source " + source + " overflowed"));
            }
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            fail(new ChangeSourceException("custom change source " + source + " sent a binary frame"));
            return null;
        }

        @Override
        public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
            heardSinceLastPing = true;
            webSocket.request(1); // the JDK answers with a pong itself
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
            heardSinceLastPing = true;
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            if (statusCode == WebSocket.NORMAL_CLOSURE) {
                finish(new Event(null, 0, null, true));
            } else {
                finish(new Event(null, 0, new ChangeSourceException("custom change source " + source
                        + " closed the connection: " + statusCode
                        + (reason == null || reason.isEmpty() ? "" : " " + reason)), false));
            }
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            finish(new Event(null, 0, new ChangeSourceException("connection to custom change source " + source
                    + " failed: " + error, error), false));
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }

    /** For logs. */
    @Override
    public String toString() {
        return "CustomChangeStream[" + source + "]";
    }
}

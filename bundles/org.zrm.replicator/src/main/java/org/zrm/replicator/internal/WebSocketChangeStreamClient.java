package org.zrm.replicator.internal;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;
import org.zrm.protocol.subscriber.Ack;
import org.zrm.protocol.subscriber.Frame;
import org.zrm.protocol.subscriber.SubscriberProtocol;

/**
 * Subscribes to any protocol-v6 change streamer (ZRM's or zero-cache's) over a WebSocket, as
 * zero-cache's {@code ChangeStreamerHttpClient} does: {@code <base>/replication/v6/changes?…},
 * frames {@code {"id":n,"msg":…}} in, {@code {"ack":n}} out, in order, after each message was
 * processed.
 */
final class WebSocketChangeStreamClient implements ChangeStreamClient {

    /** The server pings every 30 s; like upstream's client, give up after 30 s + 3 s of silence. */
    static final Duration DEFAULT_LIVENESS_TIMEOUT = Duration.ofSeconds(33);

    /**
     * Frames requested from the socket ahead of processing. Reading pauses when this many frames,
     * or {@link #PREFETCH_CHARS} characters, are buffered; the rest waits in TCP buffers and the
     * server's flow control. So at most 64 frames and 16 Mi characters plus one frame of at most
     * {@code maxMessageBytes} are held.
     */
    static final int PREFETCH_FRAMES = 64;

    static final long PREFETCH_CHARS = 16L << 20;

    private static final int CLOSE_GRACE_SECONDS = 5;

    /** Bound on acks queued behind a slow send; the replicator thread waits when it is hit. */
    private static final int MAX_PENDING_ACKS = 1024;

    private final URI base;
    private final HttpClient http;
    private final ProtocolCodec codec;
    private final Duration connectTimeout;
    private final Duration livenessTimeout;
    private final int maxMessageBytes;

    /**
     * @param base {@code ws://}, {@code wss://}, {@code http://} or {@code https://} base URI of
     *     the change streamer; {@code http(s)} is mapped to {@code ws(s)} as the {@code ws} library does
     */
    WebSocketChangeStreamClient(URI base, ProtocolCodec codec, Duration connectTimeout, Duration livenessTimeout,
            int maxMessageBytes) {
        this.base = normalize(base);
        this.codec = codec;
        this.connectTimeout = connectTimeout;
        this.livenessTimeout = livenessTimeout;
        this.maxMessageBytes = maxMessageBytes;
        this.http = HttpClient.newBuilder().connectTimeout(connectTimeout).build();
    }

    static URI normalize(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
        String ws = switch (scheme) {
            case "ws", "http" -> "ws";
            case "wss", "https" -> "wss";
            default -> throw new IllegalArgumentException(
                    "changeStreamer.uri must be ws://, wss://, http:// or https://, got " + uri);
        };
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("changeStreamer.uri has no host: " + uri);
        }
        String s = ws + uri.toString().substring(scheme.length());
        int q = s.indexOf('?');
        if (q >= 0) {
            s = s.substring(0, q);
        }
        return URI.create(s.endsWith("/") ? s : s + "/");
    }

    /** The subscription URI for {@code context}. */
    URI changesUri(SubscriberContext context) {
        StringBuilder q = new StringBuilder();
        for (Map.Entry<String, String> e : context.toQueryParameters().entrySet()) {
            q.append(q.length() == 0 ? "" : "&").append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8))
                    .append('=').append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
        }
        return base.resolve(SubscriberProtocol.CHANGES_PATH.substring(1) + "?" + q);
    }

    @Override
    public String target() {
        return org.zrm.secret.Secrets.maskUrls(base.toString());
    }

    @Override
    public StreamConnection subscribe(SubscriberContext context) throws IOException, InterruptedException {
        Connection conn = new Connection();
        URI uri = changesUri(context);
        try {
            conn.socket = http.newWebSocketBuilder().connectTimeout(connectTimeout).buildAsync(uri, conn)
                    .get(connectTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IOException("cannot connect to change streamer at " + target() + ": "
                    + org.zrm.secret.Secrets.maskUrls(String.valueOf(cause)), cause);
        } catch (TimeoutException e) {
            throw new IOException("timed out connecting to change streamer at " + target(), e);
        }
        return conn;
    }

    /** A received frame, or the end of the stream. */
    private record Event(Frame frame, IOException error, boolean end) {}

    private final class Connection implements StreamConnection, WebSocket.Listener {

        private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>(PREFETCH_FRAMES + 1);
        private final StringBuilder partial = new StringBuilder();
        private final CompletableFuture<Void> inputClosed = new CompletableFuture<>();
        private volatile WebSocket socket;
        private volatile long lastActivityNanos = System.nanoTime();
        private volatile boolean terminal;
        private CompletableFuture<?> lastSend = CompletableFuture.completedFuture(null);
        private int pendingAcks;
        private long expectedId = 1;
        private final java.util.concurrent.atomic.AtomicLong bufferedChars = new java.util.concurrent.atomic.AtomicLong();
        private long deferredCredits; // replicator thread only

        @Override
        public void onOpen(WebSocket webSocket) {
            socket = webSocket;
            webSocket.request(PREFETCH_FRAMES);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            lastActivityNanos = System.nanoTime();
            if (partial.length() + data.length() > maxMessageBytes) {
                partial.setLength(0);
                finish(new Event(null, new IOException("message larger than " + maxMessageBytes + " bytes"), false));
                webSocket.abort();
                return null;
            }
            partial.append(data);
            if (!last) {
                webSocket.request(1); // a fragment does not fill a prefetch slot
                return null;
            }
            String text = partial.toString();
            partial.setLength(0);
            Frame frame;
            try {
                frame = codec.decodeFrame(text);
            } catch (ProtocolException e) {
                finish(new Event(null, new IOException("malformed frame from change streamer: " + e.getMessage(), e),
                        false));
                webSocket.abort();
                return null;
            }
            bufferedChars.addAndGet(frame.msg().length());
            if (!events.offer(new Event(frame, null, false))) {
                // Cannot happen: at most PREFETCH_FRAMES frames are requested and not yet taken.
                finish(new Event(null, new IOException("receive buffer overflow"), false));
                webSocket.abort();
            }
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            finish(new Event(null, new IOException("unexpected binary frame from change streamer"), false));
            webSocket.abort();
            return null;
        }

        @Override
        public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
            lastActivityNanos = System.nanoTime();
            webSocket.request(1); // pings use up a receive credit; the pong is sent automatically
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
            lastActivityNanos = System.nanoTime();
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            if (statusCode == WebSocket.NORMAL_CLOSURE) {
                finish(new Event(null, null, true));
            } else {
                finish(new Event(null, new IOException("change streamer closed the connection: " + statusCode
                        + (reason == null || reason.isEmpty() ? "" : " " + reason)), false));
            }
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            finish(new Event(null, new IOException("connection to change streamer failed: " + error, error), false));
        }

        /** Records the terminal event once; the extra queue slot guarantees it fits. */
        private synchronized void finish(Event event) {
            inputClosed.complete(null);
            if (!terminal) {
                terminal = true;
                events.offer(event);
            }
        }

        @Override
        public StreamMessage take() throws IOException, InterruptedException {
            while (true) {
                long idleNanos = System.nanoTime() - lastActivityNanos;
                long waitNanos = livenessTimeout.toNanos() - idleNanos;
                Event e = waitNanos > 0 ? events.poll(waitNanos, TimeUnit.NANOSECONDS) : events.poll();
                if (e == null) {
                    if (System.nanoTime() - lastActivityNanos >= livenessTimeout.toNanos()) {
                        throw new IOException("no message or ping from change streamer for " + livenessTimeout.toSeconds()
                                + " s");
                    }
                    continue;
                }
                if (e.error() != null) {
                    throw e.error();
                }
                if (e.end()) {
                    return null;
                }
                Frame frame = e.frame();
                if (frame.id() != expectedId) {
                    throw new IOException("frame id " + frame.id() + " out of sequence, expected " + expectedId);
                }
                expectedId++;
                long buffered = bufferedChars.addAndGet(-frame.msg().length());
                deferredCredits++;
                if (buffered < PREFETCH_CHARS) {
                    // Replace the credits of taken frames; deferred while the byte bound is exceeded,
                    // and granted at the latest when the buffer has drained (buffered = 0).
                    socket.request(deferredCredits);
                    deferredCredits = 0;
                }
                return new Message(frame);
            }
        }

        private final class Message implements StreamMessage {
            private final Frame frame;
            private boolean acked;

            Message(Frame frame) {
                this.frame = frame;
            }

            @Override
            public String json() {
                return frame.msg();
            }

            @Override
            public void consumed() {
                if (!acked) {
                    acked = true;
                    sendAck(frame.id());
                }
            }
        }

        /** Called on the replicator thread only; sends are chained because only one may be pending. */
        private void sendAck(long id) {
            if (terminal) {
                return; // the server no longer listens; the replica's watermark is the resume point
            }
            if (pendingAcks >= MAX_PENDING_ACKS) {
                lastSend.handle((r, t) -> null).join(); // a failure is reported through finish() below
                pendingAcks = 0;
            }
            String text = codec.encode(new Ack(id));
            WebSocket ws = socket;
            // After a failed send the chain stays failed, so no later ack is sent out of order.
            lastSend = lastSend.thenCompose(x -> ws.sendText(text, true));
            lastSend.whenComplete((r, t) -> {
                if (t != null) {
                    finish(new Event(null, new IOException("sending ack " + id + " failed: " + t, t), false));
                }
            });
            pendingAcks++;
        }

        /**
         * Starts a normal close handshake and returns without waiting; the TCP connection is
         * aborted once the server answers, or after {@value #CLOSE_GRACE_SECONDS} s at the latest.
         */
        @Override
        public void close() {
            WebSocket ws = socket;
            if (ws == null) {
                return;
            }
            if (ws.isOutputClosed() || terminal) {
                ws.abort();
                return;
            }
            lastSend.handle((r, t) -> null)
                    .thenCompose(x -> ws.sendClose(WebSocket.NORMAL_CLOSURE, ""))
                    .thenCompose(x -> inputClosed)
                    .orTimeout(CLOSE_GRACE_SECONDS, TimeUnit.SECONDS)
                    .whenComplete((r, t) -> ws.abort());
        }
    }
}

package org.zrm.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A protocol-v6 subscriber over {@code java.net.http} WebSockets, as a test sees the change
 * streamer: it records every {@code {"id":n,"msg":[...]}} frame and, unless told otherwise,
 * acknowledges each one in order as it arrives (what the reference replicator does once a message
 * is processed).
 */
final class ChangesClient implements WebSocket.Listener {

    /** How long any single wait of a test client may take before the test fails. */
    static final Duration WAIT = Duration.ofSeconds(30);

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One server frame: its id, the parsed {@code msg} and its raw text. */
    record Frame(long id, JsonNode msg, String raw) {
        String type() {
            return msg.get(0).asText();
        }
    }

    /** A begin..commit sequence as received; {@code data} holds each data change's body. */
    record Transaction(String commitWatermark, JsonNode begin, List<JsonNode> data, JsonNode commit) {
        /** @return the {@code id} column of each row change (new row for inserts/updates, key for deletes) */
        List<Long> ids() {
            List<Long> ids = new ArrayList<>();
            for (JsonNode d : data) {
                JsonNode row = d.hasNonNull("new") ? d.get("new") : d.get("key");
                if (row != null && row.has("id")) {
                    ids.add(row.get("id").asLong());
                }
            }
            return ids;
        }
    }

    /** How the server closed the connection. */
    record Close(int code, String reason) {}

    // Unbounded on purpose: a test client receives at most a few hundred frames, and dropping or
    // blocking here would hide exactly the gaps the tests look for.
    private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private final CompletableFuture<Close> closed = new CompletableFuture<>();
    private final CompletableFuture<Frame> firstFrame = new CompletableFuture<>();
    private final StringBuilder partial = new StringBuilder();
    /** A one-line summary of every frame received, for failure messages. */
    private final List<String> history = java.util.Collections.synchronizedList(new ArrayList<>());
    private final boolean autoAck;
    private CompletableFuture<?> sends = CompletableFuture.completedFuture(null);
    private volatile WebSocket socket;

    private ChangesClient(boolean autoAck) {
        this.autoAck = autoAck;
    }

    /** Opens a subscription and returns once the upgrade completed (frames may still be pending). */
    static ChangesClient connect(HttpClient http, URI uri) throws Exception {
        return connect(http, uri, true);
    }

    static ChangesClient connect(HttpClient http, URI uri, boolean autoAck) throws Exception {
        return connectAsync(http, uri, autoAck).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** Starts the handshake; many clients can be opened concurrently this way. */
    static CompletableFuture<ChangesClient> connectAsync(HttpClient http, URI uri, boolean autoAck) {
        ChangesClient client = new ChangesClient(autoAck);
        return http.newWebSocketBuilder().connectTimeout(WAIT).buildAsync(uri, client).thenApply(ws -> {
            client.socket = ws;
            return client;
        });
    }

    /**
     * The subscription URI of spec §2.2 for this runtime's change-streamer endpoint.
     *
     * @param query the query string without {@code ?}
     */
    static URI changesUri(String port, int protocolVersion, String query) {
        return URI.create("ws://127.0.0.1:" + port + "/replication/v" + protocolVersion + "/changes?" + query);
    }

    /** The query a serving replicator sends (id, replicaVersion, watermark, mode, initial, empty taskID). */
    static String query(String id, String replicaVersion, String watermark) {
        return "id=" + id + "&replicaVersion=" + replicaVersion + "&watermark=" + watermark
                + "&mode=serving&initial=false&taskID=";
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        this.socket = webSocket;
        webSocket.request(1);
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            String text = partial.toString();
            partial.setLength(0);
            try {
                JsonNode node = JSON.readTree(text);
                Frame frame = new Frame(node.get("id").asLong(), node.get("msg"), text);
                frames.add(frame);
                history.add(summary(frame));
                firstFrame.complete(frame);
                if (autoAck) {
                    send("{\"ack\":" + frame.id() + "}");
                }
            } catch (Exception e) {
                closed.completeExceptionally(new AssertionError("unparseable frame " + text, e));
            }
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        closed.complete(new Close(statusCode, reason));
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        closed.completeExceptionally(error);
    }

    /** Sends a text frame after the ones already sent (the JDK client allows one send at a time). */
    synchronized void send(String text) {
        WebSocket ws = socket;
        sends = sends.thenCompose(v -> ws.sendText(text, true));
    }

    /** @return the next frame, failing the test if none arrives within {@link #WAIT} */
    Frame next() throws InterruptedException {
        Frame f = frames.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        if (f == null) {
            throw new AssertionError("no frame within " + WAIT + (closed.isDone() ? "; connection ended: " + closed : "")
                    + "; received so far: " + history());
        }
        return f;
    }

    /** @return the next frame, or {@code null} if none arrives within {@code timeout} */
    Frame poll(Duration timeout) throws InterruptedException {
        return frames.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return a summary of the frames received so far (type and watermark) */
    String history() {
        synchronized (history) {
            return history.size() + " frames " + String.join(" ", history);
        }
    }

    private static String summary(Frame f) {
        String type = f.type();
        return switch (type) {
            case "begin" -> "begin@" + f.msg().path(2).path("commitWatermark").asText();
            case "commit" -> "commit@" + f.msg().path(2).path("watermark").asText();
            case "data" -> f.msg().path(1).path("tag").asText() + ":" + f.msg().path(1).path("relation").path("name").asText();
            default -> type;
        };
    }

    /** Waits for the first frame (for a valid subscription the status frame, sent once it is set up). */
    Frame awaitFirstFrame() throws Exception {
        return firstFrame.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * Reads frames up to the end of the next transaction. Status frames (which may arrive between
     * transactions or inside one) are skipped; a {@code rollback} drops the transaction in progress,
     * as a replicator does (the streamer sends one when its source restarts inside a transaction,
     * which then comes again whole); anything else out of place fails the test.
     */
    Transaction nextTransaction() throws InterruptedException {
        JsonNode begin = null;
        List<JsonNode> data = new ArrayList<>();
        while (true) {
            Frame f = next();
            switch (f.type()) {
                case "status" -> { }
                case "begin" -> {
                    if (begin != null) {
                        throw new AssertionError("begin inside a transaction: " + f.raw());
                    }
                    begin = f.msg();
                }
                case "data" -> {
                    if (begin == null) {
                        throw new AssertionError("data outside a transaction: " + f.raw());
                    }
                    data.add(f.msg().get(1));
                }
                case "commit" -> {
                    if (begin == null) {
                        throw new AssertionError("commit without begin: " + f.raw());
                    }
                    String watermark = f.msg().get(2).get("watermark").asText();
                    String announced = begin.get(2).get("commitWatermark").asText();
                    if (!watermark.equals(announced)) {
                        throw new AssertionError("commit watermark " + watermark + " != begin's " + announced);
                    }
                    return new Transaction(watermark, begin, data, f.msg());
                }
                case "rollback" -> {
                    if (begin == null) {
                        throw new AssertionError("rollback without begin: " + f.raw());
                    }
                    begin = null;
                    data.clear();
                }
                default -> throw new AssertionError("unexpected frame " + f.raw());
            }
        }
    }

    /** @return the next {@code n} transactions */
    List<Transaction> transactions(int n) throws InterruptedException {
        List<Transaction> txs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            txs.add(nextTransaction());
        }
        return txs;
    }

    /** @return how the server closed the connection, failing the test if it stays open for {@link #WAIT} */
    Close awaitClose() throws Exception {
        return closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    boolean isClosed() {
        return closed.isDone();
    }

    /** Frames received and not yet read. */
    List<Frame> drain() {
        List<Frame> rest = new ArrayList<>();
        frames.drainTo(rest);
        return rest;
    }

    /** Closes from the client side (normal closure) without waiting for the server. */
    void close() {
        WebSocket ws = socket;
        if (ws != null && !ws.isOutputClosed()) {
            synchronized (this) {
                sends = sends.thenCompose(v -> ws.sendClose(WebSocket.NORMAL_CLOSURE, "done"));
            }
        }
    }

    /** Drops the TCP connection without a close handshake. */
    void abort() {
        WebSocket ws = socket;
        if (ws != null) {
            ws.abort();
        }
    }
}

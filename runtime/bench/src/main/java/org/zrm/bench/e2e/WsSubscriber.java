package org.zrm.bench.e2e;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * A protocol-v6 subscriber over WebSocket, as a zero-cache view-syncer connects:
 * {@code /replication/v6/changes?...}, every {@code {"id":n,"msg":…}} frame acknowledged with
 * {@code {"ack":n}} in order, as soon as it has been read (the benchmark consumer does nothing else
 * with it).
 *
 * <p>Frames are not decoded with the full codec: the benchmark counts inserts and commits and
 * reads the commit watermark from the fixed trailer, which keeps the client's CPU use small next
 * to the server's on these 2-core machines.
 *
 * <p>Acks are sent one at a time (the JDK client allows one outstanding send): a completion-driven
 * pump sends the next id when the previous send has completed, so memory stays bounded whatever the
 * frame rate.
 */
final class WsSubscriber implements WebSocket.Listener, AutoCloseable {

    private final String name;
    private final LongConsumer onInsertId;
    private final StringBuilder partial = new StringBuilder();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicBoolean sending = new AtomicBoolean();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Object progress = new Object();
    private volatile WebSocket ws;

    private volatile long inserts;
    private volatile long commits;
    /** Inserts seen before the latest commit: the transactions those inserts belong to are complete. */
    private volatile long insertsAtLastCommit;
    private volatile long firstFrameNanos;
    private volatile long lastCommitNanos;
    private volatile String lastCommitWatermark;
    private volatile String error;
    private long lastInsertId = Long.MIN_VALUE; // WebSocket thread only

    /**
     * @param onInsertId called, when a commit arrives, with the value of the first column
     *     ({@code id}) of the last row inserted before it, on the WebSocket's thread; {@code null}
     *     to skip parsing it
     */
    private WsSubscriber(String name, LongConsumer onInsertId) {
        this.name = name;
        this.onInsertId = onInsertId;
    }

    /** Connects and returns once the WebSocket handshake has completed. */
    static WsSubscriber connect(HttpClient client, int port, String id, String replicaVersion, String watermark,
            String mode, LongConsumer onInsertId) throws Exception {
        WsSubscriber s = new WsSubscriber(id, onInsertId);
        URI uri = URI.create("ws://127.0.0.1:" + port + "/replication/v6/changes?taskID=&id=" + enc(id)
                + "&mode=" + mode + "&watermark=" + enc(watermark) + "&replicaVersion=" + enc(replicaVersion)
                + "&initial=false");
        s.ws = client.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10)).buildAsync(uri, s)
                .get(30, TimeUnit.SECONDS);
        return s;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        webSocket.request(Long.MAX_VALUE);
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            frame(partial);
            partial.setLength(0);
        }
        return null;
    }

    private void frame(CharSequence f) {
        long now = System.nanoTime();
        if (firstFrameNanos == 0) {
            firstFrameNanos = now;
        }
        String s = f.toString();
        int comma = s.indexOf(',');
        long id = Long.parseLong(s, 6, comma, 10); // {"id":<n>,
        int typeStart = s.indexOf("\"msg\":[\"", comma) + 8;
        int typeEnd = s.indexOf('"', typeStart);
        String type = s.substring(typeStart, typeEnd);
        switch (type) {
            case "data" -> {
                if (s.startsWith("{\"tag\":\"insert\"", typeEnd + 2)) {
                    inserts++;
                    if (onInsertId != null) {
                        int at = s.indexOf("\"new\":{", typeEnd);
                        int colon = s.indexOf(':', at + 7);
                        int end = colon + 1;
                        while (end < s.length() && (Character.isDigit(s.charAt(end)) || s.charAt(end) == '-')) {
                            end++;
                        }
                        lastInsertId = Long.parseLong(s, colon + 1, end, 10);
                    }
                }
            }
            case "commit" -> {
                int w = s.lastIndexOf("\"watermark\":\"") + 13;
                lastCommitWatermark = s.substring(w, s.indexOf('"', w));
                lastCommitNanos = now;
                insertsAtLastCommit = inserts;
                commits++;
                if (onInsertId != null && lastInsertId != Long.MIN_VALUE) {
                    onInsertId.accept(lastInsertId);
                    lastInsertId = Long.MIN_VALUE;
                }
            }
            case "error" -> error = s;
            default -> {
                // begin, rollback, status: counted as frames only
            }
        }
        received.set(id);
        pumpAcks();
        if (!"data".equals(type)) {
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    /** Sends the next ack if none is in flight; each completion sends the next one. */
    private void pumpAcks() {
        if (!sending.compareAndSet(false, true)) {
            return;
        }
        long next = acked.get() + 1;
        if (next > received.get()) {
            sending.set(false);
            if (acked.get() + 1 <= received.get()) {
                pumpAcks(); // a frame arrived between the check and the release
            }
            return;
        }
        ws.sendText("{\"ack\":" + next + "}", true).whenComplete((w, failure) -> {
            if (failure == null) {
                acked.set(next);
            }
            sending.set(false);
            if (failure == null) {
                pumpAcks();
            }
        });
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        if (error == null && statusCode != WebSocket.NORMAL_CLOSURE) {
            error = "closed " + statusCode + " " + reason;
        }
        closed.complete(null);
        synchronized (progress) {
            progress.notifyAll();
        }
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable failure) {
        error = String.valueOf(failure);
        closed.complete(null);
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    /**
     * Waits until this subscriber has seen at least {@code minInserts} inserts and the commit that
     * follows the last of them.
     *
     * @return the {@link System#nanoTime()} at which that commit arrived
     * @throws IllegalStateException on an error frame or a closed connection
     */
    long awaitInserts(long minInserts, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (progress) {
            while (true) {
                if (error != null) {
                    throw new IllegalStateException(name + ": " + error);
                }
                long commitAt = lastCommitNanos;
                if (insertsAtLastCommit >= minInserts) {
                    return commitAt;
                }
                if (closed.isDone()) {
                    throw new IllegalStateException(name + ": connection closed after " + inserts + " inserts");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException(name + ": timed out with " + inserts + " of " + minInserts
                            + " inserts, " + commits + " commits");
                }
                progress.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    long inserts() {
        return inserts;
    }

    long commits() {
        return commits;
    }

    long firstFrameNanos() {
        return firstFrameNanos;
    }

    String lastCommitWatermark() {
        return lastCommitWatermark;
    }

    @Override
    public void close() {
        WebSocket w = ws;
        if (w != null && !closed.isDone()) {
            w.sendClose(WebSocket.NORMAL_CLOSURE, "bench done");
            try {
                closed.get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                w.abort();
            }
        }
    }
}

package org.zrm.changestreamer.http.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Semaphore;

/** A {@code java.net.http} WebSocket client that collects whole text messages and the close. */
final class TestClient implements WebSocket.Listener, AutoCloseable {

    /** The close frame the server sent. */
    record Close(int code, String reason) {}

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
    final CompletableFuture<Close> closed = new CompletableFuture<>();
    final Semaphore pings = new Semaphore(0);
    private final StringBuilder partial = new StringBuilder();
    final WebSocket socket;

    TestClient(String uri) throws Exception {
        socket = HTTP.newWebSocketBuilder().buildAsync(URI.create(uri), this).get(10, TimeUnit.SECONDS);
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            messages.add(partial.toString());
            partial.setLength(0);
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
        pings.release();
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

    String next() throws InterruptedException {
        String m = messages.poll(10, TimeUnit.SECONDS);
        if (m == null) {
            throw new AssertionError("no message within 10 s");
        }
        return m;
    }

    void send(String text) throws Exception {
        socket.sendText(text, true).get(10, TimeUnit.SECONDS);
    }

    void ack(long id) throws Exception {
        send("{\"ack\":" + id + "}");
    }

    Close awaitClose() throws Exception {
        return closed.get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        socket.abort();
    }
}

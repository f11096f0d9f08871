package org.zrm.changesource.endpoint.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A JDK WebSocket client that records frames and the close frame. */
final class TestClient implements WebSocket.Listener, AutoCloseable {

    record Close(int code, String reason) {}

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
    final CompletableFuture<Close> closed = new CompletableFuture<>();
    private final StringBuilder partial = new StringBuilder();
    final WebSocket socket;

    TestClient(String uri) throws Exception {
        socket = HTTP.newWebSocketBuilder().buildAsync(URI.create(uri), this).get(10, TimeUnit.SECONDS);
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            messages.add(partial.toString());
            partial.setLength(0);
        }
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
        closed.complete(new Close(statusCode, reason));
        return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
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

    Close awaitClose() throws Exception {
        return closed.get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        socket.abort();
    }
}

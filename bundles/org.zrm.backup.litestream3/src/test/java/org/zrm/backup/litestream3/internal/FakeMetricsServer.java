package org.zrm.backup.litestream3.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A fake litestream {@code /metrics} on 127.0.0.1 serving mutable text, an error status, or a hang. */
final class FakeMetricsServer implements AutoCloseable {

    enum Mode { SERVE, HANG_BEFORE_HEADERS, HANG_MID_BODY }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-metrics");
        t.setDaemon(true);
        return t;
    });
    private final AtomicInteger requests = new AtomicInteger();
    private volatile String body = "";
    private volatile int status = 200;
    private volatile Mode mode = Mode.SERVE;
    private volatile CountDownLatch hanging = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    FakeMetricsServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/metrics", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics");
    }

    void setBody(String text) {
        this.body = text;
    }

    void setStatus(int code) {
        this.status = code;
    }

    /** From now on requests hang as {@code m} says until {@link #close()}. */
    void setMode(Mode m) {
        hanging = new CountDownLatch(1);
        mode = m;
    }

    /** Waits until a request is hanging. */
    boolean awaitHanging() throws InterruptedException {
        return hanging.await(10, TimeUnit.SECONDS);
    }

    int requests() {
        return requests.get();
    }

    private void handle(HttpExchange ex) throws IOException {
        requests.incrementAndGet();
        try (ex) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            Mode m = mode;
            if (m == Mode.HANG_BEFORE_HEADERS) {
                hang();
            }
            ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
            if (m == Mode.HANG_MID_BODY) {
                ex.sendResponseHeaders(status, 0);
                OutputStream out = ex.getResponseBody();
                out.write(bytes, 0, bytes.length / 2);
                out.flush();
                hang();
                out.write(bytes, bytes.length / 2, bytes.length - bytes.length / 2);
                return;
            }
            ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                ex.getResponseBody().write(bytes);
            }
        } catch (IOException e) {
            // The client went away (the fetch was aborted): nothing to answer.
        }
    }

    private void hang() {
        hanging.countDown();
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        release.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}

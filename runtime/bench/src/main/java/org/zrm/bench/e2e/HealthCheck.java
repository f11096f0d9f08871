package org.zrm.bench.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

/** Waits for a child process's HTTP health check ({@code GET /} answering 200) on 127.0.0.1. */
final class HealthCheck {

    private HealthCheck() {
    }

    /**
     * Polls {@code GET /} every 100 ms until it answers 200: neither ZRM's runtime nor zero-cache
     * offers another process a start-up signal, so this is a bounded poll of an external process.
     *
     * @param what names the process in the error
     * @throws IOException if the process exits first or does not answer within {@code timeout}
     */
    static void await(Process process, int port, Duration timeout, String what, Path log)
            throws IOException, InterruptedException {
        await(process, port, "/", code -> code == 200, timeout, what, log);
    }

    /**
     * Polls {@code GET path} every 100 ms until its status satisfies {@code ready}.
     *
     * @throws IOException if the process exits first or {@code path} is not ready within {@code timeout}
     */
    static void await(Process process, int port, String path, java.util.function.IntPredicate ready, Duration timeout,
            String what, Path log) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        URI uri = URI.create("http://127.0.0.1:" + port + path);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException(what + " exited with " + process.exitValue() + "; see " + log);
            }
            try {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(1)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (ready.test(r.statusCode())) {
                    return;
                }
            } catch (IOException notYet) {
                // connection refused while it starts
            }
            Thread.sleep(100);
        }
        throw new IOException(what + " did not answer " + path + " on port " + port + " within " + timeout + "; see " + log);
    }
}

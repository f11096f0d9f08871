package org.zrm.backup.litestream3.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Fetches litestream's {@code /metrics} text once per check, abortably: a {@link StopSignal}
 * cancels the exchange, and the caller then sees {@link Result.Aborted} instead of an error.
 */
final class MetricsFetcher {

    /** Outcome of one fetch. */
    sealed interface Result {
        /** A 2xx response with its body. */
        record Body(String text) implements Result {
        }

        /** The fetch failed (network, timeout, non-2xx status, body over the limit). */
        record Failed(String reason) implements Result {
        }

        /** The activation stopped while the fetch was in flight; not an error. */
        record Aborted() implements Result {
        }
    }

    /** How much of a non-2xx body goes into the failure reason. */
    private static final int MAX_ERROR_TEXT = 512;

    private final URI uri;
    private final Duration timeout;
    private final int maxBodyBytes;
    private final HttpClient client;

    /**
     * @param uri the metrics endpoint
     * @param timeout bound on the whole exchange, headers and body (upstream has none; without
     *     one a hung litestream would stall every later check, including the wedge detection)
     * @param maxBodyBytes bound on the body; a larger body is discarded and the fetch fails
     */
    MetricsFetcher(URI uri, Duration timeout, int maxBodyBytes) {
        this.uri = uri;
        this.timeout = timeout;
        this.maxBodyBytes = maxBodyBytes;
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    Result fetch(StopSignal signal) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        CompletableFuture<HttpResponse<byte[]>> exchange =
                client.sendAsync(request, info -> new BoundedBodySubscriber(maxBodyBytes));
        try (StopSignal.Registration r = signal.onStop(() -> exchange.cancel(true))) {
            HttpResponse<byte[]> response = exchange.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            String text = new String(response.body(), StandardCharsets.UTF_8);
            if (response.statusCode() / 100 != 2) {
                String shown = text.length() > MAX_ERROR_TEXT ? text.substring(0, MAX_ERROR_TEXT) + "..." : text;
                return new Result.Failed("HTTP " + response.statusCode() + ": " + shown.strip());
            }
            return new Result.Body(text);
        } catch (InterruptedException e) {
            exchange.cancel(true);
            Thread.currentThread().interrupt();
            return signal.isStopped() ? new Result.Aborted() : new Result.Failed("interrupted");
        } catch (CancellationException e) {
            return signal.isStopped() ? new Result.Aborted() : new Result.Failed("cancelled");
        } catch (TimeoutException e) {
            exchange.cancel(true);
            return new Result.Failed("no complete response within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            if (signal.isStopped()) {
                return new Result.Aborted();
            }
            Throwable cause = e.getCause() == null ? e : e.getCause();
            return new Result.Failed(cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        }
    }
}

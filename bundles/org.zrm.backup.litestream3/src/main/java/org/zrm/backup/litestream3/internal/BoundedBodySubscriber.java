package org.zrm.backup.litestream3.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Collects an HTTP response body up to a byte limit. A body over the limit is not truncated:
 * the subscription is cancelled and the body fails with {@link TooLargeException}, because a
 * metrics text cut in the middle of a sample could still parse into a wrong value.
 */
final class BoundedBodySubscriber implements HttpResponse.BodySubscriber<byte[]> {

    /** The body exceeded the limit; nothing of it is used. */
    static final class TooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        TooLargeException(long limit) {
            super("response body exceeds " + limit + " bytes; discarded");
        }
    }

    private final int maxBytes;
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private Flow.Subscription subscription;

    BoundedBodySubscriber(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return body;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        // One item at a time, so at most one more list of buffers arrives after the limit is hit.
        s.request(1);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        for (ByteBuffer b : items) {
            if (buffer.size() + (long) b.remaining() > maxBytes) {
                subscription.cancel();
                body.completeExceptionally(new TooLargeException(maxBytes));
                return;
            }
            byte[] chunk = new byte[b.remaining()];
            b.get(chunk);
            buffer.writeBytes(chunk);
        }
        subscription.request(1);
    }

    @Override
    public void onError(Throwable t) {
        body.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        body.complete(buffer.toByteArray());
    }
}

package org.zrm.replicator.internal;

import java.io.IOException;
import java.util.Optional;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/** Subscribes through the {@link ChangeStreamer} service of the same runtime. */
final class InProcessChangeStreamClient implements ChangeStreamClient {

    private final ChangeStreamer streamer;

    InProcessChangeStreamClient(ChangeStreamer streamer) {
        this.streamer = streamer;
    }

    @Override
    public StreamConnection subscribe(SubscriberContext context) {
        Subscription subscription = streamer.subscribe(context);
        return new StreamConnection() {
            @Override
            public StreamMessage take() throws IOException, InterruptedException {
                SubscriptionMessage m = subscription.take();
                if (m == null) {
                    Optional<Throwable> failure = subscription.failure();
                    if (failure.isPresent()) {
                        throw new IOException("change streamer ended the subscription: " + failure.get(), failure.get());
                    }
                    return null;
                }
                return new StreamMessage() {
                    @Override
                    public String json() {
                        return m.json();
                    }

                    @Override
                    public void consumed() {
                        m.consumed();
                    }
                };
            }

            @Override
            public void close() {
                subscription.close();
            }
        };
    }

    @Override
    public String target() {
        return "in-process";
    }
}

package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/** Consumes a subscription on its own thread, acknowledging each message, like a replicator. */
final class Drain implements AutoCloseable {

    static final String END = "<end>";
    final Subscription sub;
    final BlockingQueue<String> received = new LinkedBlockingQueue<>();
    private final Thread thread;
    volatile boolean ack = true;

    Drain(Subscription sub) {
        this(sub, true);
    }

    Drain(Subscription sub, boolean ack) {
        this.sub = sub;
        this.ack = ack;
        this.thread = new Thread(this::run, "drain");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try {
            SubscriptionMessage m;
            while ((m = sub.take()) != null) {
                received.add(m.json());
                if (ack) {
                    m.consumed();
                }
            }
            received.add(END);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the next message text, failing after 10 s */
    String next() throws InterruptedException {
        String s = received.poll(10, TimeUnit.SECONDS);
        assertNotNull(s, "timed out waiting for a message");
        return s;
    }

    /** @return the next message, or null if none arrives within {@code ms} */
    String poll(long ms) throws InterruptedException {
        return received.poll(ms, TimeUnit.MILLISECONDS);
    }

    List<String> next(int n) throws InterruptedException {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(next());
        }
        return out;
    }

    @Override
    public void close() {
        sub.close();
        thread.interrupt();
    }
}

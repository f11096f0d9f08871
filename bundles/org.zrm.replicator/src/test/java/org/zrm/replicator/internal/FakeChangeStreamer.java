package org.zrm.replicator.internal;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/** An in-memory ChangeStreamer whose subscriptions the test feeds by hand. */
final class FakeChangeStreamer implements ChangeStreamer {

    final LinkedBlockingQueue<FakeSubscription> subscriptions = new LinkedBlockingQueue<>();

    @Override
    public Subscription subscribe(SubscriberContext context) {
        FakeSubscription s = new FakeSubscription(context);
        subscriptions.add(s);
        return s;
    }

    /** The next subscription, waiting up to 10 s. */
    FakeSubscription awaitSubscription() throws InterruptedException {
        FakeSubscription s = subscriptions.poll(10, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("no subscription within 10 s");
        }
        return s;
    }

    @Override
    public ChangeLogState getChangeLogState() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void reserveSnapshot(String taskID, SnapshotReservation reservation) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void endReservation(String taskID) {
        throw new UnsupportedOperationException();
    }

    static final class FakeSubscription implements Subscription {
        private static final Object END = new Object();

        final SubscriberContext context;
        final List<String> consumed = new CopyOnWriteArrayList<>();
        private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        private volatile Throwable failure;
        volatile boolean closed;
        volatile Consumer<String> onConsumed = m -> { };

        FakeSubscription(SubscriberContext context) {
            this.context = context;
        }

        void push(String... messages) {
            for (String m : messages) {
                queue.add(m);
            }
        }

        void end() {
            queue.add(END);
        }

        void fail(Throwable t) {
            failure = t;
            queue.add(END);
        }

        /** Waits until {@code n} messages were consumed (10 s at most). */
        void awaitConsumed(int n) throws InterruptedException {
            synchronized (consumed) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (consumed.size() < n) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new AssertionError("only " + consumed.size() + " of " + n + " messages consumed: " + consumed);
                    }
                    consumed.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
                }
            }
        }

        @Override
        public SubscriptionMessage take() throws InterruptedException {
            Object o = queue.take();
            if (o == END) {
                queue.add(END);
                return null;
            }
            String json = (String) o;
            return new SubscriptionMessage() {
                @Override
                public String json() {
                    return json;
                }

                @Override
                public void consumed() {
                    onConsumed.accept(json);
                    synchronized (consumed) {
                        consumed.add(json);
                        consumed.notifyAll();
                    }
                }
            };
        }

        @Override
        public boolean isReady() {
            throw new UnsupportedOperationException("this fake serves a consumer that blocks in take()");
        }

        @Override
        public boolean isFinished() {
            throw new UnsupportedOperationException("this fake serves a consumer that blocks in take()");
        }

        @Override
        public int pollShared(SubscriptionMessage[] into) {
            throw new UnsupportedOperationException("this fake serves a consumer that blocks in take()");
        }

        @Override
        public void consumedNext(int n) {
            throw new UnsupportedOperationException("this fake serves a consumer that blocks in take()");
        }

        @Override
        public void onReady(Runnable listener) {
            throw new UnsupportedOperationException("this fake serves a consumer that blocks in take()");
        }

        @Override
        public Optional<Throwable> failure() {
            return Optional.ofNullable(failure);
        }

        @Override
        public void close() {
            closed = true;
            queue.add(END);
        }
    }
}

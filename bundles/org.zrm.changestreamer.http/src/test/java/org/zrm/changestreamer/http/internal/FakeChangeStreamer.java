package org.zrm.changestreamer.http.internal;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/** An in-memory streamer: tests push messages into the subscriptions it hands out. */
final class FakeChangeStreamer implements ChangeStreamer {

    final BlockingQueue<FakeSubscription> subscriptions = new LinkedBlockingQueue<>();
    final BlockingQueue<SnapshotReservation> reservations = new LinkedBlockingQueue<>();
    final List<String> endedReservations = new CopyOnWriteArrayList<>();
    volatile String snapshotUnavailable;

    @Override
    public Subscription subscribe(SubscriberContext context) {
        FakeSubscription s = new FakeSubscription(context);
        subscriptions.add(s);
        return s;
    }

    FakeSubscription nextSubscription() throws InterruptedException {
        FakeSubscription s = subscriptions.poll(10, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("no subscription");
        }
        return s;
    }

    SnapshotReservation nextReservation() throws InterruptedException {
        SnapshotReservation r = reservations.poll(10, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("no reservation");
        }
        return r;
    }

    @Override
    public ChangeLogState getChangeLogState() {
        return new ChangeLogState("01", "01");
    }

    @Override
    public void reserveSnapshot(String taskID, SnapshotReservation reservation) throws SnapshotUnavailableException {
        String unavailable = snapshotUnavailable;
        if (unavailable != null) {
            throw new SnapshotUnavailableException(unavailable);
        }
        reservations.add(reservation);
    }

    @Override
    public void endReservation(String taskID) {
        endedReservations.add(taskID);
    }

    /** A subscription fed by the test. */
    static final class FakeSubscription implements Subscription {
        private static final FakeMessage END = new FakeMessage("<end>", null);

        final SubscriberContext context;
        private final BlockingQueue<FakeMessage> queue = new LinkedBlockingQueue<>();
        private final CountDownLatch closed = new CountDownLatch(1);
        private volatile Throwable failure;
        private volatile boolean ended;
        private volatile Runnable ready;

        FakeSubscription(SubscriberContext context) {
            this.context = context;
        }

        FakeMessage push(String json) {
            return push(new FakeMessage(json, null));
        }

        FakeMessage push(FakeMessage m) {
            queue.add(m);
            signal();
            return m;
        }

        /** Pushes many messages with one ready signal, so that no drain starts before the last. */
        void pushAll(java.util.List<String> jsons) {
            for (String json : jsons) {
                queue.add(new FakeMessage(json, null));
            }
            signal();
        }

        /** The streamer ends the subscription normally. */
        void end() {
            queue.add(END);
            signal();
        }

        void fail(Throwable cause) {
            failure = cause;
            queue.add(END);
            signal();
        }

        /** @return messages pushed and not yet taken by the connection */
        int untaken() {
            return (int) queue.stream().filter(m -> m != END).count();
        }

        private void signal() {
            Runnable r = ready;
            if (r != null) {
                r.run();
            }
        }

        @Override
        public SubscriptionMessage poll() {
            FakeMessage m = queue.peek();
            return m == null || m == END ? null : queue.poll();
        }

        /**
         * Taken by {@link #pollShared} and not yet reported consumed, oldest first; the
         * connection's reader reports them while its sender takes more.
         */
        private final java.util.concurrent.ConcurrentLinkedQueue<FakeMessage> sharedTaken =
                new java.util.concurrent.ConcurrentLinkedQueue<>();

        @Override
        public int pollShared(SubscriptionMessage[] into) {
            int n = 0;
            SubscriptionMessage m;
            while (n < into.length && (m = poll()) != null) {
                sharedTaken.add((FakeMessage) m);
                into[n++] = m;
            }
            return n;
        }

        /** Consumes the oldest {@code n} messages taken, as the streamer's outbox does. */
        @Override
        public void consumedNext(int n) {
            for (int i = 0; i < n; i++) {
                FakeMessage m = sharedTaken.poll();
                if (m == null) {
                    throw new AssertionError(n + " messages acknowledged, " + i + " were taken");
                }
                m.consumed();
            }
        }

        @Override
        public boolean isReady() {
            return ended || !queue.isEmpty();
        }

        @Override
        public boolean isFinished() {
            if (!ended && queue.peek() == END) {
                queue.poll();
                ended = true;
            }
            return ended;
        }

        @Override
        public void onReady(Runnable listener) {
            ready = listener;
            if (isReady()) {
                listener.run();
            }
        }

        boolean awaitClosed() throws InterruptedException {
            return closed.await(10, TimeUnit.SECONDS);
        }

        boolean isClosed() {
            return closed.getCount() == 0;
        }

        @Override
        public SubscriptionMessage take() throws InterruptedException {
            if (ended) {
                return null;
            }
            FakeMessage m = queue.take();
            if (m == END) {
                ended = true;
                return null;
            }
            return m;
        }

        @Override
        public Optional<Throwable> failure() {
            return Optional.ofNullable(failure);
        }

        @Override
        public void close() {
            closed.countDown();
            queue.add(END);
            signal();
        }
    }

    /** A message whose consumption the test can await. */
    static final class FakeMessage implements SubscriptionMessage {
        private final String json;
        private final ByteBuffer utf8;
        private final CountDownLatch consumed = new CountDownLatch(1);
        private final RuntimeException consumeFailure;

        /** @param utf8 returned as it is by every {@link #utf8()}, or {@code null} for the default */
        FakeMessage(String json, ByteBuffer utf8) {
            this(json, utf8, null);
        }

        /**
         * @param consumeFailure thrown by {@link #consumed()} once it has counted the call, or
         *     {@code null}: a streamer bug surfacing on the thread that reads the client's acks
         */
        FakeMessage(String json, ByteBuffer utf8, RuntimeException consumeFailure) {
            this.json = json;
            this.utf8 = utf8;
            this.consumeFailure = consumeFailure;
        }

        @Override
        public String json() {
            return json;
        }

        @Override
        public ByteBuffer utf8() {
            return utf8 != null ? utf8 : SubscriptionMessage.super.utf8();
        }

        @Override
        public void consumed() {
            consumed.countDown();
            if (consumeFailure != null) {
                throw consumeFailure;
            }
        }

        boolean isConsumed() {
            return consumed.getCount() == 0;
        }

        boolean awaitConsumed() throws InterruptedException {
            return consumed.await(10, TimeUnit.SECONDS);
        }
    }
}

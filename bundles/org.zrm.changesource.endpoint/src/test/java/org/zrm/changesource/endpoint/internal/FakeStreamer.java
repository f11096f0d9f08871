package org.zrm.changesource.endpoint.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;

/** An in-memory streamer whose subscriptions the test feeds; it checks in-order consumption. */
final class FakeStreamer implements ChangeStreamer {

    final BlockingQueue<Sub> subscriptions = new LinkedBlockingQueue<>();
    volatile ChangeLogState state = new ChangeLogState("01", "01");

    @Override
    public Subscription subscribe(SubscriberContext context) {
        Sub s = new Sub(context);
        subscriptions.add(s);
        return s;
    }

    Sub next() throws InterruptedException {
        Sub s = subscriptions.poll(10, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("no subscription");
        }
        return s;
    }

    @Override
    public ChangeLogState getChangeLogState() {
        return state;
    }

    @Override
    public void reserveSnapshot(String taskID, SnapshotReservation reservation) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void endReservation(String taskID) {
    }

    static final class Sub implements Subscription {
        private static final Msg END = new Msg(null, "<end>", -1);
        final SubscriberContext context;
        private final BlockingQueue<Msg> queue = new LinkedBlockingQueue<>();
        private final List<Msg> all = new ArrayList<>();
        final CountDownLatch closed = new CountDownLatch(1);
        volatile String outOfOrder;
        private volatile boolean ended;

        Sub(SubscriberContext context) {
            this.context = context;
        }

        synchronized Msg push(String json) {
            Msg m = new Msg(this, json, all.size());
            all.add(m);
            queue.add(m);
            return m;
        }

        void end() {
            queue.add(END);
        }

        synchronized void consumed(Msg m) {
            for (int i = 0; i < m.index; i++) {
                if (!all.get(i).isConsumed()) {
                    outOfOrder = "message " + m.index + " consumed before " + i;
                }
            }
        }

        @Override
        public SubscriptionMessage take() throws InterruptedException {
            if (ended) {
                return null;
            }
            Msg m = queue.take();
            if (m == END) {
                ended = true;
                return null;
            }
            return m;
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
            return Optional.empty();
        }

        @Override
        public void close() {
            closed.countDown();
            queue.add(END);
        }
    }

    static final class Msg implements SubscriptionMessage {
        private final Sub sub;
        private final String json;
        final int index;
        private final CountDownLatch consumed = new CountDownLatch(1);

        Msg(Sub sub, String json, int index) {
            this.sub = sub;
            this.json = json;
            this.index = index;
        }

        @Override
        public String json() {
            return json;
        }

        @Override
        public void consumed() {
            consumed.countDown();
            sub.consumed(this);
        }

        boolean isConsumed() {
            return consumed.getCount() == 0;
        }

        boolean awaitConsumed() throws InterruptedException {
            return consumed.await(10, TimeUnit.SECONDS);
        }
    }
}

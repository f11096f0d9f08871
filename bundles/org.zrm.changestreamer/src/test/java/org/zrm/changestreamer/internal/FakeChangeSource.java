package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;

/** An in-memory change source: tests push messages (or failures) into the current stream. */
final class FakeChangeSource implements ChangeSource, ChangeStreamerService.SourceProvider {

    volatile SubscriptionState state;
    /** The {@code resetReplica} argument of every initialize call. */
    final BlockingQueue<Boolean> initializations = new LinkedBlockingQueue<>();
    /** Replica versions that successive {@code initialize(true)} calls re-sync to; empty = keep the version. */
    final BlockingQueue<String> resetVersions = new LinkedBlockingQueue<>();
    /** Failures thrown by the next startStream calls, one each. */
    final BlockingQueue<Exception> startFailures = new LinkedBlockingQueue<>();
    final BlockingQueue<String> startWatermarks = new LinkedBlockingQueue<>();
    final BlockingQueue<FakeStream> streams = new LinkedBlockingQueue<>();
    final BlockingQueue<ChangeSourceUpstream> acks = new LinkedBlockingQueue<>();
    volatile boolean stopped;
    private volatile FakeStream current;

    FakeChangeSource(String replicaVersion) {
        this.state = new SubscriptionState(replicaVersion, List.of("zero_data"), replicaVersion);
    }

    @Override
    public Optional<ChangeSource> await(Duration timeout) {
        return Optional.of(this);
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) {
        initializations.add(resetReplica);
        String v = resetReplica ? resetVersions.poll() : null;
        if (v != null) {
            state = new SubscriptionState(v, state.publications(), v);
        }
        return state;
    }

    @Override
    public OptionalLong startLagReporter() {
        return OptionalLong.of(123);
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException {
        Exception failure = startFailures.poll();
        if (failure != null) {
            startWatermarks.add(afterWatermark);
            if (failure instanceof ChangeSourceException e) {
                throw e;
            }
            throw (RuntimeException) failure;
        }
        FakeStream s = new FakeStream();
        current = s;
        startWatermarks.add(afterWatermark);
        streams.add(s);
        firstStream.countDown();
        return s;
    }

    /** @return the stream opened most recently, waiting for one */
    FakeStream stream() throws InterruptedException {
        if (!firstStream.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("no stream was started");
        }
        return current;
    }

    private final java.util.concurrent.CountDownLatch firstStream = new java.util.concurrent.CountDownLatch(1);

    /** @return the next stream opened after the ones already taken */
    FakeStream nextStream() throws InterruptedException {
        return streams.poll(10, TimeUnit.SECONDS);
    }

    void push(ChangeStreamMessage... msgs) throws InterruptedException {
        FakeStream s = stream();
        for (ChangeStreamMessage m : msgs) {
            s.items.add(m);
        }
    }

    @Override
    public void stop() {
        stopped = true;
    }

    /** One stream; items are messages or exceptions to throw from take(). */
    final class FakeStream implements ChangeStream {
        final BlockingQueue<Object> items = new LinkedBlockingQueue<>();
        volatile boolean closed;

        /** Makes take() throw {@code e} (a ChangeSourceException or a RuntimeException). */
        void fail(Exception e) {
            items.add(e);
        }

        /** Ends the stream as a closed connection does. */
        void end() {
            items.add(new ChangeStreamClosedException("stream ended"));
        }

        @Override
        public ChangeStreamMessage take() throws ChangeSourceException, InterruptedException {
            while (true) {
                ChangeStreamMessage m = poll(Duration.ofMillis(20));
                if (m != null) {
                    return m;
                }
            }
        }

        @Override
        public ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException, InterruptedException {
            if (closed) {
                throw new ChangeStreamClosedException("closed");
            }
            Object o = timeout.isNegative() || timeout.isZero() ? items.poll()
                    : items.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (o instanceof ChangeSourceException e) {
                throw e;
            }
            if (o instanceof RuntimeException e) {
                throw e;
            }
            return (ChangeStreamMessage) o;
        }

        @Override
        public void ack(ChangeSourceUpstream ack) {
            if (!closed) {
                acks.add(ack);
            }
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}

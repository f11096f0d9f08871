package org.zrm.changesource.pg.internal.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.stream.ChangeStreamMultiplexer.Reservation;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;

/** Port of upstream {@code change-stream-multiplexer.test.ts}, plus the bounds of the Java version. */
class ChangeStreamMultiplexerTest {

    private final ProtocolCodec codec = new ProtocolCodec();
    private final AtomicLong clock = new AtomicLong(1_000);
    private final MessageBuffer buffer = new MessageBuffer(1000, 1 << 20, null);
    private final ChangeStreamMultiplexer stream = new ChangeStreamMultiplexer("123", buffer, clock::get);

    private ChangeStreamMessage msg(String json) {
        return codec.decodeChangeStreamMessage(json);
    }

    @Test
    void reservations() throws Exception {
        // pushStatus() needs no reservation, other pushes do.
        stream.pushStatus((ChangeStreamMessage.StatusMessage) msg("[\"status\",{\"ack\":true},{\"watermark\":\"foo\"}]"),
                64);
        assertThrows(IllegalStateException.class,
                () -> stream.push(null, msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123\"}]"), 64));

        Reservation res1 = stream.tryReserve("foo", null);
        assertTrue(res1.granted());
        assertEquals("123", res1.watermark());
        assertTrue(stream.waiterDelayNanos() < 0);

        // Already reserved: the next two wait in line.
        AtomicInteger grants = new AtomicInteger();
        Reservation res2 = stream.tryReserve("bar", grants::incrementAndGet);
        assertFalse(res2.granted());
        clock.addAndGet(5);
        assertTrue(stream.waiterDelayNanos() > 0);
        CompletableFuture<Reservation> res3 = CompletableFuture.supplyAsync(() -> {
            try {
                return stream.reserve("baz");
            } catch (ChangeSourceException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        while (stream.waiterCount() < 2) {
            Thread.onSpinWait();
        }
        assertEquals(5, stream.waiterDelayNanos(), "the age of the oldest request");

        stream.release(res1, "156");
        assertTrue(res2.granted());
        assertEquals("156", res2.watermark());
        assertEquals(1, grants.get(), "the grant callback ran once");
        assertTrue(stream.waiterDelayNanos() > 0, "one more in line");
        assertThrows(IllegalStateException.class, () -> stream.release(res1, "157"), "res1 no longer holds");

        stream.release(res2, "28da");
        Reservation r3 = res3.get(5, TimeUnit.SECONDS);
        assertEquals("28da", r3.watermark());
        assertTrue(stream.waiterDelayNanos() < 0);

        stream.release(r3, "2e82");
        Reservation again = stream.tryReserve("foo", null);
        assertTrue(again.granted(), "no waiting for a free stream");
        assertEquals("2e82", again.watermark());
    }

    @Test
    void cancelation() {
        AtomicInteger cancel1 = new AtomicInteger();
        AtomicInteger cancel2 = new AtomicInteger();
        stream.addProducer(cancel1::incrementAndGet).addProducer(cancel2::incrementAndGet);
        assertEquals(0, cancel1.get() + cancel2.get());
        stream.fail(new ChangeSourceException("foo"));
        assertEquals(1, cancel1.get());
        assertEquals(1, cancel2.get());
        stream.fail(new ChangeSourceException("again"));
        assertEquals(1, cancel1.get(), "cancelled once");
        AtomicInteger late = new AtomicInteger();
        stream.addProducer(late::incrementAndGet);
        assertEquals(1, late.get(), "a producer added after the end is cancelled at once");
    }

    @Test
    void listeners() throws Exception {
        List<ChangeStreamMessage> seen1 = new ArrayList<>();
        List<ChangeStreamMessage> seen2 = new ArrayList<>();
        stream.addListener(seen1::add).addListener(seen2::add);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123\"}]");
        Reservation r = stream.tryReserve("foo", null);
        stream.push(r, begin, 64);
        assertEquals(List.of(begin), seen1);
        assertEquals(List.of(begin), seen2);
        ChangeStreamMessage commit = msg("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"123\"}]");
        stream.push(r, commit, 64);
        ChangeStreamMessage.StatusMessage status = (ChangeStreamMessage.StatusMessage) msg(
                "[\"status\",{\"ack\":false},{\"watermark\":\"124\"}]");
        stream.pushStatus(status, 64);
        assertEquals(List.of(begin, commit, status), seen1);
        assertEquals(List.of(begin, commit, status), seen2);
        // The consumer gets the transaction but not the status without ack or lag report.
        assertSame(begin, buffer.poll(Duration.ZERO));
        assertSame(commit, buffer.poll(Duration.ZERO));
        assertNull(buffer.poll(Duration.ZERO));
    }

    @Test
    void aFailingListenerDoesNotStopTheStream() throws Exception {
        stream.addListener(m -> {
            throw new IllegalStateException("listener bug");
        });
        Reservation r = stream.tryReserve("foo", null);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123\"}]");
        stream.push(r, begin, 64);
        assertSame(begin, buffer.poll(Duration.ZERO));
    }

    @Test
    void blockingPushWaitsForTheConsumerAtTheBound() throws Exception {
        MessageBuffer small = new MessageBuffer(2, 1 << 20, null);
        ChangeStreamMultiplexer mux = new ChangeStreamMultiplexer("123", small);
        Reservation r = mux.tryReserve("backfill", null);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123.01\"}]");
        mux.push(r, begin, 64);
        mux.push(r, begin, 64); // now at the bound of 2 messages
        CompletableFuture<Void> third = pushInBackground(mux, r, begin, 64);
        assertThrows(java.util.concurrent.TimeoutException.class, () -> third.get(200, TimeUnit.MILLISECONDS),
                "the push waits while the buffer is full");
        assertSame(begin, small.poll(Duration.ZERO));
        third.get(5, TimeUnit.SECONDS);
        assertEquals(2, small.size());
    }

    @Test
    void aBlockingProducerKeepsAtMostItsOwnByteBoundInFrontOfTheReplicationPump() throws Exception {
        // The buffer's own bounds (1024 messages, 16 MiB) are far away; the backfill's is much smaller.
        MessageBuffer shared = new MessageBuffer(1024, 16 << 20, null);
        ChangeStreamMultiplexer mux = new ChangeStreamMultiplexer("123", shared);
        Reservation r = mux.tryReserve("backfill", null);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123.01\"}]");
        // Two of these stay below the producer's bound, three reach it.
        int cost = (int) (ChangeStreamMultiplexer.BLOCKING_PRODUCER_MAX_BUFFERED_BYTES * 2 / 5);
        mux.push(r, begin, cost);
        mux.push(r, begin, cost);
        mux.push(r, begin, cost); // 6/5 of the bound buffered: at the producer's bound
        CompletableFuture<Void> fourth = pushInBackground(mux, r, begin, cost);
        assertThrows(java.util.concurrent.TimeoutException.class, () -> fourth.get(200, TimeUnit.MILLISECONDS),
                "the push waits while its own bound is reached, with the buffer far from full");
        assertSame(begin, shared.poll(Duration.ZERO)); // 4/5 of the bound left: below it
        fourth.get(5, TimeUnit.SECONDS);
        assertEquals(3, shared.size());
        // The replication pump's non-blocking offers are not held to that bound.
        assertTrue(shared.hasRoom());
    }

    @Test
    void anEmptyBufferTakesOneBlockingMessageLargerThanTheProducersBound() throws Exception {
        MessageBuffer shared = new MessageBuffer(1024, 16 << 20, null);
        ChangeStreamMultiplexer mux = new ChangeStreamMultiplexer("123", shared);
        Reservation r = mux.tryReserve("backfill", null);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123.01\"}]");
        mux.push(r, begin, (int) ChangeStreamMultiplexer.BLOCKING_PRODUCER_MAX_BUFFERED_BYTES * 4);
        assertEquals(1, shared.size());
    }

    @Test
    void aHolderWaitingForRoomGivesUpWhenTheReplicationPumpAsks() throws Exception {
        MessageBuffer shared = new MessageBuffer(1024, 16 << 20, null);
        ChangeStreamMultiplexer mux = new ChangeStreamMultiplexer("123", shared);
        Reservation r = mux.tryReserve("backfill", null);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123.01\"}]");
        assertTrue(mux.awaitRoom(r), "room at once below the producer's bound");
        mux.push(r, begin, (int) ChangeStreamMultiplexer.BLOCKING_PRODUCER_MAX_BUFFERED_BYTES);
        CompletableFuture<Boolean> waiting = awaitRoomInBackground(mux, r);
        assertThrows(java.util.concurrent.TimeoutException.class, () -> waiting.get(200, TimeUnit.MILLISECONDS),
                "the holder waits for the consumer while nobody else asks");
        Reservation pump = mux.tryReserve(ChangeStreamMultiplexer.REPLICATION, null);
        assertFalse(waiting.get(5, TimeUnit.SECONDS), "a request ends the wait without room, so the holder can yield");
        assertEquals(1, shared.size(), "nothing was pushed or taken");
        assertFalse(mux.awaitRoom(r), "a request already waiting ends the wait at once");

        // Nothing held: the wait is for room only, and a request does not end it.
        ChangeStreamMessage commit = msg("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"123.01\"}]");
        mux.push(r, commit, 64);
        mux.release(r, "123.01");
        assertTrue(pump.granted());
        CompletableFuture<Boolean> roomOnly = awaitRoomInBackground(mux, null);
        assertThrows(java.util.concurrent.TimeoutException.class, () -> roomOnly.get(200, TimeUnit.MILLISECONDS));
        assertSame(begin, shared.poll(Duration.ZERO));
        assertTrue(roomOnly.get(5, TimeUnit.SECONDS));
    }

    @Test
    void aCommitIsNotHeldBackByTheProducersOwnBound() throws Exception {
        MessageBuffer shared = new MessageBuffer(1024, 16 << 20, null);
        ChangeStreamMultiplexer mux = new ChangeStreamMultiplexer("123", shared);
        Reservation r = mux.tryReserve("backfill", null);
        ChangeStreamMessage begin = msg("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"123.01\"}]");
        mux.push(r, begin, (int) ChangeStreamMultiplexer.BLOCKING_PRODUCER_MAX_BUFFERED_BYTES);
        ChangeStreamMessage commit = msg("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"123.01\"}]");
        // At the producer's bound: a data message would wait; the commit that ends the transaction does not.
        pushInBackground(mux, r, commit, 64).get(5, TimeUnit.SECONDS);
        assertEquals(2, shared.size());
        // The buffer's own bound still holds for it.
        MessageBuffer full = new MessageBuffer(1, 16 << 20, null);
        ChangeStreamMultiplexer mux2 = new ChangeStreamMultiplexer("123", full);
        Reservation r2 = mux2.tryReserve("backfill", null);
        mux2.push(r2, begin, 64);
        CompletableFuture<Void> blocked = pushInBackground(mux2, r2, commit, 64);
        assertThrows(java.util.concurrent.TimeoutException.class, () -> blocked.get(200, TimeUnit.MILLISECONDS));
        full.poll(Duration.ZERO);
        blocked.get(5, TimeUnit.SECONDS);
    }

    /** {@link ChangeStreamMultiplexer#awaitRoom} on another thread, for tests that expect it to wait. */
    private static CompletableFuture<Boolean> awaitRoomInBackground(ChangeStreamMultiplexer mux, Reservation r) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return mux.awaitRoom(r);
            } catch (ChangeSourceException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** A blocking push on another thread, for tests that expect it to wait. */
    private static CompletableFuture<Void> pushInBackground(ChangeStreamMultiplexer mux, Reservation r,
            ChangeStreamMessage message, int cost) {
        return CompletableFuture.runAsync(() -> {
            try {
                mux.push(r, message, cost);
            } catch (ChangeSourceException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aWaitingReserveFailsWhenTheStreamEnds() throws Exception {
        Reservation held = stream.tryReserve("replication", null);
        assertTrue(held.granted());
        CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                stream.reserve("backfill");
                return null;
            } catch (ChangeSourceException | InterruptedException e) {
                return e;
            }
        });
        while (stream.waiterDelayNanos() < 0) {
            Thread.onSpinWait();
        }
        stream.fail(new ChangeStreamClosedException("closed"));
        assertTrue(waiter.get(5, TimeUnit.SECONDS) instanceof ChangeStreamClosedException);
        assertTrue(stream.waiterDelayNanos() < 0, "the request was withdrawn");
    }

    @Test
    void waitersAreBounded() {
        stream.tryReserve("holder", null);
        for (int i = 0; i < ChangeStreamMultiplexer.MAX_WAITERS; i++) {
            assertFalse(stream.tryReserve("w" + i, null).granted());
        }
        assertThrows(IllegalStateException.class, () -> stream.tryReserve("one too many", null));
    }
}

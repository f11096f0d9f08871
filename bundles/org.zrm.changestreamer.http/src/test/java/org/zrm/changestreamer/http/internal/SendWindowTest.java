package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link SendWindow}: admission up to the bound, a refused sender's callback run exactly once by
 * the next release or the close, blocking acquires woken by release, close and interrupt, and no
 * release lost between a refusal and the callback's registration under real concurrency.
 */
class SendWindowTest {

    @Test
    void admitsUpToTheBoundAndOneOversizedFrameWhenEmpty() {
        SendWindow w = new SendWindow(100);
        assertTrue(tryAcquire(w, 60, () -> { }));
        assertTrue(tryAcquire(w, 40, () -> { }));
        assertFalse(tryAcquire(w, 1, () -> { }), "the bound is reached");
        w.release(100);
        assertEquals(0, w.outstanding());
        assertTrue(tryAcquire(w, 500, () -> { }), "a frame larger than the bound goes when nothing is outstanding");
        assertFalse(tryAcquire(w, 1, () -> { }));
        assertFalse(w.fitsOrNotify(1, () -> { }));
        w.release(500);
        assertTrue(w.fitsOrNotify(1, () -> { }));
        assertEquals(0, w.outstanding(), "fitsOrNotify counts nothing");
        w.release(10);
        assertEquals(0, w.outstanding(), "a release never takes the count below zero");
    }

    @Test
    void aBatchIsAdmittedUpToItsLongestPrefixThatFits() {
        SendWindow w = new SendWindow(100);
        long[] frames = {30, 30, 30, 30, 30};
        AtomicInteger calls = new AtomicInteger();
        assertEquals(3, w.tryAcquireFrames(frames, 0, 5, calls::incrementAndGet), "the fourth would pass the bound");
        assertEquals(90, w.outstanding());
        assertEquals(0, calls.get(), "frames were admitted, so nobody waits");
        assertEquals(0, w.tryAcquireFrames(frames, 3, 5, calls::incrementAndGet));
        assertEquals(90, w.outstanding(), "a refused batch counts nothing");
        w.release(90);
        assertEquals(1, calls.get(), "the refused sender is called back on the release");
        assertEquals(2, w.tryAcquireFrames(frames, 3, 5, () -> { }));
        assertEquals(0, w.tryAcquireFrames(frames, 2, 2, () -> { }), "an empty batch admits nothing");
        w.release(60);
        assertEquals(1, w.tryAcquireFrames(new long[] {500, 1}, 0, 2, () -> { }),
                "a frame larger than the bound goes alone when nothing is outstanding");
        assertEquals(500, w.outstanding());
    }

    @Test
    void aRefusedSendersCallbackRunsOnceOnTheNextRelease() {
        SendWindow w = new SendWindow(10);
        AtomicInteger calls = new AtomicInteger();
        assertTrue(tryAcquire(w, 10, () -> { }));
        assertFalse(tryAcquire(w, 5, calls::incrementAndGet));
        assertEquals(0, calls.get());
        w.release(3);
        assertEquals(1, calls.get());
        w.release(3);
        assertEquals(1, calls.get(), "once only");
    }

    @Test
    void closeRunsTheCallbackAndRefusesEverythingAfter() throws Exception {
        SendWindow w = new SendWindow(10);
        AtomicInteger calls = new AtomicInteger();
        assertTrue(tryAcquire(w, 10, () -> { }));
        assertFalse(w.fitsOrNotify(5, calls::incrementAndGet));
        w.close();
        assertEquals(1, calls.get());
        w.release(10);
        assertFalse(tryAcquire(w, 1, calls::incrementAndGet));
        assertFalse(w.acquire(1));
        assertEquals(1, calls.get(), "a closed window registers nothing");
    }

    @Test
    void aBlockedAcquireWakesOnReleaseOnCloseAndOnInterrupt() throws Exception {
        SendWindow w = new SendWindow(10);
        assertTrue(w.acquire(10));
        CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(() -> acquire(w, 5));
        assertThrows(TimeoutException.class, () -> blocked.get(50, TimeUnit.MILLISECONDS));
        w.release(10);
        assertTrue(blocked.get(10, TimeUnit.SECONDS));
        assertEquals(5, w.outstanding());

        assertTrue(w.acquire(5));
        assertTrue(new SendWindow(10).acquire(1000), "a blocking acquire of an oversized frame passes when empty");
        CompletableFuture<Boolean> closedOn = CompletableFuture.supplyAsync(() -> acquire(w, 5));
        assertThrows(TimeoutException.class, () -> closedOn.get(50, TimeUnit.MILLISECONDS));
        w.close();
        assertFalse(closedOn.get(10, TimeUnit.SECONDS), "close fails the waiting acquire");

        SendWindow full = new SendWindow(1);
        assertTrue(full.acquire(1));
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Boolean> interrupted = CompletableFuture.supplyAsync(() -> {
            waiter.set(Thread.currentThread());
            return acquire(full, 1);
        });
        assertThrows(TimeoutException.class, () -> interrupted.get(50, TimeUnit.MILLISECONDS));
        waiter.get().interrupt();
        ExecutionException e = assertThrows(ExecutionException.class, () -> interrupted.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getCause() instanceof InterruptedException, e.toString());
    }

    private static boolean acquire(SendWindow w, long chars) {
        try {
            return w.acquire(chars);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A sender that, like a connection's drain, retries only when its callback runs, against two
     * threads that release what it admitted: a release lost between a refusal and the callback's
     * publication would leave the sender waiting forever. The bound holds throughout.
     */
    @Test
    void noReleaseIsLostUnderConcurrency() throws Exception {
        final long limit = 64;
        final int frames = 200_000;
        SendWindow w = new SendWindow(limit);
        java.util.concurrent.ArrayBlockingQueue<Long> admitted = new java.util.concurrent.ArrayBlockingQueue<>(1024);
        Semaphore retry = new Semaphore(0);
        AtomicLong maxSeen = new AtomicLong();
        Thread sender = new Thread(() -> {
            try {
                for (int i = 0; i < frames; i++) {
                    long chars = 1 + i % 16;
                    while (!tryAcquire(w, chars, retry::release)) {
                        if (!retry.tryAcquire(10, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("no callback after a refusal: a release was lost");
                        }
                    }
                    maxSeen.accumulateAndGet(w.outstanding(), Math::max);
                    admitted.put(chars);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicLong released = new AtomicLong();
        Runnable releaser = () -> {
            try {
                while (released.get() < frames) {
                    Long chars = admitted.poll(10, TimeUnit.MILLISECONDS);
                    if (chars != null) {
                        w.release(chars);
                        released.incrementAndGet();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Thread r1 = new Thread(releaser);
        Thread r2 = new Thread(releaser);
        sender.start();
        r1.start();
        r2.start();
        sender.join(60_000);
        r1.join(60_000);
        r2.join(60_000);
        assertFalse(sender.isAlive(), "the sender stalled");
        assertEquals(frames, released.get());
        assertEquals(0, w.outstanding());
        assertTrue(maxSeen.get() <= limit, "outstanding reached " + maxSeen.get() + " over a bound of " + limit);
    }

    /** One frame through {@link SendWindow#tryAcquireFrames}. */
    private static boolean tryAcquire(SendWindow w, long chars, Runnable onRelease) {
        return w.tryAcquireFrames(new long[] {chars}, 0, 1, onRelease) == 1;
    }
}

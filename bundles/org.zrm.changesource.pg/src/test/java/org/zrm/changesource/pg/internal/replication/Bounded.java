package org.zrm.changesource.pg.internal.replication;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one fuzzed call on a worker thread with a deadline and measures what it allocated, so that
 * a hang or a runaway allocation fails the property instead of stalling or exhausting the build.
 */
final class Bounded implements AutoCloseable {

    /** What a call returned or threw, and the bytes its thread allocated meanwhile. */
    record Outcome<T>(T value, Throwable thrown, long allocatedBytes) {}

    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "zrm-fuzz-worker");
        t.setDaemon(true);
        return t;
    });
    private final Duration deadline;

    Bounded(Duration deadline) {
        this.deadline = deadline;
    }

    <T> Outcome<T> call(Callable<T> call) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Future<Outcome<T>> f = worker.submit(() -> {
            long before = threads.getCurrentThreadAllocatedBytes();
            try {
                T v = call.call();
                return new Outcome<>(v, null, threads.getCurrentThreadAllocatedBytes() - before);
            } catch (Throwable t) {
                return new Outcome<>(null, t, threads.getCurrentThreadAllocatedBytes() - before);
            }
        });
        try {
            return f.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AssertionError("call did not finish within " + deadline);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }
}

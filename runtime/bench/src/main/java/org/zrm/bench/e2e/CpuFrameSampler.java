package org.zrm.bench.e2e;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Samples a server's CPU time and the frames its subscribers have received, every
 * {@value #PERIOD_MILLIS} ms, so that the CPU per frame can be taken over the same window as the
 * rate: from the warm-up's end, which is only known once every subscriber has passed it.
 *
 * <p>Why not from the connect: the window from the connect holds the warm-up, and in a runtime
 * started for the run the warm-up is where the JIT compiles the fan-out path (in session 21, more
 * than 20 s of compilations of over 100 ms each went by in the first 35 s of the 50-subscriber
 * run). The minimal writer's compilations run on threads its figure does not count, so the
 * figure from the connect compared a cold runtime, compiler threads included, with a writer
 * counted without them. Both figures are printed.
 *
 * <p>Bounded: one sample every {@value #PERIOD_MILLIS} ms for at most {@code capacity} samples;
 * later ones are dropped, and {@link #at} then answers from the last one kept (a run that long
 * fails its own timeouts first).
 */
final class CpuFrameSampler implements AutoCloseable {

    static final long PERIOD_MILLIS = 20;

    private final LongSupplier cpuNanos;
    private final LongSupplier frames;
    private final long[] nanos;
    private final long[] cpu;
    private final long[] seen;
    private final ScheduledExecutorService timer;
    // Written by the timer's thread only; read after close(), which waits for it.
    private int size;

    /**
     * Starts sampling at once; the first sample is taken before this returns.
     *
     * @param capacity samples to keep at most
     */
    CpuFrameSampler(LongSupplier cpuNanos, LongSupplier frames, int capacity) {
        this.cpuNanos = cpuNanos;
        this.frames = frames;
        this.nanos = new long[capacity];
        this.cpu = new long[capacity];
        this.seen = new long[capacity];
        sample();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-cpu-frames");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleAtFixedRate(this::sample, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void sample() {
        if (size < nanos.length) {
            nanos[size] = System.nanoTime();
            cpu[size] = cpuNanos.getAsLong();
            seen[size] = frames.getAsLong();
            size++;
        }
    }

    /** Stops sampling after one last sample. */
    @Override
    public void close() throws InterruptedException {
        timer.shutdown();
        if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the CPU sampler did not stop");
        }
        sample();
    }

    /**
     * @return {cpuNanos, frames} of the last sample taken at or before {@code nanoTime} (the first
     *     sample if none was); call after {@link #close()}
     */
    long[] at(long nanoTime) {
        int i = 0;
        while (i + 1 < size && nanos[i + 1] <= nanoTime) {
            i++;
        }
        return new long[] {cpu[i], seen[i]};
    }

    /** @return {cpuNanos, frames} of the last sample; call after {@link #close()} */
    long[] last() {
        return new long[] {cpu[size - 1], seen[size - 1]};
    }
}

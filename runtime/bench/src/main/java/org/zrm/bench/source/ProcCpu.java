package org.zrm.bench.source;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.zrm.bench.ProcStat;

/**
 * CPU seconds of one Linux process (here: a walsender), sampled from {@code /proc/<pid>/stat} while
 * it runs, because the figure disappears with the process. Shows which side of the socket is the
 * bottleneck. The last sample is at most one period old, so the figure is a lower bound.
 */
public final class ProcCpu implements AutoCloseable {

    private final Path stat;
    private final AtomicLong ticks = new AtomicLong(-1);
    private final ScheduledFuture<?> task;

    ProcCpu(int pid, ScheduledExecutorService scheduler) {
        this.stat = Path.of("/proc", Integer.toString(pid), "stat");
        this.task = scheduler.scheduleAtFixedRate(this::sample, 0, 50, TimeUnit.MILLISECONDS);
    }

    private void sample() {
        try {
            ticks.set(ProcStat.read(stat).cpuTicks());
        } catch (IOException e) {
            // The process has exited: keep the last sample, which is what we report.
            return;
        }
    }

    /** A single daemon thread for sampling CPU times; the caller shuts it down. */
    public static java.util.concurrent.ScheduledExecutorService newSampler() {
        return java.util.concurrent.Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "bench-cpu-sampler");
            t.setDaemon(true);
            return t;
        });
    }

    /** Stops sampling (after one last sample) and returns CPU seconds, or -1 if never sampled. */
    public double stopSeconds() {
        sample();
        task.cancel(false);
        long t = ticks.get();
        return t < 0 ? -1 : t / (double) ProcStat.TICKS_PER_SECOND;
    }

    @Override
    public void close() {
        task.cancel(false);
    }
}

package org.zrm.backup.replica.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.zrm.testing.backup.ManualClock;

/**
 * A {@link ScheduledExecutorService} driven by a {@link ManualClock}: tasks run on the test's
 * thread when the test calls {@link #runDue()} after advancing the clock, the way upstream's tests
 * use fake timers. Only {@code scheduleWithFixedDelay} is supported, the one call the monitor makes.
 */
final class ManualScheduledExecutor extends AbstractExecutorService implements ScheduledExecutorService {

    private final ManualClock clock;
    private final List<Task> tasks = new ArrayList<>();
    private boolean shutdown;

    ManualScheduledExecutor(ManualClock clock) {
        this.clock = clock;
    }

    /** Runs every task due at the clock's current time (periodic ones are re-armed after running). */
    synchronized int runDue() {
        int ran = 0;
        while (true) {
            Instant now = clock.instant();
            Task next = tasks.stream().filter(t -> !t.cancelled && !t.due.isAfter(now))
                    .min(Comparator.comparing(t -> t.due)).orElse(null);
            if (next == null || shutdown) {
                return ran;
            }
            next.command.run();
            ran++;
            next.due = clock.instant().plus(next.delay);
        }
    }

    /** Advances the clock by {@code d} and runs what became due. */
    int advanceAndRun(Duration d) {
        clock.advance(d);
        return runDue();
    }

    synchronized List<Task> tasks() {
        return List.copyOf(tasks);
    }

    @Override
    public synchronized ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
            TimeUnit unit) {
        if (shutdown) {
            throw new java.util.concurrent.RejectedExecutionException("shut down");
        }
        Task t = new Task(command, clock.instant().plus(Duration.ofNanos(unit.toNanos(initialDelay))),
                Duration.ofNanos(unit.toNanos(delay)));
        tasks.add(t);
        return t;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public synchronized void shutdown() {
        shutdown = true;
    }

    @Override
    public synchronized List<Runnable> shutdownNow() {
        shutdown = true;
        tasks.forEach(t -> t.cancelled = true);
        return List.of();
    }

    @Override
    public synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public synchronized boolean isTerminated() {
        return shutdown; // tasks only run inside runDue(), on the test's thread
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isTerminated();
    }

    @Override
    public void execute(Runnable command) {
        throw new UnsupportedOperationException();
    }

    /** A periodic task; its future never completes normally (like a real fixed-delay task). */
    final class Task implements ScheduledFuture<Object> {
        final Runnable command;
        final Duration delay;
        volatile Instant due;
        volatile boolean cancelled;

        Task(Runnable command, Instant due, Duration delay) {
            this.command = command;
            this.due = due;
            this.delay = delay;
        }

        Duration delay() {
            return delay;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(Duration.between(clock.instant(), due));
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean was = cancelled;
            cancelled = true;
            return !was;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return cancelled;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }
    }
}

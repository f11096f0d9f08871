package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.ArrayDeque;

/** A cleanup timer whose tasks run only when the test says so. */
final class ManualTimer implements CleanupTimer {

    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    Duration lastDelay;

    @Override
    public synchronized Scheduled schedule(Runnable task, Duration delay) {
        tasks.add(task);
        lastDelay = delay;
        return () -> {
            synchronized (ManualTimer.this) {
                tasks.remove(task);
            }
        };
    }

    synchronized int scheduled() {
        return tasks.size();
    }

    void runNext() {
        Runnable r;
        synchronized (this) {
            r = tasks.poll();
        }
        if (r == null) {
            throw new AssertionError("no task scheduled");
        }
        r.run();
    }
}

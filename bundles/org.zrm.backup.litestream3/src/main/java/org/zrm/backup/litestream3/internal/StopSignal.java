package org.zrm.backup.litestream3.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Tells the I/O of one monitor activation that the monitor is stopping (Zero's {@code AbortSignal}
 * of its {@code RunningState}). Blocking operations register a callback that aborts them (cancel
 * an HTTP exchange, kill a child process) for as long as they run; {@link #stop()} runs the
 * callbacks once. Thread-safe.
 */
final class StopSignal {

    /** A registered callback; closing it unregisters the callback. */
    interface Registration extends AutoCloseable {
        @Override
        void close();
    }

    // At most a handful of registrations are live at a time (one HTTP exchange or two listing
    // processes), because every caller unregisters in a finally block.
    private final List<Runnable> callbacks = new ArrayList<>();
    private boolean stopped;

    /** Marks the activation stopped and runs every registered abort callback, outside the lock. */
    void stop() {
        List<Runnable> toRun;
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            toRun = new ArrayList<>(callbacks);
            callbacks.clear();
        }
        RuntimeException first = null;
        for (Runnable r : toRun) {
            try {
                r.run();
            } catch (RuntimeException e) {
                // Every abort must get its chance to run; the first failure is rethrown below.
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    synchronized boolean isStopped() {
        return stopped;
    }

    /**
     * Registers {@code onStop} until the returned registration is closed. If the signal has already
     * stopped, {@code onStop} runs at once, on the calling thread.
     */
    Registration onStop(Runnable onStop) {
        synchronized (this) {
            if (!stopped) {
                callbacks.add(onStop);
                return () -> {
                    synchronized (StopSignal.this) {
                        callbacks.remove(onStop);
                    }
                };
            }
        }
        onStop.run();
        return () -> { };
    }
}

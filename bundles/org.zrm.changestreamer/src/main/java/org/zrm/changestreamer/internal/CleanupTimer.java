package org.zrm.changestreamer.internal;

import java.time.Duration;

/** Schedules the purge cycle; a seam so tests can run cycles by hand (upstream injects setTimeout). */
interface CleanupTimer {

    /** A scheduled task that can be cancelled. */
    interface Scheduled {
        void cancel();
    }

    /** Runs {@code task} once after {@code delay}. */
    Scheduled schedule(Runnable task, Duration delay);
}

package org.zrm.testing.backup;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A {@link Clock} that moves only when a test advances it. Thread-safe. */
public final class ManualClock extends Clock {

    private volatile Instant now;

    /** @param start the initial instant */
    public ManualClock(Instant start) {
        this.now = start;
    }

    /** Moves the clock forward (or back, with a negative duration). */
    public void advance(Duration d) {
        now = now.plus(d);
    }

    /** Moves the clock forward by {@code millis}. */
    public void advanceMillis(long millis) {
        advance(Duration.ofMillis(millis));
    }

    /** Sets the clock. */
    public void set(Instant instant) {
        now = instant;
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}

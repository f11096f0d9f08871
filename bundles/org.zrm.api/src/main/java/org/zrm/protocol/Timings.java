package org.zrm.protocol;

import java.util.Objects;

/**
 * Timestamps (epoch milliseconds, possibly fractional) of one lag-report round trip:
 * {@code {"sendTimeMs":…,"commitTimeMs":…,"receiveTimeMs":…}}.
 *
 * @param sendTimeMs when the source sent the probe
 * @param commitTimeMs when the probe was committed upstream
 * @param receiveTimeMs when the source received it back from the replication stream
 * @param extra unknown members
 */
public record Timings(double sendTimeMs, double commitTimeMs, double receiveTimeMs, Passthrough extra) {

    public Timings {
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("sendTimeMs", "commitTimeMs", "receiveTimeMs");
    }
}

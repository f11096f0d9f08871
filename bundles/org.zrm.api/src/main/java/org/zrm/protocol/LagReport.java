package org.zrm.protocol;

import java.util.Objects;

/**
 * A replication lag report: {@code {"lastTimings":{…},"nextSendTimeMs":…}}. In the change-source
 * protocol {@code lastTimings} is required; in the subscriber protocol's status it is optional.
 *
 * @param lastTimings timings of the last probe; {@code null} = absent
 * @param nextSendTimeMs when the next probe will be sent (epoch ms)
 * @param extra unknown members
 */
public record LagReport(Timings lastTimings, double nextSendTimeMs, Passthrough extra) {

    public LagReport {
        Objects.requireNonNull(extra, "extra").requireNoneOf("lastTimings", "nextSendTimeMs");
    }
}

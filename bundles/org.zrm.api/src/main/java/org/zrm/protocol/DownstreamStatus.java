package org.zrm.protocol;

import java.util.Objects;

/**
 * Body of a change-source {@code status} message: {@code {"ack":…,"lagReport":{…}}} (no tag).
 *
 * @param ack whether to echo the status upstream once everything before it is processed;
 *     {@code null} = absent, which means {@code true}
 * @param lagReport lag report (with required {@code lastTimings}); {@code null} = absent
 * @param extra unknown members
 */
public record DownstreamStatus(Boolean ack, LagReport lagReport, Passthrough extra)
        implements UpstreamStatusBody {

    public DownstreamStatus {
        if (lagReport != null && lagReport.lastTimings() == null) {
            throw new IllegalArgumentException("change-source lagReport needs lastTimings");
        }
        Objects.requireNonNull(extra, "extra").requireNoneOf("ack", "lagReport");
    }

    /** The effective ack flag (absent means {@code true}). */
    public boolean ackRequested() {
        return ack == null || ack;
    }
}

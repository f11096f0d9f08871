package org.zrm.protocol.subscriber;

import java.util.Objects;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;

/**
 * Body of a subscriber {@code status} message: {@code {"tag":"status","lagReport":{…}}}.
 *
 * @param lagReport latest lag report ({@code lastTimings} may be absent); {@code null} = absent
 * @param extra unknown members
 */
public record StreamerStatus(LagReport lagReport, Passthrough extra) {

    /** Wire tag. */
    public static final String TAG = "status";

    public StreamerStatus {
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "lagReport");
    }

    /** A bare {@code {"tag":"status"}}. */
    public StreamerStatus() {
        this(null, Passthrough.NONE);
    }
}

package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * Control signal that replication cannot continue and the replica must be resynced:
 * {@code {"tag":"reset-required","message":…,"errorDetails":{…}}}. Never stored or forwarded.
 *
 * @param message human-readable reason; {@code null} = absent
 * @param errorDetails JSON object published with the replication error event; {@code null} = absent
 * @param extra unknown members
 */
public record ResetRequired(String message, Map<String, Object> errorDetails, Passthrough extra) {

    /** Wire tag. */
    public static final String TAG = "reset-required";

    public ResetRequired {
        errorDetails = JsonValues.freezeObjectOrNull(errorDetails);
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "message", "errorDetails");
    }

    /** The tag, always {@value #TAG}. */
    public String tag() {
        return TAG;
    }
}

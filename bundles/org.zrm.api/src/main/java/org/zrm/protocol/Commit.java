package org.zrm.protocol;

import java.util.Objects;

/**
 * End of a transaction: {@code {"tag":"commit", …}}. The body is source specific; the Postgres
 * source sends {@code flags}, {@code commitLsn}, {@code commitEndLsn} and {@code commitTime},
 * which live in {@link #extra()}. The same body is echoed upstream as an ack.
 *
 * @param extra unknown members (never {@code null})
 */
public record Commit(Passthrough extra) implements Change, UpstreamStatusBody {

    /** Wire tag. */
    public static final String TAG = "commit";

    public Commit {
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

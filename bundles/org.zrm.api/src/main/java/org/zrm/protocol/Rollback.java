package org.zrm.protocol;

import java.util.Objects;

/**
 * Abort of the open transaction: {@code {"tag":"rollback"}}.
 *
 * @param extra unknown members (never {@code null})
 */
public record Rollback(Passthrough extra) implements Change {

    /** Wire tag. */
    public static final String TAG = "rollback";

    public Rollback {
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag");
    }

    /** A rollback without unknown members. */
    public Rollback() {
        this(Passthrough.NONE);
    }

    @Override
    public String tag() {
        return TAG;
    }
}

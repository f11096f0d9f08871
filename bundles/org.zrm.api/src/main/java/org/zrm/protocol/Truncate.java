package org.zrm.protocol;

import java.util.List;
import java.util.Objects;

/**
 * Truncation of tables: {@code {"tag":"truncate","relations":[…]}}. The Postgres source also sends
 * {@code cascade} and {@code restartIdentity} before {@code relations} (kept in {@link #extra()}).
 *
 * @param relations truncated tables
 * @param extra unknown members
 */
public record Truncate(List<Relation> relations, Passthrough extra) implements DataChange {

    /** Wire tag. */
    public static final String TAG = "truncate";

    public Truncate {
        relations = JsonValues.freezeNonNullList(relations);
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "relations");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

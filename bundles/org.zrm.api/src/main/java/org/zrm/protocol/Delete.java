package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * Row delete: {@code {"tag":"delete","relation":{…},"key":{…}}}. The Postgres source also sends
 * {@code old} after {@code key}, kept in {@link #extra()}.
 *
 * @param relation target table
 * @param key the key columns (the full old row for REPLICA IDENTITY FULL)
 * @param extra unknown members
 */
public record Delete(Relation relation, Map<String, Object> key, Passthrough extra) implements DataChange {

    /** Wire tag. */
    public static final String TAG = "delete";

    public Delete {
        Objects.requireNonNull(relation, "relation");
        key = JsonValues.freezeObject(key);
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "relation", "key");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

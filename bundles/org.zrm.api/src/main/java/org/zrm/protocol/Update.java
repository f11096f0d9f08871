package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * Row update: {@code {"tag":"update","relation":{…},"key":…,"new":{…}}}. The Postgres source also
 * sends {@code old} (between {@code key} and {@code new}), kept in {@link #extra()}.
 *
 * @param relation target table
 * @param key the old row key if the key changed or the table has REPLICA IDENTITY FULL, else
 *     {@code null} (the member is required; {@code null} is JSON null)
 * @param newRow the full new row (member {@code new}); TOAST-unchanged columns are absent
 * @param extra unknown members
 */
public record Update(Relation relation, Map<String, Object> key, Map<String, Object> newRow, Passthrough extra)
        implements DataChange {

    /** Wire tag. */
    public static final String TAG = "update";

    public Update {
        Objects.requireNonNull(relation, "relation");
        key = JsonValues.freezeObjectOrNull(key);
        newRow = JsonValues.freezeObject(newRow);
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "relation", "key", "new");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

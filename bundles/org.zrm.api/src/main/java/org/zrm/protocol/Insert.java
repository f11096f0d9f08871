package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * Row insert: {@code {"tag":"insert","relation":{…},"new":{…}}}.
 *
 * @param relation target table
 * @param newRow the inserted row, column → JSON value (member {@code new})
 * @param extra unknown members
 */
public record Insert(Relation relation, Map<String, Object> newRow, Passthrough extra)
        implements DataChange {

    /** Wire tag. */
    public static final String TAG = "insert";

    public Insert {
        Objects.requireNonNull(relation, "relation");
        newRow = JsonValues.freezeObject(newRow);
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "relation", "new");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

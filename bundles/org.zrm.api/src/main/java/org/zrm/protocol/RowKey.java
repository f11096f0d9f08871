package org.zrm.protocol;

import java.util.List;
import java.util.Objects;

/**
 * How rows of a relation are identified: {@code {"columns":[…],"type":…}}.
 *
 * @param columns key column names (never {@code null}, may be empty)
 * @param type replica-identity qualifier; {@code null} = absent
 * @param extra unknown members
 */
public record RowKey(List<String> columns, ReplicaIdentity type, Passthrough extra) {

    public RowKey {
        columns = JsonValues.freezeNonNullList(columns);
        Objects.requireNonNull(extra, "extra").requireNoneOf("columns", "type");
    }

    /** A row key without qualifier or unknown members. */
    public RowKey(List<String> columns) {
        this(columns, null, Passthrough.NONE);
    }
}

package org.zrm.protocol;

import java.util.Objects;

/**
 * Column removal: {@code {"tag":"drop-column","table":{…},"column":"name"}}.
 *
 * @param table the table
 * @param column dropped column name
 * @param extra unknown members
 */
public record DropColumn(Identifier table, String column, Passthrough extra) implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "drop-column";

    public DropColumn {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(column, "column");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "table", "column");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

package org.zrm.protocol;

import java.util.Objects;

/**
 * Column rename and/or type change: {@code {"tag":"update-column","table":{…},"old":{…},"new":{…}}}.
 *
 * @param table the table
 * @param oldColumn previous definition (member {@code old})
 * @param newColumn new definition (member {@code new})
 * @param extra unknown members
 */
public record UpdateColumn(Identifier table, NamedColumn oldColumn, NamedColumn newColumn, Passthrough extra)
        implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "update-column";

    public UpdateColumn {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(oldColumn, "old");
        Objects.requireNonNull(newColumn, "new");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "table", "old", "new");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

package org.zrm.protocol;

import java.util.Objects;

/**
 * Table rename: {@code {"tag":"rename-table","old":{…},"new":{…}}}.
 *
 * @param oldId previous name (member {@code old})
 * @param newId new name (member {@code new})
 * @param extra unknown members
 */
public record RenameTable(Identifier oldId, Identifier newId, Passthrough extra) implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "rename-table";

    public RenameTable {
        Objects.requireNonNull(oldId, "old");
        Objects.requireNonNull(newId, "new");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "old", "new");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

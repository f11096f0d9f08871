package org.zrm.protocol;

import java.util.Objects;

/**
 * Table removal: {@code {"tag":"drop-table","id":{…}}}.
 *
 * @param id dropped table
 * @param extra unknown members
 */
public record DropTable(Identifier id, Passthrough extra) implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "drop-table";

    public DropTable {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "id");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

package org.zrm.protocol;

import java.util.Objects;

/**
 * Table metadata change: {@code {"tag":"update-table-metadata","table":{…},"old":{…},"new":{…}}}.
 * Not forwarded to subscribers below protocol version 5.
 *
 * @param table the table
 * @param oldMetadata previous metadata (member {@code old})
 * @param newMetadata new metadata (member {@code new})
 * @param extra unknown members
 */
public record UpdateTableMetadata(
        Identifier table, TableMetadata oldMetadata, TableMetadata newMetadata, Passthrough extra)
        implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "update-table-metadata";

    public UpdateTableMetadata {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(oldMetadata, "old");
        Objects.requireNonNull(newMetadata, "new");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "table", "old", "new");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

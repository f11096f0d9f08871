package org.zrm.protocol;

import java.util.Objects;

/**
 * Column addition:
 * {@code {"tag":"add-column","table":{…},"column":{"name":…,"spec":{…}},"tableMetadata":{…},"backfill":{…}}}.
 *
 * @param table the table
 * @param column the new column
 * @param tableMetadata current table metadata; {@code null} = absent
 * @param backfill id if the column needs backfilling; {@code null} = absent
 * @param extra unknown members
 */
public record AddColumn(
        Identifier table, NamedColumn column, TableMetadata tableMetadata, BackfillId backfill, Passthrough extra)
        implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "add-column";

    public AddColumn {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(column, "column");
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("tag", "table", "column", "tableMetadata", "backfill");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * Table creation: {@code {"tag":"create-table","spec":{…},"metadata":{…},"backfill":{"col":{…}}}}.
 *
 * @param spec the table
 * @param metadata table metadata; {@code null} = absent
 * @param backfill columns that still need backfilling → their ids; {@code null} = absent
 * @param extra unknown members
 */
public record CreateTable(
        TableSpec spec, TableMetadata metadata, Map<String, BackfillId> backfill, Passthrough extra)
        implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "create-table";

    public CreateTable {
        Objects.requireNonNull(spec, "spec");
        backfill = backfill == null ? null : Records.freezeRecordMap(backfill);
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "spec", "metadata", "backfill");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

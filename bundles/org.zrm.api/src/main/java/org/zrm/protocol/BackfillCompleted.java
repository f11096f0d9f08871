package org.zrm.protocol;

import java.util.List;
import java.util.Objects;

/**
 * The backfill of the given columns finished; they can be published to clients:
 * {@code {"tag":"backfill-completed","relation":{…},"columns":[…],"watermark":…,"status":{…}}}.
 *
 * @param relation table, with a required {@code rowKey}
 * @param columns backfilled columns, excluding row-key columns (may be empty)
 * @param watermark snapshot watermark of the backfill
 * @param status final progress; {@code null} = absent
 * @param extra unknown members
 */
public record BackfillCompleted(
        Relation relation, List<String> columns, String watermark, DownloadStatus status, Passthrough extra)
        implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "backfill-completed";

    public BackfillCompleted {
        Objects.requireNonNull(relation, "relation");
        if (relation.rowKey() == null) {
            throw new IllegalArgumentException("backfill-completed relation needs rowKey");
        }
        columns = JsonValues.freezeNonNullList(columns);
        Objects.requireNonNull(watermark, "watermark");
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("tag", "relation", "columns", "watermark", "status");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

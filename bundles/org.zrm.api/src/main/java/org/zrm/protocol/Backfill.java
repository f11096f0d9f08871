package org.zrm.protocol;

import java.util.List;
import java.util.Objects;

/**
 * A batch of backfilled column values:
 * {@code {"tag":"backfill","relation":{…},"columns":[…],"watermark":…,"rowValues":[[…]],"status":{…}}}.
 *
 * @param relation table, with a required {@code rowKey}
 * @param columns backfilled columns, excluding row-key columns (may be empty)
 * @param watermark snapshot watermark of the data (unrelated to the transaction's watermark)
 * @param rowValues rows; each is the row-key values followed by the column values
 * @param status progress; {@code null} = absent
 * @param extra unknown members
 */
public record Backfill(
        Relation relation,
        List<String> columns,
        String watermark,
        List<List<Object>> rowValues,
        DownloadStatus status,
        Passthrough extra)
        implements DataChange {

    /** Wire tag. */
    public static final String TAG = "backfill";

    public Backfill {
        Objects.requireNonNull(relation, "relation");
        if (relation.rowKey() == null) {
            throw new IllegalArgumentException("backfill relation needs rowKey");
        }
        columns = JsonValues.freezeNonNullList(columns);
        Objects.requireNonNull(watermark, "watermark");
        rowValues = JsonValues.freezeNonNullList(rowValues);
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("tag", "relation", "columns", "watermark", "rowValues", "status");
    }

    @Override
    public String tag() {
        return TAG;
    }
}

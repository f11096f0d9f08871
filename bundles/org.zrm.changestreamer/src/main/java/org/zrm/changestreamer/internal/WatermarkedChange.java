package org.zrm.changestreamer.internal;

import java.util.Objects;

/**
 * A change on its way to subscribers: the commit watermark of its transaction, its tag (the
 * message type for {@code begin}/{@code commit}/{@code rollback}, the change's tag for
 * {@code data}) and its serialised downstream text, shared by every subscriber.
 *
 * @param watermark the transaction's commit watermark
 * @param tag e.g. {@code begin}, {@code insert}, {@code update-table-metadata}, {@code commit}
 * @param json the downstream message text, sent verbatim
 */
record WatermarkedChange(String watermark, String tag, String json) {

    WatermarkedChange {
        Objects.requireNonNull(watermark, "watermark");
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(json, "json");
    }

    boolean isCommit() {
        return "commit".equals(tag);
    }

    boolean endsTransaction() {
        return "commit".equals(tag) || "rollback".equals(tag);
    }
}

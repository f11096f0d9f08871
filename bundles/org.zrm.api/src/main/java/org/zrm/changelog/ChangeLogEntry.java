package org.zrm.changelog;

import java.util.Objects;

/**
 * One row of the change log: one message of a stored transaction.
 *
 * @param watermark the transaction's commit watermark (shared by every row of the transaction)
 * @param pos position within the transaction: 0 for {@code begin}, then 1, 2, … without gaps,
 *     the {@code commit} row last
 * @param tag the change's tag ({@code "begin"}, {@code "commit"}, {@code "insert"},
 *     {@code "create-table"}, …), used to rebuild downstream frames and to recognise schema changes
 * @param change the inner change object as JSON text, byte-identical to the substring of the
 *     forwarded message (never re-serialised, so catch-up frames equal live frames)
 * @param precommit the watermark given with {@code begin} on the commit row, {@code null} on every
 *     other row (and on rows read back for catch-up)
 */
public record ChangeLogEntry(String watermark, long pos, String tag, String change, String precommit) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code watermark}, {@code tag} or {@code change} is
     *     {@code null}
     * @throws IllegalArgumentException if {@code pos} is negative
     */
    public ChangeLogEntry {
        Objects.requireNonNull(watermark, "watermark");
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(change, "change");
        if (pos < 0) {
            throw new IllegalArgumentException("pos must not be negative: " + pos);
        }
    }
}

package org.zrm.changelog;

/**
 * How much the change log holds, for operators ({@code /status}, {@code /metrics},
 * {@code zrm:changelog}).
 *
 * @param rows the number of rows (changes, plus each transaction's begin and commit)
 * @param oldestWatermark the smallest watermark in the log, {@code null} if it is empty
 * @param newestWatermark the largest watermark in the log, {@code null} if it is empty
 * @since 1.3
 */
public record ChangeLogSize(long rows, String oldestWatermark, String newestWatermark) {

    /** @throws IllegalArgumentException if {@code rows} is negative */
    public ChangeLogSize {
        if (rows < 0) {
            throw new IllegalArgumentException("rows must not be negative: " + rows);
        }
    }
}

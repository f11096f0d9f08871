package org.zrm.watermark;

import java.util.Objects;

/**
 * Helpers for watermarks: the opaque, lexicographically sortable strings that name positions in
 * the change stream.
 *
 * <p><b>Ordering.</b> Zero compares watermarks as plain strings everywhere (JavaScript {@code <},
 * which orders by UTF-16 code units, exactly like {@link String#compareTo}). The comparisons here do
 * the same and never decode, so they also work for custom change sources whose watermarks are not
 * LexiVersions, as long as the source keeps commit watermarks strictly increasing in that order.
 *
 * <p><b>Postgres mapping.</b> For the Postgres change source a watermark is
 * {@code LexiVersion(LSN)} ({@link #fromLsn}), the replication stream restarts at
 * {@code major(lastWatermark) + 1} ({@link #restartLsn}), and a minor suffix (backfill versions,
 * {@code "X.3z8d2"}) is ignored when mapping back to an LSN.
 *
 * <p>This class is stateless and thread-safe.
 */
public final class Watermarks {

    private Watermarks() {
    }

    /**
     * Compares two watermarks as Zero does: by {@link String#compareTo}.
     *
     * @param a first watermark
     * @param b second watermark
     * @return negative, zero or positive as {@code a} is before, equal to or after {@code b}
     */
    public static int compare(String a, String b) {
        return Objects.requireNonNull(a, "a").compareTo(Objects.requireNonNull(b, "b"));
    }

    /**
     * @param a first watermark
     * @param b second watermark
     * @return {@code true} if {@code a} is strictly after {@code b}
     */
    public static boolean isAfter(String a, String b) {
        return compare(a, b) > 0;
    }

    /**
     * @param a first watermark
     * @param b second watermark
     * @return the earlier of the two
     */
    public static String min(String a, String b) {
        return compare(a, b) <= 0 ? a : b;
    }

    /**
     * @param a first watermark
     * @param b second watermark
     * @return the later of the two
     */
    public static String max(String a, String b) {
        return compare(a, b) >= 0 ? a : b;
    }

    /**
     * Converts an LSN to its watermark, {@code lexi(lsn)} (Zero's {@code toStateVersionString}).
     *
     * @param lsn the position
     * @return the major-only watermark
     */
    public static String fromLsn(Lsn lsn) {
        return lsn.toWatermark();
    }

    /**
     * Converts LSN text ({@code "H/L"}) to its watermark.
     *
     * @param lsnText the LSN in either padded or unpadded form
     * @return the major-only watermark
     * @throws IllegalArgumentException if {@code lsnText} is malformed
     */
    public static String fromLsn(String lsnText) {
        return Lsn.parse(lsnText).toWatermark();
    }

    /**
     * Converts a watermark back to the LSN of its major component (Zero's
     * {@code fromStateVersionString}); any minor part is ignored.
     *
     * @param watermark the watermark
     * @return the LSN
     * @throws IllegalArgumentException if {@code watermark} is not a state version within the LSN
     *     range
     */
    public static Lsn toLsn(String watermark) {
        return Lsn.fromWatermark(watermark);
    }

    /**
     * The position at which to restart logical replication after {@code lastWatermark} was stored:
     * {@code major(lastWatermark) + 1}. The slot's confirmed position is the start of the last acked
     * commit record, and Postgres re-sends every transaction whose commit record starts at or after
     * the requested position, so the {@code + 1} is what skips the transaction already stored.
     *
     * @param lastWatermark the last durably stored commit watermark
     * @return the LSN to pass to {@code START_REPLICATION}
     * @throws IllegalArgumentException if {@code lastWatermark} is not a state version within the
     *     LSN range, or names the maximum LSN (there is nothing after it)
     */
    public static Lsn restartLsn(String lastWatermark) {
        Lsn last = Lsn.fromWatermark(lastWatermark);
        if (last.equals(Lsn.MAX)) {
            throw new IllegalArgumentException("No LSN follows watermark \"" + lastWatermark + "\"");
        }
        return last.next();
    }
}

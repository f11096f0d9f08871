package org.zrm.protocol.json.internal;

/**
 * Remembers the JavaScript text of the last non-integral double one codec formatted.
 *
 * <p>Why: the exact shortest-digits search in {@link JsNumbers} costs microseconds per value, and
 * bulk changes often repeat the same fractional value row after row (a {@code DEFAULT now()}
 * timestamp is the same for every row of a transaction; it reaches the JSON as epoch milliseconds
 * with a fraction). One entry catches that case at the cost of one comparison.
 *
 * <p>Thread-safe without locking: the entry is one immutable object behind a volatile field, so a
 * reader sees either the old or the new pair, never a mix. Bounded: one entry.
 */
public final class NumberMemo {

    private record Entry(long bits, String text) {}

    private volatile Entry last = new Entry(Double.doubleToRawLongBits(Double.NaN), "null");

    /** Appends the JSON text of {@code v}, as {@link JsNumbers#appendJson}. */
    void appendJson(StringBuilder out, double v) {
        if (v == Math.rint(v) || Double.isNaN(v) || Double.isInfinite(v)) {
            JsNumbers.appendJson(out, v); // integral (fast already) or not finite
            return;
        }
        long bits = Double.doubleToRawLongBits(v);
        Entry e = last;
        if (e.bits() != bits) {
            StringBuilder sb = new StringBuilder(24);
            JsNumbers.appendJson(sb, v);
            e = new Entry(bits, sb.toString());
            last = e;
        }
        out.append(e.text());
    }
}

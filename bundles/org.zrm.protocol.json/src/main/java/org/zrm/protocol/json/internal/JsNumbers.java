package org.zrm.protocol.json.internal;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Formats doubles exactly like ECMAScript {@code Number::toString(x, 10)} (ECMA-262 §6.1.6.1.20).
 *
 * <p>The algorithm needs the <em>shortest</em> decimal significand that rounds back to {@code x},
 * choosing the one closest to {@code x} among equally short candidates. Java 17's
 * {@link Double#toString(double)} sometimes emits more digits than necessary (JDK-4511638, fixed
 * only in JDK 19), so it cannot be used. Instead we search precisions 1..17: for each precision
 * the only candidates are the two neighbours of the exact binary value at that precision (rounded
 * down and up); a candidate qualifies if it converts back to {@code x}. BigDecimal conversions are
 * exact and correctly rounded, which makes this slow-ish but simple and provably right; integral
 * values, the common case, take a fast path, and so do values with a few fraction digits
 * ({@link #appendFewFractionDigits}).
 */
public final class JsNumbers {

    private static final double TWO_POW_53 = 9007199254740992d;

    private JsNumbers() {}

    /** Appends the JavaScript rendering of {@code x}; non-finite values become {@code null} like JSON.stringify. */
    public static void appendJson(StringBuilder out, double x) {
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            out.append("null");
            return;
        }
        append(out, x);
    }

    /** JavaScript {@code String(x)} for a finite double. */
    public static String toJsString(double x) {
        if (Double.isNaN(x)) {
            return "NaN";
        } else if (Double.isInfinite(x)) {
            return x > 0 ? "Infinity" : "-Infinity";
        }
        StringBuilder sb = new StringBuilder(24);
        append(sb, x);
        return sb.toString();
    }

    private static void append(StringBuilder out, double x) {
        append(out, x, true);
    }

    /** {@link #toJsString} by the exact search alone, without {@link #appendFewFractionDigits}: for tests. */
    static String exactJsString(double x) {
        StringBuilder sb = new StringBuilder(24);
        append(sb, x, false);
        return sb.toString();
    }

    private static void append(StringBuilder out, double x, boolean fast) {
        if (x == 0) {
            out.append('0'); // covers -0, which JavaScript prints as "0"
            return;
        }
        if (x == Math.rint(x) && Math.abs(x) < TWO_POW_53) {
            out.append((long) x); // integral and exact: the digits are the integer itself
            return;
        }
        if (x < 0) {
            out.append('-');
            x = -x;
        }
        if (fast && appendFewFractionDigits(out, x)) {
            return;
        }
        BigDecimal shortest = shortest(x);
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int n = k - shortest.scale(); // x = 0.digits × 10^n
        layout(out, digits, k, n);
    }

    /** 10^0 … 10^22, each exact as a double. */
    private static final double[] POW10 = new double[23];

    static {
        POW10[0] = 1;
        for (int i = 1; i < POW10.length; i++) {
            POW10[i] = POW10[i - 1] * 10;
        }
    }

    /**
     * The common case, in plain double arithmetic: a value whose shortest form has a few fraction
     * digits (a timestamp in milliseconds with its microseconds, a price). The exact search costs
     * microseconds per value, and a live row with a {@code timestamptz} paid it on the stream's
     * one thread.
     *
     * <p>For each scale {@code s} from 1 the candidates are the integers {@code c} near
     * {@code x·10^s}; {@code c/10^s} converts back to {@code x} exactly when the correctly rounded
     * quotient {@code (double) c / 10^s} is {@code x}, since {@code c} and {@code 10^s} are exact
     * doubles. While {@code ulp(x)·10^s < 1}, the decimals at scale {@code s} that convert back to
     * {@code x} lie in an interval shorter than one step, so there is at most one, and it is within
     * one of the computed {@code x·10^s} (whose rounding error is below half a step): checking
     * three candidates is exhaustive. The first scale with one is therefore the fewest digits, and
     * being the only one it is also the closest (Number::toString's choice). No integer converts
     * back to a non-integral {@code x} below 2^53 (the integer is itself a different double), so
     * scale 0 is never the answer. Past that window, or past 2^53, the caller runs the exact search.
     *
     * @param x finite, positive and not an integer
     * @return whether it appended {@code x}; if not, it appended nothing
     */
    private static boolean appendFewFractionDigits(StringBuilder out, double x) {
        double ulp = Math.ulp(x);
        for (int s = 1; s < POW10.length && ulp * POW10[s] < 1; s++) {
            double p = POW10[s];
            double scaled = x * p;
            if (scaled >= TWO_POW_53 - 2) {
                return false;
            }
            long m = Math.round(scaled);
            for (long c = Math.max(1, m - 1); c <= m + 1; c++) {
                if ((double) c / p == x) {
                    String digits = Long.toString(c);
                    layout(out, digits, digits.length(), digits.length() - s);
                    return true;
                }
            }
        }
        return false;
    }

    /** The shortest decimal that converts back to {@code x} (x finite, positive), closest on ties. */
    private static BigDecimal shortest(double x) {
        BigDecimal exact = new BigDecimal(x);
        for (int p = 1; p <= 17; p++) {
            BigDecimal down = exact.round(new MathContext(p, RoundingMode.FLOOR));
            BigDecimal up = exact.round(new MathContext(p, RoundingMode.CEILING));
            boolean downOk = down.doubleValue() == x;
            boolean upOk = up.doubleValue() == x;
            if (downOk && upOk) {
                if (down.compareTo(up) == 0) {
                    return down.stripTrailingZeros();
                }
                int cmp = exact.subtract(down).compareTo(up.subtract(exact));
                if (cmp < 0) {
                    return down.stripTrailingZeros();
                } else if (cmp > 0) {
                    return up.stripTrailingZeros();
                }
                // exactly halfway: ECMAScript says pick the even significand
                return (down.unscaledValue().testBit(0) ? up : down).stripTrailingZeros();
            } else if (downOk) {
                return down.stripTrailingZeros();
            } else if (upOk) {
                return up.stripTrailingZeros();
            }
        }
        // 17 significant digits always round-trip; unreachable for finite doubles.
        throw new AssertionError("no round-tripping representation for " + x);
    }

    /** Lays out digits {@code s} (length k) with decimal exponent n per Number::toString steps 6–10. */
    private static void layout(StringBuilder out, String s, int k, int n) {
        if (k <= n && n <= 21) {
            out.append(s);
            for (int i = 0; i < n - k; i++) {
                out.append('0');
            }
        } else if (0 < n && n <= 21) {
            out.append(s, 0, n).append('.').append(s, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.");
            for (int i = 0; i < -n; i++) {
                out.append('0');
            }
            out.append(s);
        } else {
            int e = n - 1;
            out.append(s.charAt(0));
            if (k > 1) {
                out.append('.').append(s, 1, k);
            }
            out.append('e').append(e < 0 ? '-' : '+').append(Math.abs(e));
        }
    }
}

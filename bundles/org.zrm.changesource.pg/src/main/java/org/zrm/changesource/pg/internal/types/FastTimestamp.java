package org.zrm.changesource.pg.internal.types;

import java.time.DateTimeException;
import java.time.LocalDate;

/**
 * Fast path of {@link PgTextValues#timestampToFpMillis} for the form Postgres emits for almost
 * every value: {@code YYYY-MM-DD HH:MM:SS[.f…][±HH[:MM[:SS]]]} with a four-digit year and no
 * {@code BC}. The regex and {@code BigInteger} path costs most of the pump's CPU on single-row
 * transactions, so this one scans the text once with long arithmetic.
 *
 * <p>It must give bit-identical results to the general path, so it performs the same two roundings:
 * the exact integer milliseconds (the quotient of the nanoseconds truncated toward zero, as
 * {@code BigInteger.divideAndRemainder} does) converted to double, plus the sub-millisecond
 * remainder times 1e-6; then the offset is applied in double. Anything else — other year widths,
 * BC, invalid calendar dates, malformed text — is declined (NaN) and goes to the general path,
 * which also produces the error for bad input.
 */
final class FastTimestamp {

    private static final long NANOS_PER_MILLI = 1_000_000L;

    private FastTimestamp() {}

    /** @return the floating milliseconds since the epoch, or NaN if this form is not handled here */
    static double parse(String s) {
        int n = s.length();
        // Fixed part: "YYYY-MM-DD HH:MM:SS" is 19 characters.
        if (n < 19 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != ' ' || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return Double.NaN;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 2);
        int day = digits(s, 8, 2);
        int hour = digits(s, 11, 2);
        int minute = digits(s, 14, 2);
        int second = digits(s, 17, 2);
        if ((year | month | day | hour | minute | second) < 0) {
            return Double.NaN;
        }
        int i = 19;
        long fractionNanos = 0;
        if (i < n && s.charAt(i) == '.') {
            int start = ++i;
            long scale = 100_000_000L;
            while (i < n && isDigit(s.charAt(i))) {
                // The general path keeps the first nine digits (nanoseconds) and drops the rest.
                if (scale > 0) {
                    fractionNanos += (s.charAt(i) - '0') * scale;
                    scale /= 10;
                }
                i++;
            }
            if (i == start) {
                return Double.NaN;
            }
        }
        long offsetMillis = 0;
        boolean plus = false;
        boolean hasOffset = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            plus = s.charAt(i) == '+';
            hasOffset = true;
            i++;
            int start = i;
            int oh = 0;
            while (i < n && i - start < 2 && isDigit(s.charAt(i))) {
                oh = oh * 10 + (s.charAt(i++) - '0');
            }
            if (i == start) {
                return Double.NaN;
            }
            long offsetSeconds = oh * 3600L;
            if (i < n && s.charAt(i) == ':') {
                int om = digits(s, i + 1, 2);
                if (om < 0) {
                    return Double.NaN;
                }
                offsetSeconds += om * 60L;
                i += 3;
                if (i < n && s.charAt(i) == ':') {
                    int os = digits(s, i + 1, 2);
                    if (os < 0) {
                        return Double.NaN;
                    }
                    offsetSeconds += os;
                    i += 3;
                }
            }
            offsetMillis = offsetSeconds * 1000;
        }
        if (i != n) {
            return Double.NaN; // " BC", a third offset digit, trailing text: the general path decides
        }
        long epochDay;
        try {
            epochDay = LocalDate.of(year, month, day).toEpochDay();
        } catch (DateTimeException e) {
            return Double.NaN; // the general path reports the invalid date
        }
        long seconds = epochDay * 86_400L + hour * 3600L + minute * 60L + second;
        // nanos = seconds * 1e9 + fractionNanos overflows a long for far years, so split it:
        // nanos = millis * 1e6 + rem with 0 <= rem < 1e6 (floor division), then move to truncation
        // toward zero when the total is negative, as the general path's BigInteger does.
        long millis = seconds * 1000 + fractionNanos / NANOS_PER_MILLI;
        long rem = fractionNanos % NANOS_PER_MILLI;
        if (millis < 0 && rem != 0) {
            millis += 1;
            rem -= NANOS_PER_MILLI;
        }
        double ret = (double) millis + (double) rem * 1e-6;
        if (!hasOffset) {
            return ret;
        }
        return plus ? ret - offsetMillis : ret + offsetMillis;
    }

    /** @return the value of {@code len} ASCII digits at {@code from}, or -1 if any is missing */
    private static int digits(String s, int from, int len) {
        if (from + len > s.length()) {
            return -1;
        }
        int v = 0;
        for (int i = from; i < from + len; i++) {
            char c = s.charAt(i);
            if (!isDigit(c)) {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}

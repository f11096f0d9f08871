package org.zrm.changesource.pg.internal.types;

import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.zrm.protocol.JsonValues;

/**
 * The scalar text-format converters of spec §7.1/§7.3. Every algorithm reproduces the double
 * arithmetic of zero-cache's parsers so the resulting numbers are bit-identical; deliberate
 * deviations are marked DECISION.
 */
public final class PgTextValues {

    static final long MS_PER_DAY = 86_400_000L;

    // DECISION (QUIRK "timestamp offsets with seconds"): zero-cache only accepts ±HH[:MM] and fails
    // the whole stream on historical LMT offsets such as +00:19:32, which pgjdbc makes likely because
    // it sets the session TimeZone to the JVM's zone. We also accept a seconds part and subtract it.
    private static final Pattern TIMESTAMP = Pattern.compile(
            "^(\\d+)-(\\d{2})-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d+))?([+-]\\d{1,2}(?::\\d{2}(?::\\d{2})?)?)?( BC)?$");

    // Same seconds-offset extension as TIMESTAMP for timetz.
    private static final Pattern TIME = Pattern.compile(
            "^(\\d{1,2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,6}))?(?:([+-])(\\d{1,2})(?::(\\d{2})(?::(\\d{2}))?)?)?$");

    private static final Pattern DATE = Pattern.compile("^(\\d+)-(\\d{2})-(\\d{2})( BC)?$");

    private PgTextValues() {}

    /** bool: {@code t} → true, anything else → false (as upstream). */
    public static Boolean bool(String text) {
        return "t".equals(text);
    }

    /** int2/int4/oid: a JavaScript number, i.e. an exact integer here. */
    public static Long integer(String text) {
        try {
            return Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new PgValueFormatException("Invalid integer: " + text, e);
        }
    }

    /** int8: exact; {@link Long} within ±(2^53−1), {@link BigInteger} beyond. */
    public static Object int8(String text) {
        long v;
        try {
            v = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new PgValueFormatException("Invalid int8: " + text, e);
        }
        return exactInteger(v);
    }

    static Object exactInteger(long v) {
        return v >= JsonValues.MIN_SAFE_INTEGER && v <= JsonValues.MAX_SAFE_INTEGER ? (Object) v : BigInteger.valueOf(v);
    }

    /**
     * float4/float8/numeric: {@code Number(text)}, a correctly rounded double (numeric is lossy
     * beyond ~15–17 significant digits, like upstream). NaN/±Infinity stay non-finite doubles;
     * the protocol writer turns them into JSON {@code null} (QUIRK "NaN/Infinity → JSON null":
     * reproduced, the replica then stores NULL for streamed values).
     */
    public static Double number(String text) {
        String t = text.strip();
        switch (t) {
            case "NaN":
                return Double.NaN;
            case "Infinity":
                return Double.POSITIVE_INFINITY;
            case "-Infinity":
                return Double.NEGATIVE_INFINITY;
            default:
                try {
                    return Double.parseDouble(t);
                } catch (NumberFormatException e) {
                    throw new PgValueFormatException("Invalid number: " + text, e);
                }
        }
    }

    /** bytea in hex output ({@code \x0a1b…}) → bytes. */
    public static byte[] bytea(String text) {
        if (!text.startsWith("\\x")) {
            throw new PgValueFormatException("Unsupported bytea format (bytea_output must be hex): "
                    + (text.length() > 20 ? text.substring(0, 20) + "…" : text));
        }
        int n = (text.length() - 2) / 2;
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            int hi = Character.digit(text.charAt(2 + 2 * i), 16);
            int lo = Character.digit(text.charAt(3 + 2 * i), 16);
            if (hi < 0 || lo < 0) {
                throw new PgValueFormatException("Invalid bytea hex digit in " + text);
            }
            out[i] = (byte) (hi << 4 | lo);
        }
        return out;
    }

    /**
     * The JSON form of a Node {@code Buffer}: {@code {"type":"Buffer","data":[…]}}.
     *
     * <p>DECISION (QUIRK "bytea streamed as Buffer"): reproduced. zero-cache replicators apply
     * streamed bytea as this JSON text, so a different form would make a ZRM stream diverge from
     * what zero-cache writes into a replica. Initial sync stores a BLOB, as upstream.
     */
    public static Map<String, Object> bufferJson(byte[] bytes) {
        List<Object> data = new ArrayList<>(bytes.length);
        for (byte b : bytes) {
            data.add((long) (b & 0xff));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "Buffer");
        m.put("data", JsonValues.freezeList(data));
        return JsonValues.freezeObject(m);
    }

    /**
     * timestamp/timestamptz → floating milliseconds since the epoch with the microsecond fraction
     * (spec §7.3), {@code ±infinity} → ±Infinity.
     */
    public static double timestampToFpMillis(String text) {
        if ("infinity".equals(text)) {
            return Double.POSITIVE_INFINITY;
        }
        if ("-infinity".equals(text)) {
            return Double.NEGATIVE_INFINITY;
        }
        double fast = FastTimestamp.parse(text);
        return fast == fast ? fast : timestampToFpMillisGeneral(text);
    }

    /**
     * The general (regex and {@code BigInteger}) form of {@link #timestampToFpMillis}: every text
     * the fast path declines (BC, years other than four digits, invalid dates, malformed text) ends
     * here, and the property test checks the fast path against it.
     */
    static double timestampToFpMillisGeneral(String text) {
        Matcher m = TIMESTAMP.matcher(text);
        if (!m.matches()) {
            throw new PgValueFormatException("Error parsing " + text);
        }
        long year = Long.parseLong(m.group(1));
        if (m.group(9) != null) {
            year = -(year - 1); // 1 BC is ISO year 0
        }
        long epochDay;
        try {
            epochDay = LocalDate.of(Math.toIntExact(year), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)))
                    .toEpochDay();
        } catch (DateTimeException | ArithmeticException e) {
            throw new PgValueFormatException("Error parsing " + text, e);
        }
        long seconds = epochDay * 86_400L + Long.parseLong(m.group(4)) * 3600 + Long.parseLong(m.group(5)) * 60
                + Long.parseLong(m.group(6));
        long fractionNanos = 0;
        if (m.group(7) != null) {
            String f = m.group(7);
            f = f.length() > 9 ? f.substring(0, 9) : f + "0".repeat(9 - f.length());
            fractionNanos = Long.parseLong(f);
        }
        BigInteger fullNanos = BigInteger.valueOf(seconds).multiply(BigInteger.valueOf(1_000_000_000L))
                .add(BigInteger.valueOf(fractionNanos));
        BigInteger[] qr = fullNanos.divideAndRemainder(BigInteger.valueOf(1_000_000L));
        // Same two roundings as upstream: exact integer millis, plus the sub-milli part scaled by 1e-6.
        double ret = qr[0].doubleValue() + qr[1].doubleValue() * 1e-6;
        String tz = m.group(8);
        if (tz != null) {
            String[] parts = tz.split(":");
            long offsetSeconds = Math.abs(Long.parseLong(parts[0])) * 3600
                    + (parts.length > 1 ? Long.parseLong(parts[1]) * 60 : 0)
                    + (parts.length > 2 ? Long.parseLong(parts[2]) : 0);
            long offsetMillis = offsetSeconds * 1000;
            return tz.startsWith("+") ? ret - offsetMillis : ret + offsetMillis;
        }
        return ret;
    }

    /**
     * time/timetz → milliseconds since midnight (UTC for timetz); only the first three fractional
     * digits count (truncation); 24:00:00 allowed; normalised into [0, 24h) only when outside
     * [0, 24h] (so {@code 24:00:00} stays 86400000, as upstream).
     */
    public static long timeToMillis(String text) {
        Matcher m = TIME.matcher(text);
        if (!m.matches()) {
            throw new PgValueFormatException("Invalid time format: \"" + text + "\". Expected HH:MM:SS[.mmm][+|-HH[:MM]]");
        }
        int hours = Integer.parseInt(m.group(1));
        int minutes = Integer.parseInt(m.group(2));
        int seconds = Integer.parseInt(m.group(3));
        int millis = 0;
        if (m.group(4) != null) {
            String us = (m.group(4) + "000000").substring(0, 6);
            millis = Integer.parseInt(us.substring(0, 3));
        }
        if (hours > 24) {
            throw new PgValueFormatException("Invalid hours: " + hours + ". Must be between 0 and 24 (24 means end of day)");
        }
        if (minutes >= 60) {
            throw new PgValueFormatException("Invalid minutes: " + minutes + ". Must be between 0 and 59");
        }
        if (seconds >= 60) {
            throw new PgValueFormatException("Invalid seconds: " + seconds + ". Must be between 0 and 59");
        }
        if (hours == 24 && (minutes != 0 || seconds != 0 || millis != 0)) {
            throw new PgValueFormatException("Invalid time: when hours is 24, minutes, seconds, and milliseconds must be 0");
        }
        long total = hours * 3_600_000L + minutes * 60_000L + seconds * 1000L + millis;
        if (m.group(5) != null) {
            int sign = "+".equals(m.group(5)) ? 1 : -1;
            long off = Long.parseLong(m.group(6)) * 3_600_000L
                    + (m.group(7) != null ? Long.parseLong(m.group(7)) * 60_000L : 0)
                    + (m.group(8) != null ? Long.parseLong(m.group(8)) * 1000L : 0);
            total -= sign * off;
        }
        if (total > MS_PER_DAY || total < 0) {
            return ((total % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY;
        }
        return total;
    }

    /**
     * date → milliseconds at UTC midnight; {@code ±infinity} → ±Infinity.
     *
     * <p>DECISION (QUIRK "BC/large-year dates"): upstream's {@code new Date(text)} yields NaN (→ JSON
     * null) for BC and 5-digit years, and {@code Date.UTC} maps years 0–99 to 1900–1999. We compute
     * the exact proleptic-Gregorian value for every date, which is what the binary COPY decoder of
     * initial sync produces, so streamed and copied dates agree. Results for years 100–9999 are
     * identical to upstream.
     */
    public static double dateToUtcMidnight(String text) {
        if ("infinity".equals(text)) {
            return Double.POSITIVE_INFINITY;
        }
        if ("-infinity".equals(text)) {
            return Double.NEGATIVE_INFINITY;
        }
        Matcher m = DATE.matcher(text);
        if (!m.matches()) {
            throw new PgValueFormatException("Invalid date: " + text);
        }
        long year = Long.parseLong(m.group(1));
        if (m.group(4) != null) {
            year = -(year - 1);
        }
        try {
            return (double) (LocalDate.of(Math.toIntExact(year), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)))
                    .toEpochDay() * MS_PER_DAY);
        } catch (DateTimeException | ArithmeticException e) {
            throw new PgValueFormatException("Invalid date: " + text, e);
        }
    }

    /** A number that is integral and within ±2^53 as {@link Long}, else as {@link Double}. */
    static Object jsNumber(double d) {
        if (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) <= JsonValues.MAX_SAFE_INTEGER) {
            return (long) d;
        }
        return d;
    }
}

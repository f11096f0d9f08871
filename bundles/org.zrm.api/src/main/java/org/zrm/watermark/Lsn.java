package org.zrm.watermark;

import java.math.BigInteger;
import java.util.Objects;

/**
 * A Postgres log sequence number: an unsigned 64-bit WAL position.
 *
 * <p>Postgres writes an LSN as two hexadecimal 32-bit halves, {@code "H/L"}. Two spellings occur
 * in practice and both {@linkplain #parse(String) parse} to the same value:
 * <ul>
 *   <li>unpadded upper-case, {@code "16/B374D848"}: what Zero's {@code fromBigInt} and
 *       {@code pg_lsn::text} produce, and what {@code START_REPLICATION} is given
 *       ({@link #toString()});</li>
 *   <li>zero-padded upper-case, {@code "00000016/B374D848"}: how LSNs parsed from pgoutput appear in
 *       {@code begin}/{@code commit} payloads ({@link #toPaddedString()}).</li>
 * </ul>
 *
 * <p>Java has no unsigned {@code long}; this type stores the raw bits and always compares them
 * unsigned, so positions above 2<sup>63</sup> still order correctly. Use {@link #toWatermark()}
 * and {@link Watermarks} to convert to Zero's watermark strings.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class Lsn implements Comparable<Lsn> {

    /** The LSN {@code 0/0}. */
    public static final Lsn ZERO = new Lsn(0L);

    /** The largest LSN, {@code FFFFFFFF/FFFFFFFF}. */
    public static final Lsn MAX = new Lsn(-1L);

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    private final long bits;

    private Lsn(long bits) {
        this.bits = bits;
    }

    /**
     * Wraps an unsigned 64-bit position.
     *
     * @param unsignedValue the position; negative {@code long}s stand for values ≥ 2<sup>63</sup>
     * @return the LSN
     */
    public static Lsn of(long unsignedValue) {
        return new Lsn(unsignedValue);
    }

    /**
     * Converts a non-negative integer below 2<sup>64</sup>.
     *
     * @param value the position
     * @return the LSN
     * @throws IllegalArgumentException if {@code value} is negative or ≥ 2<sup>64</sup>
     */
    public static Lsn of(BigInteger value) {
        if (value.signum() < 0 || value.compareTo(TWO_64) >= 0) {
            throw new IllegalArgumentException("LSN out of the unsigned 64-bit range: " + value);
        }
        return new Lsn(value.longValue());
    }

    /**
     * Parses {@code "H/L"}, where each half is 1 to 8 hexadecimal digits in either case.
     *
     * <p>Unlike upstream, which accepts anything JavaScript's {@code BigInt("0x…")} accepts, this
     * rejects signs, blanks, non-ASCII digits and halves wider than 32 bits, because such text
     * never comes from Postgres and would indicate a corrupted or foreign value.
     *
     * @param text the LSN text
     * @return the LSN
     * @throws IllegalArgumentException naming {@code text} if it is malformed
     * @throws NullPointerException if {@code text} is {@code null}
     */
    public static Lsn parse(String text) {
        Objects.requireNonNull(text, "text");
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw malformed(text, "missing '/'");
        }
        long high = parseHalf(text, 0, slash);
        long low = parseHalf(text, slash + 1, text.length());
        return new Lsn((high << 32) | low);
    }

    /**
     * Converts a watermark (a {@link StateVersion} string) to the LSN it names. The minor part, if
     * any, is ignored, as in Zero's {@code fromStateVersionString}: {@code "X.3z8d2"} maps to the
     * same LSN as {@code "X"}.
     *
     * @param watermark the watermark
     * @return the LSN of its major component
     * @throws IllegalArgumentException if {@code watermark} is not a valid state version or its
     *     major component does not fit into 64 bits
     */
    public static Lsn fromWatermark(String watermark) {
        BigInteger major = StateVersion.majorOf(watermark);
        if (major.compareTo(TWO_64) >= 0) {
            throw new IllegalArgumentException("Watermark \"" + watermark + "\" is beyond the LSN range");
        }
        return new Lsn(major.longValue());
    }

    /** @return the raw 64 bits; interpret with {@link Long#toUnsignedString(long)} or {@link Long#compareUnsigned} */
    public long asLong() {
        return bits;
    }

    /** @return the position as a non-negative {@link BigInteger} */
    public BigInteger toBigInteger() {
        BigInteger v = BigInteger.valueOf(bits);
        return bits >= 0 ? v : v.add(TWO_64);
    }

    /** @return the upper 32 bits as a non-negative value */
    public long high() {
        return bits >>> 32;
    }

    /** @return the lower 32 bits as a non-negative value */
    public long low() {
        return bits & 0xFFFF_FFFFL;
    }

    /**
     * Returns the next position. The change source restarts replication at
     * {@code major(lastWatermark) + 1}: Postgres re-sends every transaction whose commit record
     * starts at or after the requested position, so starting <em>at</em> the last stored commit
     * would replay it.
     *
     * @return this LSN plus one
     * @throws ArithmeticException if this is {@link #MAX}
     */
    public Lsn next() {
        if (bits == -1L) {
            throw new ArithmeticException("LSN overflow: no position after " + this);
        }
        return new Lsn(bits + 1);
    }

    /** @return Zero's watermark for this position, {@code LexiVersion.encode(unsigned value)} */
    public String toWatermark() {
        return LexiVersion.encode(bits);
    }

    /** @return zero-padded upper-case text, {@code "00000016/B374D848"} (pgoutput style) */
    public String toPaddedString() {
        return String.format("%08X/%08X", high(), low());
    }

    /** @return unpadded upper-case text, {@code "16/B374D848"} (Zero's {@code fromBigInt} and {@code pg_lsn} style) */
    @Override
    public String toString() {
        return Long.toHexString(high()).toUpperCase(java.util.Locale.ROOT) + "/"
                + Long.toHexString(low()).toUpperCase(java.util.Locale.ROOT);
    }

    /** Compares positions as unsigned 64-bit numbers. */
    @Override
    public int compareTo(Lsn other) {
        return Long.compareUnsigned(bits, other.bits);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Lsn && ((Lsn) o).bits == bits;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(bits);
    }

    private static long parseHalf(String text, int from, int to) {
        int len = to - from;
        if (len < 1 || len > 8) {
            throw malformed(text, "each half must have 1 to 8 hex digits");
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            int d;
            if (c >= '0' && c <= '9') {
                d = c - '0';
            } else if (c >= 'a' && c <= 'f') {
                d = c - 'a' + 10;
            } else if (c >= 'A' && c <= 'F') {
                d = c - 'A' + 10;
            } else {
                throw malformed(text, "invalid hex digit '" + c + "' at index " + i);
            }
            v = (v << 4) | d;
        }
        return v;
    }

    private static IllegalArgumentException malformed(String text, String why) {
        return new IllegalArgumentException("Malformed LSN \"" + text + "\": " + why);
    }
}

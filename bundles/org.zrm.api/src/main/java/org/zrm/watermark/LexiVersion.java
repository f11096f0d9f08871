package org.zrm.watermark;

import java.math.BigInteger;

/**
 * Zero's lexicographically sortable encoding of non-negative integers ("LexiVersion").
 *
 * <p>A value is written in lower-case base 36 and prefixed with one base-36 character that holds
 * the number of base-36 digits minus one. Because a longer number always gets a larger prefix, and
 * equally long numbers compare digit by digit, plain string comparison ({@link String#compareTo})
 * orders encodings exactly as the numbers are ordered. Zero stores every watermark and replica
 * state version in this form and compares them as strings everywhere (in memory and in SQL), so the
 * encoding must be bit-for-bit identical to upstream's {@code versionToLexi}.
 *
 * <p>Examples: {@code 0 → "00"}, {@code 10 → "0a"}, {@code 35 → "0z"}, {@code 36 → "110"},
 * {@code 97500059720 → "718sh0nk8"}, {@code 2^64−1 → "c3w5e11264sgsf"}.
 *
 * <p>The single prefix character limits the encoding to 36 digits, i.e. values up to
 * {@link #MAX_VALUE} = 36<sup>36</sup>−1 (about 185 bits). The {@code long} methods treat their
 * argument as an <em>unsigned</em> 64-bit number, which covers every Postgres LSN.
 *
 * <p>Decoding is stricter than upstream, deliberately: upstream's decoder tolerates upper-case and
 * leading-zero digits, which would produce strings that compare out of numeric order. Such strings
 * are never produced by any Zero encoder, so rejecting them only turns silent mis-ordering into a
 * clear error. This class is stateless and thread-safe.
 */
public final class LexiVersion {

    /** Maximum number of base-36 digits after the length prefix. */
    public static final int MAX_DIGITS = 36;

    /** The largest encodable value, 36<sup>36</sup>−1, encoded as {@code "z"} repeated 37 times. */
    public static final BigInteger MAX_VALUE = BigInteger.valueOf(36).pow(MAX_DIGITS).subtract(BigInteger.ONE);

    private static final int RADIX = 36;

    private LexiVersion() {
    }

    /**
     * Encodes an unsigned 64-bit value.
     *
     * @param unsignedValue the value, interpreted as unsigned (so {@code -1L} is 2<sup>64</sup>−1)
     * @return the LexiVersion string, never {@code null}
     */
    public static String encode(long unsignedValue) {
        return withPrefix(Long.toUnsignedString(unsignedValue, RADIX));
    }

    /**
     * Encodes an arbitrary non-negative value up to {@link #MAX_VALUE}.
     *
     * @param value the value to encode
     * @return the LexiVersion string
     * @throws IllegalArgumentException if {@code value} is negative or larger than {@link #MAX_VALUE}
     * @throws NullPointerException if {@code value} is {@code null}
     */
    public static String encode(BigInteger value) {
        if (value.signum() < 0) {
            throw new IllegalArgumentException("Negative versions are not supported: " + value);
        }
        if (value.compareTo(MAX_VALUE) > 0) {
            throw new IllegalArgumentException("Value is too large to be encoded as a LexiVersion: " + value);
        }
        return withPrefix(value.toString(RADIX));
    }

    /**
     * Decodes a LexiVersion of any supported size.
     *
     * @param lexi the encoded string
     * @return the decoded value, never negative
     * @throws IllegalArgumentException if {@code lexi} is not a canonical LexiVersion (see
     *     {@link #isValid(String)}); the message quotes the bad input
     * @throws NullPointerException if {@code lexi} is {@code null}
     */
    public static BigInteger decode(String lexi) {
        return new BigInteger(checkedDigits(lexi), RADIX);
    }

    /**
     * Decodes a LexiVersion that must fit into an unsigned 64-bit value (every Postgres LSN does).
     *
     * @param lexi the encoded string
     * @return the decoded value as an unsigned {@code long}
     * @throws IllegalArgumentException if {@code lexi} is not a canonical LexiVersion or its value
     *     exceeds 2<sup>64</sup>−1
     */
    public static long decodeUnsignedLong(String lexi) {
        String digits = checkedDigits(lexi);
        // 13 base-36 digits hold up to 36^13-1 > 2^64-1, so only 13-digit inputs can overflow; the
        // JDK parser reports that as NumberFormatException, which we rephrase with the input.
        try {
            return Long.parseUnsignedLong(digits, RADIX);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("LexiVersion exceeds the unsigned 64-bit range: \"" + lexi + "\"", e);
        }
    }

    /**
     * Tells whether {@code s} is a canonical LexiVersion: at least two characters, only
     * {@code [0-9a-z]}, a length prefix that matches the digit count, at most {@link #MAX_DIGITS}
     * digits, and no leading zero digit unless the value is zero.
     *
     * @param s the string to check; {@code null} is not valid
     * @return {@code true} if {@link #decode(String)} would accept it
     */
    public static boolean isValid(String s) {
        return s != null && problem(s) == null;
    }

    /**
     * Returns the lexicographically (and therefore numerically) smaller of two LexiVersions.
     *
     * @param a first version
     * @param b second version
     * @return {@code a} if {@code a <= b} by {@link String#compareTo}, else {@code b}
     */
    public static String min(String a, String b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /**
     * Returns the lexicographically (and therefore numerically) larger of two LexiVersions.
     *
     * @param a first version
     * @param b second version
     * @return {@code a} if {@code a >= b} by {@link String#compareTo}, else {@code b}
     */
    public static String max(String a, String b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static String withPrefix(String base36) {
        // At most 36 digits reach this point, so (length - 1) is a single base-36 character.
        return Character.forDigit(base36.length() - 1, RADIX) + base36;
    }

    private static String checkedDigits(String lexi) {
        String problem = problem(lexi);
        if (problem != null) {
            throw new IllegalArgumentException("Invalid LexiVersion \"" + lexi + "\": " + problem);
        }
        return lexi.substring(1);
    }

    /** Returns a description of what is wrong with {@code s}, or {@code null} if it is valid. */
    private static String problem(String s) {
        if (s.length() < 2) {
            return "must have at least 2 characters, got " + s.length();
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) {
                return "only [0-9a-z] are allowed, found '" + c + "' at index " + i;
            }
        }
        int digits = s.length() - 1;
        if (digits > MAX_DIGITS) {
            return "at most " + MAX_DIGITS + " digits are allowed, got " + digits;
        }
        int declared = Character.digit(s.charAt(0), RADIX) + 1;
        if (declared != digits) {
            return "length prefix '" + s.charAt(0) + "' declares " + declared + " digits but " + digits + " follow";
        }
        if (digits > 1 && s.charAt(1) == '0') {
            // A leading zero would give a second spelling of a shorter number that sorts after it.
            return "leading zero digits are not canonical";
        }
        return null;
    }
}

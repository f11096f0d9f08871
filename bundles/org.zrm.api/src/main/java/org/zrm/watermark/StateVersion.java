package org.zrm.watermark;

import java.math.BigInteger;
import java.util.Objects;
import java.util.Optional;

/**
 * Zero's replica state version: a {@code major} version that tracks the replication stream (for
 * Postgres, the LSN) and an optional {@code minor} version for auxiliary changes interleaved between
 * two stream positions (backfill transactions).
 *
 * <p>The string form, which is what is stored and sent everywhere, is {@code lexi(major)} or
 * {@code lexi(major) + "." + lexi(minor)} (see {@link LexiVersion}). Since {@code '.'} sorts below
 * every {@code [0-9a-z]} character, string order and version order agree:
 * {@code X < X.minor1 < X.minor2 < nextMajor}. {@link #compareTo(StateVersion)} implements the
 * same order on the parsed form.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class StateVersion implements Comparable<StateVersion> {

    private final BigInteger major;
    private final BigInteger minor; // null when absent

    private StateVersion(BigInteger major, BigInteger minor) {
        this.major = checkRange("major", major);
        this.minor = minor == null ? null : checkRange("minor", minor);
    }

    /**
     * Creates a major-only version.
     *
     * @param major the major version, 0 to {@link LexiVersion#MAX_VALUE}
     * @return the version
     * @throws IllegalArgumentException if {@code major} is out of range
     */
    public static StateVersion of(BigInteger major) {
        return new StateVersion(Objects.requireNonNull(major, "major"), null);
    }

    /**
     * Creates a version with a minor component.
     *
     * @param major the major version, 0 to {@link LexiVersion#MAX_VALUE}
     * @param minor the minor version, 0 to {@link LexiVersion#MAX_VALUE}
     * @return the version
     * @throws IllegalArgumentException if either component is out of range
     */
    public static StateVersion of(BigInteger major, BigInteger minor) {
        return new StateVersion(Objects.requireNonNull(major, "major"), Objects.requireNonNull(minor, "minor"));
    }

    /**
     * Parses the string form {@code "<lexi>"} or {@code "<lexi>.<lexi>"}.
     *
     * @param text the state version string
     * @return the parsed version
     * @throws IllegalArgumentException if {@code text} has more than one {@code '.'} or either part is
     *     not a valid {@link LexiVersion}; the message quotes the input
     */
    public static StateVersion parse(String text) {
        Objects.requireNonNull(text, "text");
        int dot = text.indexOf('.');
        if (dot < 0) {
            return new StateVersion(LexiVersion.decode(text), null);
        }
        if (text.indexOf('.', dot + 1) >= 0) {
            throw new IllegalArgumentException("Invalid stateVersion \"" + text + "\": more than one '.'");
        }
        try {
            return new StateVersion(LexiVersion.decode(text.substring(0, dot)),
                    LexiVersion.decode(text.substring(dot + 1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Invalid stateVersion \"" + text + "\": " + e.getMessage(), e);
        }
    }

    /**
     * Extracts only the major component of a state version string, as Zero's
     * {@code majorVersionFromString} does; the minor part is still validated.
     *
     * @param text the state version string
     * @return the major version
     * @throws IllegalArgumentException if {@code text} is not a valid state version
     */
    public static BigInteger majorOf(String text) {
        return parse(text).major;
    }

    /**
     * Encodes a major-only version string, i.e. {@code LexiVersion.encode(major)}.
     *
     * @param major the major version
     * @return its string form
     */
    public static String majorToString(BigInteger major) {
        return LexiVersion.encode(major);
    }

    /** @return the major component, never negative */
    public BigInteger major() {
        return major;
    }

    /** @return the minor component, empty for a major-only version */
    public Optional<BigInteger> minor() {
        return Optional.ofNullable(minor);
    }

    /** @return this version without its minor component (itself if it has none) */
    public StateVersion majorOnly() {
        return minor == null ? this : new StateVersion(major, null);
    }

    /**
     * Orders by major, then "no minor" before any minor, then by minor. This is the order of the
     * string forms under {@link String#compareTo}.
     */
    @Override
    public int compareTo(StateVersion other) {
        int c = major.compareTo(other.major);
        if (c != 0) {
            return c;
        }
        if (minor == null || other.minor == null) {
            return minor == null ? (other.minor == null ? 0 : -1) : 1;
        }
        return minor.compareTo(other.minor);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StateVersion && ((StateVersion) o).major.equals(major)
                && Objects.equals(((StateVersion) o).minor, minor);
    }

    @Override
    public int hashCode() {
        return Objects.hash(major, minor);
    }

    /** @return the canonical string form, {@code "<lexi>"} or {@code "<lexi>.<lexi>"} */
    @Override
    public String toString() {
        String s = LexiVersion.encode(major);
        return minor == null ? s : s + "." + LexiVersion.encode(minor);
    }

    private static BigInteger checkRange(String what, BigInteger v) {
        if (v.signum() < 0 || v.compareTo(LexiVersion.MAX_VALUE) > 0) {
            throw new IllegalArgumentException(what + " version out of range [0, 36^36-1]: " + v);
        }
        return v;
    }
}

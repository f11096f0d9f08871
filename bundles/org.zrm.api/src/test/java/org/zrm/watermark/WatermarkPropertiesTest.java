package org.zrm.watermark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.regex.Pattern;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.testing.fuzz.FuzzTries;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.BigRange;
import net.jqwik.api.constraints.IntRange;

/**
 * jqwik properties: the invariants Zero relies on (string order = numeric order) and the
 * round trips between LSN text, numbers and watermarks, over the whole unsigned 64-bit range.
 */
@AddLifecycleHook(FuzzTries.class)
class WatermarkPropertiesTest {

    private static final Pattern LSN_TEXT = Pattern.compile("[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}");

    /** The central invariant: LSN order equals watermark string order (and never disagrees on equality). */
    @Property(tries = 2000)
    void lsnOrderEqualsWatermarkOrder(@ForAll long a, @ForAll long b) {
        Lsn x = Lsn.of(a);
        Lsn y = Lsn.of(b);
        assertEquals(Integer.signum(x.compareTo(y)), Integer.signum(Watermarks.compare(x.toWatermark(), y.toWatermark())));
        assertEquals(Integer.signum(Long.compareUnsigned(a, b)), Integer.signum(x.compareTo(y)));
    }

    /** Nearby values are where length-prefix mistakes would show; random longs rarely land there. */
    @Property
    void adjacentValuesOrder(@ForAll long a) {
        Assume.that(a != -1L);
        assertTrue(LexiVersion.encode(a).compareTo(LexiVersion.encode(a + 1)) < 0);
    }

    @Property(tries = 2000)
    void lsnTextNumberWatermarkRoundTrip(@ForAll long v) {
        Lsn lsn = Lsn.of(v);
        assertEquals(lsn, Lsn.parse(lsn.toString()));
        assertEquals(lsn, Lsn.parse(lsn.toPaddedString()));
        assertEquals(lsn, Lsn.parse(lsn.toString().toLowerCase()));
        assertEquals(lsn, Lsn.of(lsn.toBigInteger()));
        assertEquals(lsn, Lsn.fromWatermark(lsn.toWatermark()));
        assertEquals(v, LexiVersion.decodeUnsignedLong(lsn.toWatermark()));
        assertEquals(lsn.toBigInteger(), LexiVersion.decode(lsn.toWatermark()));
        assertEquals(LexiVersion.encode(lsn.toBigInteger()), lsn.toWatermark());
        assertEquals(17, lsn.toPaddedString().length());
    }

    @Property
    void bigValuesRoundTripAndOrder(@ForAll @BigRange(min = "0", max = "106387358923716524807713475752456393740167855629859291135") BigInteger a,
                                    @ForAll @BigRange(min = "0", max = "106387358923716524807713475752456393740167855629859291135") BigInteger b) {
        String x = LexiVersion.encode(a);
        assertEquals(a, LexiVersion.decode(x));
        assertEquals(Integer.signum(a.compareTo(b)), Integer.signum(x.compareTo(LexiVersion.encode(b))));
    }

    /** {@code X < X.m1 < X.m2 < next major}, and watermark → LSN ignores the minor part. */
    @Property(tries = 1000)
    void minorVersionsSortBetweenMajors(@ForAll long major, @ForAll long m1, @ForAll long m2) {
        Assume.that(major != -1L && Long.compareUnsigned(m1, m2) < 0);
        String x = LexiVersion.encode(major);
        String xm1 = x + "." + LexiVersion.encode(m1);
        String xm2 = x + "." + LexiVersion.encode(m2);
        String next = LexiVersion.encode(major + 1);
        assertTrue(x.compareTo(xm1) < 0);
        assertTrue(xm1.compareTo(xm2) < 0);
        assertTrue(xm2.compareTo(next) < 0);
        assertTrue(StateVersion.parse(x).compareTo(StateVersion.parse(xm1)) < 0);
        assertTrue(StateVersion.parse(xm1).compareTo(StateVersion.parse(xm2)) < 0);
        assertEquals(xm1, StateVersion.parse(xm1).toString());
        assertEquals(Lsn.of(major), Lsn.fromWatermark(xm2));
        assertEquals(Lsn.of(major + 1), Watermarks.restartLsn(xm1));
        assertEquals(Watermarks.restartLsn(x), Watermarks.restartLsn(xm2));
    }

    /** For any string: either decoding rejects it, or it is exactly the canonical encoding of its value. */
    @Property(tries = 3000)
    void lexiDecodeAcceptsOnlyCanonicalEncodings(@ForAll("lexiLike") String s) {
        BigInteger v;
        try {
            v = LexiVersion.decode(s);
        } catch (IllegalArgumentException rejected) {
            assertTrue(!LexiVersion.isValid(s));
            return;
        }
        assertEquals(s, LexiVersion.encode(v));
        assertTrue(LexiVersion.isValid(s));
    }

    /** Corrupting one character of a valid encoding with an upper-case letter or symbol is always rejected. */
    @Property
    void lexiDecodeRejectsCorruptedEncodings(@ForAll long v, @ForAll @IntRange(min = 0, max = 20) int at,
                                             @ForAll("badChars") char bad) {
        String good = LexiVersion.encode(v);
        int i = at % good.length();
        String corrupted = good.substring(0, i) + bad + good.substring(i + 1);
        assertThrows(IllegalArgumentException.class, () -> LexiVersion.decode(corrupted));
    }

    /** LSN parsing accepts exactly the {@code H/L} hex syntax with 1–8 digits per half. */
    @Property(tries = 3000)
    void lsnParseAcceptsExactlyTheHexSyntax(@ForAll("lsnLike") String s) {
        boolean wellFormed = LSN_TEXT.matcher(s).matches();
        try {
            Lsn lsn = Lsn.parse(s);
            assertTrue(wellFormed, "accepted " + s);
            assertTrue(lsn.toPaddedString().endsWith(s.substring(s.indexOf('/') + 1).toUpperCase()));
        } catch (IllegalArgumentException e) {
            assertTrue(!wellFormed, "rejected " + s + ": " + e.getMessage());
        }
    }

    @Provide
    Arbitrary<String> lexiLike() {
        Arbitrary<String> random = Arbitraries.strings().withChars("0123456789abcdefxyzA.-/ ").ofMinLength(0).ofMaxLength(40);
        Arbitrary<String> plausible = Arbitraries.strings().withChars("0123456789abcz").ofMinLength(1).ofMaxLength(15);
        Arbitrary<String> encodings = Arbitraries.longs().map(LexiVersion::encode);
        return Arbitraries.oneOf(random, plausible, encodings);
    }

    @Provide
    Arbitrary<Character> badChars() {
        return Arbitraries.of('A', 'Z', '.', '-', ' ', '/', '_', 'é');
    }

    @Provide
    Arbitrary<String> lsnLike() {
        Arbitrary<String> half = Arbitraries.strings().withChars("0123456789abcdefABCDEFgx+ ").ofMinLength(0).ofMaxLength(10);
        Arbitrary<String> pairs = half.flatMap(h -> half.map(l -> h + "/" + l));
        Arbitrary<String> random = Arbitraries.strings().withChars("0123456789ABF/ ").ofMaxLength(20);
        return Arbitraries.oneOf(pairs, random);
    }
}

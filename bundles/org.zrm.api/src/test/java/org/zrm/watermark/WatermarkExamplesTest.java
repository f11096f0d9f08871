package org.zrm.watermark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Example-based tests, ported from upstream's lsn, lexi-version and state-version tests. */
class WatermarkExamplesTest {

    /** Upstream lsn.test.ts: LSN text, watermark (possibly with an ignored minor part), value. */
    @ParameterizedTest(name = "{0} <=> {1}")
    @CsvSource({
        "0/0, 00, 0",
        "0/0, 00.01, 0",
        "0/A, 0a, 10",
        "16/B374D848, 718sh0nk8, 97500059720",
        "16/B374D848, 718sh0nk8.123, 97500059720",
        "FFFFFFFF/FFFFFFFF, c3w5e11264sgsf, 18446744073709551615",
    })
    void lsnToAndFromWatermark(String lsnText, String watermark, String value) {
        String major = watermark.contains(".") ? watermark.substring(0, watermark.indexOf('.')) : watermark;
        assertEquals(major, Watermarks.fromLsn(lsnText));
        assertEquals(new BigInteger(value), Lsn.parse(lsnText).toBigInteger());
        assertEquals(lsnText, Lsn.of(new BigInteger(value)).toString());
        assertEquals(lsnText, Watermarks.toLsn(watermark).toString());
    }

    /** Upstream lexi-version.test.ts encoding cases, including values beyond 64 bits. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "0, 00",
        "10, 0a",
        "35, 0z",
        "36, 110",
        "46655, 2zzz",
        "4294967296, 61z141z4",
        "9007199254740991, a2gosa7pa2gv",
        "97500059720, 718sh0nk8",
        "18446744073709551615, c3w5e11264sgsf",
        "18446744073709551616, c3w5e11264sgsg",
        "37778931862957161709568, e65gym2kbgwjf668",
        "340282366920938463463374607431768211456, of5lxx1zz5pnorynqglhzmsp34",
    })
    void lexiEncoding(String value, String lexi) {
        BigInteger v = new BigInteger(value);
        assertEquals(lexi, LexiVersion.encode(v));
        assertEquals(v, LexiVersion.decode(lexi));
        if (v.bitLength() <= 64) {
            assertEquals(lexi, LexiVersion.encode(v.longValue()));
            assertEquals(v.longValue(), LexiVersion.decodeUnsignedLong(lexi));
        } else {
            assertThrows(IllegalArgumentException.class, () -> LexiVersion.decodeUnsignedLong(lexi));
        }
    }

    @Test
    void lexiLimits() {
        assertEquals("z".repeat(37), LexiVersion.encode(LexiVersion.MAX_VALUE));
        assertEquals(LexiVersion.MAX_VALUE, LexiVersion.decode("z".repeat(37)));
        assertEquals("zx6sp2h09v22524mnljo7dsm6cz9iehtq4xds", LexiVersion.encode(BigInteger.TWO.pow(186)));
        assertThrows(IllegalArgumentException.class, () -> LexiVersion.encode(BigInteger.TWO.pow(187)));
        assertThrows(IllegalArgumentException.class, () -> LexiVersion.encode(BigInteger.valueOf(-1)));
        assertEquals("c3w5e11264sgsf", LexiVersion.encode(-1L), "long is unsigned");
    }

    /** Upstream's decode sanity checks plus the stricter canonical-form checks. */
    @ParameterizedTest
    @ValueSource(strings = {"not a ! number", "0", "", "20", "3cis1k", "0A", "718SH0NK8", "100", "z0", "0-",
        "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"})
    void lexiDecodeRejects(String bad) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LexiVersion.decode(bad));
        assertTrue(e.getMessage().contains("\"" + bad + "\""), e.getMessage());
        assertFalse(LexiVersion.isValid(bad));
    }

    @Test
    void lexiMinMax() {
        assertEquals("01", LexiVersion.min("01", "02"));
        assertEquals("02", LexiVersion.max("01", "02"));
        assertEquals(LexiVersion.encode(9), LexiVersion.min(LexiVersion.encode(1000), LexiVersion.encode(9)));
        assertEquals(LexiVersion.encode(36), LexiVersion.max(LexiVersion.encode(35), LexiVersion.encode(36)));
    }

    /** Upstream state-version.test.ts. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"00, 0,", "01, 1,", "123, 75,", "01.00, 1, 0", "01.123, 1, 75"})
    void stateVersionRoundTrip(String text, long major, Long minor) {
        StateVersion v = StateVersion.parse(text);
        assertEquals(BigInteger.valueOf(major), v.major());
        assertEquals(minor == null ? null : BigInteger.valueOf(minor), v.minor().orElse(null));
        assertEquals(text, v.toString());
        assertEquals(BigInteger.valueOf(major), StateVersion.majorOf(text));
        assertTrue(text.startsWith(StateVersion.majorToString(BigInteger.valueOf(major))));
    }

    @Test
    void stateVersionSorting() {
        List<StateVersion> versions = new ArrayList<>(List.of(
                sv(75, null), sv(75, 1L), sv(23, 100L), sv(12, 1001L), sv(23, 101L), sv(12, 1L), sv(12, 0L), sv(12, null)));
        List<String> sortedStrings = versions.stream().map(StateVersion::toString).sorted().collect(Collectors.toList());
        List<StateVersion> expected = List.of(
                sv(12, null), sv(12, 0L), sv(12, 1L), sv(12, 1001L), sv(23, 100L), sv(23, 101L), sv(75, null), sv(75, 1L));
        assertEquals(expected, sortedStrings.stream().map(StateVersion::parse).collect(Collectors.toList()));
        Collections.sort(versions);
        assertEquals(expected, versions, "compareTo agrees with string order");
    }

    @ParameterizedTest
    @ValueSource(strings = {"01.02.03", "01.", ".01", "01.0A", "", "0"})
    void stateVersionRejects(String bad) {
        assertThrows(IllegalArgumentException.class, () -> StateVersion.parse(bad));
    }

    @Test
    void lsnFormats() {
        Lsn lsn = Lsn.parse("16/b374d848");
        assertEquals("16/B374D848", lsn.toString());
        assertEquals("00000016/B374D848", lsn.toPaddedString());
        assertEquals(lsn, Lsn.parse("00000016/B374D848"));
        assertEquals(0x16L, lsn.high());
        assertEquals(0xB374D848L, lsn.low());
        assertEquals("0/0", Lsn.ZERO.toString());
        assertEquals("00000000/00000000", Lsn.ZERO.toPaddedString());
        assertEquals("FFFFFFFF/FFFFFFFF", Lsn.MAX.toString());
        assertEquals(-1L, Lsn.MAX.asLong());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/", "16", "16/", "/B374D848", "123456789/0", "0/123456789", "0x1/0", "+1/0", " 1/0",
        "1/0 ", "1/2/3", "G/0", "1/٣"})
    void lsnParseRejects(String bad) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Lsn.parse(bad));
        assertTrue(e.getMessage().contains("\"" + bad + "\""), e.getMessage());
    }

    @Test
    void lsnOrderIsUnsigned() {
        Lsn high = Lsn.parse("80000000/0"); // negative as a signed long
        assertTrue(high.compareTo(Lsn.parse("7FFFFFFF/FFFFFFFF")) > 0);
        assertTrue(Lsn.MAX.compareTo(high) > 0);
        assertTrue(high.toWatermark().compareTo(Lsn.parse("7FFFFFFF/FFFFFFFF").toWatermark()) > 0);
        assertThrows(IllegalArgumentException.class, () -> Lsn.of(BigInteger.ONE.shiftLeft(64)));
        assertThrows(IllegalArgumentException.class, () -> Lsn.of(BigInteger.valueOf(-1)));
    }

    @Test
    void restartPositionIsMajorPlusOne() {
        assertEquals(Lsn.parse("16/B374D849"), Watermarks.restartLsn("718sh0nk8"));
        assertEquals(Lsn.parse("16/B374D849"), Watermarks.restartLsn("718sh0nk8.3z8d2"), "minor part is ignored");
        assertEquals(Lsn.parse("1/0"), Watermarks.restartLsn(Lsn.parse("0/FFFFFFFF").toWatermark()));
        assertThrows(IllegalArgumentException.class, () -> Watermarks.restartLsn("c3w5e11264sgsf"));
        assertThrows(ArithmeticException.class, Lsn.MAX::next);
        assertThrows(IllegalArgumentException.class, () -> Watermarks.toLsn("c3w5e11264sgsg"), "2^64 is no LSN");
    }

    @Test
    void watermarkComparisonsArePlainStringOrder() {
        assertTrue(Watermarks.isAfter("0b", "0a"));
        assertFalse(Watermarks.isAfter("0a", "0a"));
        assertTrue(Watermarks.compare("0z", "110") < 0, "length prefix makes 35 < 36");
        assertTrue(Watermarks.compare("718sh0nk8", "718sh0nk8.01") < 0);
        assertTrue(Watermarks.compare("718sh0nk8.zz", "718sh0nk9") < 0);
        assertEquals("0a", Watermarks.min("0a", "0b"));
        assertEquals("0b", Watermarks.max("0a", "0b"));
        // Opaque watermarks of custom sources compare the same way, without decoding.
        assertTrue(Watermarks.compare("custom-1", "custom-2") < 0);
    }

    private static StateVersion sv(long major, Long minor) {
        return minor == null ? StateVersion.of(BigInteger.valueOf(major))
                : StateVersion.of(BigInteger.valueOf(major), BigInteger.valueOf(minor));
    }
}

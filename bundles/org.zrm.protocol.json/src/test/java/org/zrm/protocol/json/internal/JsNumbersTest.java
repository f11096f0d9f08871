package org.zrm.protocol.json.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.testing.fuzz.FuzzTries;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Double formatting must equal JavaScript's {@code String(x)}; expectations taken from Node.js. */
@AddLifecycleHook(FuzzTries.class)
class JsNumbersTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "1718812345003.5|1718812345003.5",
        "3.0|3",
        "-0.0|0",
        "0.0|0",
        "1e21|1e+21",
        "1e20|100000000000000000000",
        "123456789012345678901234|1.2345678901234569e+23", // exact value ...685803008: 69 is closer than 68
        "1.5e-7|1.5e-7",
        "0.000001|0.000001",
        "0.0000001|1e-7",
        "1.2345e-6|0.0000012345",
        "0.1|0.1",
        "0.30000000000000004|0.30000000000000004",
        "-1.25|-1.25",
        "5e-324|5e-324",
        "1.7976931348623157e308|1.7976931348623157e+308",
        "2.2250738585072014e-308|2.2250738585072014e-308",
        "9007199254740992|9007199254740992",
        "9007199254740993|9007199254740992",
        "1e23|1e+23",
        "2e23|2e+23",
        // Java 17's Double.toString prints 2.82879384806159008E17 here (JDK-4511638)
        "2.82879384806159E17|282879384806159000",
        "1.0E-5|0.00001",
        "123.456|123.456",
        "4.35|4.35",
        "100|100",
        "1e-6|0.000001",
        "1e-300|1e-300",
    })
    void formatsLikeJavaScript(double x, String expected) {
        assertEquals(expected, JsNumbers.toJsString(x));
    }

    @ParameterizedTest
    @CsvSource({"NaN,null", "Infinity,null", "-Infinity,null"})
    void nonFiniteBecomesNull(double x, String expected) {
        StringBuilder sb = new StringBuilder();
        JsNumbers.appendJson(sb, x);
        assertEquals(expected, sb.toString());
    }

    @Property(tries = 3000)
    void roundTripsAndIsNeverLongerThanJava(@ForAll double x) {
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            return;
        }
        String js = JsNumbers.toJsString(x);
        assertEquals(x == 0 ? 0.0 : x, Double.parseDouble(js), js);
        assertTrue(significantDigits(js) <= significantDigits(Double.toString(x)),
                () -> js + " longer than " + x);
    }

    @Property(tries = 3000)
    void bitsRoundTrip(@ForAll long bits) {
        double x = Double.longBitsToDouble(bits);
        if (Double.isNaN(x) || Double.isInfinite(x) || x == 0) {
            return;
        }
        String js = JsNumbers.toJsString(x);
        assertEquals(x, Double.parseDouble(js), js);
        // shortest: one digit fewer never round-trips
        BigDecimal d = new BigDecimal(js).stripTrailingZeros();
        if (d.precision() > 1) {
            BigDecimal down = d.round(new java.math.MathContext(d.precision() - 1, java.math.RoundingMode.FLOOR));
            BigDecimal up = d.round(new java.math.MathContext(d.precision() - 1, java.math.RoundingMode.CEILING));
            assertTrue(down.doubleValue() != x && up.doubleValue() != x, () -> js + " is not shortest");
        }
    }

    // The few-fraction-digits path must give exactly what the exact search gives.

    @Property(tries = 3000)
    void anyDoubleFormatsAsTheExactSearchDoes(@ForAll double x) {
        if (!Double.isNaN(x) && !Double.isInfinite(x)) {
            assertEquals(JsNumbers.exactJsString(x), JsNumbers.toJsString(x));
        }
    }

    @Property(tries = 3000)
    void timestampsFormatAsTheExactSearchDoes(@ForAll @LongRange(min = -5_000_000_000_000_000L,
            max = 5_000_000_000_000_000L) long microsSince2000) {
        // How a timestamptz reaches JSON: µs since 2000 → ms since 1970, two double roundings.
        double x = (double) microsSince2000 / 1000 + 946_684_800_000d;
        assertEquals(JsNumbers.exactJsString(x), JsNumbers.toJsString(x));
    }

    @Property(tries = 3000)
    void shortDecimalsFormatAsTheExactSearchDoes(@ForAll long unscaled, @ForAll @IntRange(min = 0, max = 22) int scale) {
        double x = new BigDecimal(java.math.BigInteger.valueOf(unscaled), scale).doubleValue();
        assertEquals(JsNumbers.exactJsString(x), JsNumbers.toJsString(x));
    }

    @ParameterizedTest
    @CsvSource({"1764990000123.456", "1764990000123.4", "0.1", "0.000123", "4503599627370495.5", "8.5",
        "1.7976931348623157e308", "5e-324", "123456.789012", "0.30000000000000004", "9007199254740991.0"})
    void edgeValuesFormatAsTheExactSearchDoes(double x) {
        assertEquals(JsNumbers.exactJsString(x), JsNumbers.toJsString(x));
        assertEquals(JsNumbers.exactJsString(-x), JsNumbers.toJsString(-x));
    }

    private static int significantDigits(String s) {
        String mantissa = s.toLowerCase().split("e")[0].replace("-", "").replace(".", "");
        mantissa = mantissa.replaceFirst("^0+", "").replaceFirst("0+$", "");
        return Math.max(1, mantissa.length());
    }
}

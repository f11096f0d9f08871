package org.zrm.changesource.pg.internal.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.testing.fuzz.FuzzTries;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The timestamp fast path must be bit-identical to the general (regex + BigInteger) path for every
 * text, and must leave BC, other year widths and invalid input to it.
 */
@AddLifecycleHook(FuzzTries.class)
class FastTimestampPropertyTest {

    @Property(tries = 20_000)
    void sameBitsAsGeneralPath(@ForAll("timestamps") String text) {
        double general;
        try {
            general = PgTextValues.timestampToFpMillisGeneral(text);
        } catch (PgValueFormatException e) {
            assertTrue(Double.isNaN(FastTimestamp.parse(text)), "fast path accepted invalid " + text);
            assertThrows(PgValueFormatException.class, () -> PgTextValues.timestampToFpMillis(text));
            return;
        }
        double fast = FastTimestamp.parse(text);
        if (!Double.isNaN(fast)) {
            assertEquals(Double.doubleToRawLongBits(general), Double.doubleToRawLongBits(fast), text);
        }
        assertEquals(Double.doubleToRawLongBits(general),
                Double.doubleToRawLongBits(PgTextValues.timestampToFpMillis(text)), text);
    }

    @Property(tries = 5_000)
    void commonFormIsTakenByFastPath(@ForAll("commonTimestamps") String text) {
        double fast = FastTimestamp.parse(text);
        assertTrue(!Double.isNaN(fast), "fast path declined " + text);
        assertEquals(Double.doubleToRawLongBits(PgTextValues.timestampToFpMillisGeneral(text)),
                Double.doubleToRawLongBits(fast), text);
    }

    /** Doubles are fine enough for the sub-millisecond rounding to show in the bits only near the epoch. */
    @Property(tries = 5_000)
    void nearTheEpochSameBits(@ForAll("nearEpoch") String text) {
        commonFormIsTakenByFastPath(text);
    }

    @Provide
    Arbitrary<String> nearEpoch() {
        return Combinators.combine(Arbitraries.of("1969-12-31", "1970-01-01"), time(), fraction(9), offset(false))
                .as((d, t, f, o) -> d + " " + t + f + o);
    }

    @Example
    void declinesWhatOnlyTheGeneralPathHandles() {
        for (String s : new String[] {"0001-01-01 00:00:00 BC", "12345-06-07 08:09:10+02", "999-01-01 00:00:00",
                "2024-02-30 00:00:00", "2024-01-01 00:00:00.", "2024-01-01 00:00:00+123", "2024-01-01T00:00:00"}) {
            assertTrue(Double.isNaN(FastTimestamp.parse(s)), s);
        }
        assertEquals(Double.doubleToRawLongBits(PgTextValues.timestampToFpMillisGeneral("1969-12-31 23:59:59.9999995")),
                Double.doubleToRawLongBits(FastTimestamp.parse("1969-12-31 23:59:59.9999995")));
        assertEquals(-0.000001, FastTimestamp.parse("1969-12-31 23:59:59.999999999"), 1e-12);
    }

    @Provide
    Arbitrary<String> commonTimestamps() {
        return Combinators.combine(year4(), Arbitraries.integers().between(1, 12),
                        Arbitraries.integers().between(1, 28), time(), fraction(6), offset(false))
                .as((y, mo, d, t, f, o) -> y + "-" + two(mo) + "-" + two(d) + " " + t + f + o);
    }

    /** Mostly valid values, with BC, 1–6 digit years, invalid dates and malformed pieces mixed in. */
    @Provide
    Arbitrary<String> timestamps() {
        Arbitrary<String> year = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, year4()), net.jqwik.api.Tuple.of(2, digits(1, 6)));
        Arbitrary<String> suffix = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(8, Arbitraries.just("")),
                net.jqwik.api.Tuple.of(2, Arbitraries.just(" BC")), net.jqwik.api.Tuple.of(1, Arbitraries.just("x")));
        Arbitrary<String> head = Combinators.combine(year, Arbitraries.integers().between(0, 13),
                Arbitraries.integers().between(0, 32), time())
                .as((y, mo, d, t) -> y + "-" + two(mo) + "-" + two(d) + " " + t);
        return Combinators.combine(head, fraction(12), offset(true), suffix).as((h, f, o, s) -> h + f + o + s);
    }

    private static Arbitrary<String> year4() {
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(1, digits(4, 4)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of("1969", "1970")));
    }

    private static Arbitrary<String> time() {
        // The general path does not range-check the time of day; include out-of-range fields.
        return Combinators.combine(Arbitraries.integers().between(0, 99), Arbitraries.integers().between(0, 99),
                        Arbitraries.integers().between(0, 99))
                .filter((h, m, s) -> h < 25 && m < 60 && s < 61 || h % 7 == 0)
                .as((h, m, s) -> two(h) + ":" + two(m) + ":" + two(s));
    }

    private static Arbitrary<String> fraction(int maxDigits) {
        return Arbitraries.oneOf(Arbitraries.just(""), digits(1, maxDigits).map(d -> "." + d),
                Arbitraries.just(".999999"), Arbitraries.just(".000001"), Arbitraries.just(".5"));
    }

    private static Arbitrary<String> offset(boolean odd) {
        Arbitrary<String> sign = Arbitraries.of("+", "-");
        Arbitrary<String> common = Combinators.combine(sign, Arbitraries.integers().between(0, 15),
                Arbitraries.of("", ":00", ":30", ":45"), Arbitraries.of("", "", "", ":32", ":07"))
                .as((s, h, m, sec) -> s + two(h) + m + (m.isEmpty() ? "" : sec));
        if (!odd) {
            return Arbitraries.oneOf(Arbitraries.just(""), common);
        }
        Arbitrary<String> weird = Combinators.combine(sign, digits(1, 3), Arbitraries.of("", ":", ":1", ":123", ":00:"))
                .as((s, h, rest) -> s + h + rest);
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, Arbitraries.just("")),
                net.jqwik.api.Tuple.of(6, common), net.jqwik.api.Tuple.of(1, weird));
    }

    private static Arbitrary<String> digits(int min, int max) {
        return Arbitraries.strings().withCharRange('0', '9').ofMinLength(min).ofMaxLength(max);
    }

    private static String two(int v) {
        return v < 10 ? "0" + v : Integer.toString(v);
    }
}

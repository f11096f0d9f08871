package org.zrm.changesource.pg.internal.types;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.json.ProtocolCodec;

/** Ports of upstream {@code types/pg.test.ts} plus the QUIRK decisions of spec §7. */
class PgTextValuesTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private static Object stream(int oid, String text) {
        return PgValueParsers.forScalarOid(oid, PgValueParsers.Target.PROTOCOL).parse(text);
    }

    @Test
    void timestampToFpMillis_matchesUpstreamExamples() {
        // stream.pg.test.ts: '2019-01-12T00:30:35.381101032Z' stored as timestamp → 1547253035381.101
        assertEquals(1547253035381.101, PgTextValues.timestampToFpMillis("2019-01-12 00:30:35.381101"));
        assertEquals(1547253035654.321, PgTextValues.timestampToFpMillis("2019-01-12 00:30:35.654321"));
        assertEquals(0.0, PgTextValues.timestampToFpMillis("1970-01-01 00:00:00"));
        assertEquals(1547253035381.101, PgTextValues.timestampToFpMillis("2019-01-12 01:30:35.381101+01"));
        assertEquals(1547253035381.101, PgTextValues.timestampToFpMillis("2019-01-11 23:00:35.381101-01:30"));
        assertEquals(Double.POSITIVE_INFINITY, PgTextValues.timestampToFpMillis("infinity"));
        assertEquals(Double.NEGATIVE_INFINITY, PgTextValues.timestampToFpMillis("-infinity"));
    }

    @Test
    void timestampBeforeEpochAndBc() {
        assertEquals(-1.5, PgTextValues.timestampToFpMillis("1969-12-31 23:59:59.9985"));
        // 1 BC = ISO year 0
        double bc = PgTextValues.timestampToFpMillis("0001-01-01 00:00:00 BC");
        assertEquals(java.time.LocalDate.of(0, 1, 1).toEpochDay() * 86_400_000.0, bc);
    }

    @Test
    void quirkTimestampOffsetWithSeconds_isAccepted() {
        // DECISION: upstream fails the stream on LMT offsets; we subtract the seconds too.
        double v = PgTextValues.timestampToFpMillis("1900-01-01 00:19:32+00:19:32");
        assertEquals(java.time.LocalDate.of(1900, 1, 1).toEpochDay() * 86_400_000.0, v);
        assertThrows(PgValueFormatException.class, () -> PgTextValues.timestampToFpMillis("2019-01-12T00:30:35"));
    }

    @Test
    void timeToMillis_truncatesAndNormalizes() {
        assertEquals(45_296_789L, PgTextValues.timeToMillis("12:34:56.789999"));
        assertEquals(45_296_700L, PgTextValues.timeToMillis("12:34:56.7"));
        assertEquals(86_400_000L, PgTextValues.timeToMillis("24:00:00"));
        assertEquals(3_600_000L, PgTextValues.timeToMillis("04:00:00+03"));
        assertEquals(84_600_000L, PgTextValues.timeToMillis("00:30:00+01"));
        assertEquals(19_800_000L, PgTextValues.timeToMillis("00:00:00-05:30"));
        assertEquals(1_000L, PgTextValues.timeToMillis("00:00:01+00:00:00"));
        assertThrows(PgValueFormatException.class, () -> PgTextValues.timeToMillis("24:00:01"));
    }

    @Test
    void dateToUtcMidnight() {
        assertEquals(1742342400000.0, PgTextValues.dateToUtcMidnight("2025-03-19"));
        assertEquals(Double.POSITIVE_INFINITY, PgTextValues.dateToUtcMidnight("infinity"));
    }

    @Test
    void quirkBcAndLargeYearDates_areExact() {
        // DECISION: upstream gives NaN (null) here; we give the exact value binary COPY produces.
        assertEquals(java.time.LocalDate.of(-43, 3, 15).toEpochDay() * 86_400_000.0,
                PgTextValues.dateToUtcMidnight("0044-03-15 BC"));
        assertEquals(java.time.LocalDate.of(10000, 1, 1).toEpochDay() * 86_400_000.0,
                PgTextValues.dateToUtcMidnight("10000-01-01"));
        // upstream's Date.UTC maps years 0–99 to 19xx; we don't.
        assertEquals(java.time.LocalDate.of(50, 6, 1).toEpochDay() * 86_400_000.0,
                PgTextValues.dateToUtcMidnight("0050-06-01"));
    }

    @Test
    void integersAndBigints() {
        assertEquals(123L, stream(PgTypeOids.INT4, "123"));
        assertEquals(4294967295L, stream(PgTypeOids.OID, "4294967295"));
        assertEquals(9007199254740991L, stream(PgTypeOids.INT8, "9007199254740991"));
        assertEquals(new BigInteger("123456789098765432"), stream(PgTypeOids.INT8, "123456789098765432"));
        assertEquals(new BigInteger("-9223372036854775808"), stream(PgTypeOids.INT8, "-9223372036854775808"));
        assertEquals("123456789098765432", CODEC.encodeValue(stream(PgTypeOids.INT8, "123456789098765432")));
    }

    @Test
    void numbersAndNonFinite() {
        assertEquals(12345.678909876, stream(PgTypeOids.NUMERIC, "12345.678909876"));
        assertEquals(0.1, stream(PgTypeOids.FLOAT4, "0.1"));
        // QUIRK NaN/Infinity → JSON null: reproduced
        assertTrue(((Double) stream(PgTypeOids.FLOAT8, "NaN")).isNaN());
        assertEquals("null", CODEC.encodeValue(stream(PgTypeOids.NUMERIC, "Infinity")));
        assertEquals("null", CODEC.encodeValue(stream(PgTypeOids.FLOAT8, "-Infinity")));
        assertEquals("1e+21", CODEC.encodeValue(stream(PgTypeOids.NUMERIC, "1000000000000000000000")));
    }

    @Test
    void boolJsonTextUuid() {
        assertEquals(true, stream(PgTypeOids.BOOL, "t"));
        assertEquals(false, stream(PgTypeOids.BOOL, "f"));
        assertEquals("{\"bar\": \"baz\"}", stream(PgTypeOids.JSONB, "{\"bar\": \"baz\"}"));
        assertEquals("a  ", stream(PgTypeOids.BPCHAR, "a  "));
        assertEquals("1 year", stream(1186, "1 year"));
    }

    @Test
    void quirkByteaStreamedAsBuffer_reproduced() {
        Object v = stream(PgTypeOids.BYTEA, "\\x00ff10");
        assertEquals("{\"type\":\"Buffer\",\"data\":[0,255,16]}", CODEC.encodeValue(v));
        Object replica = PgValueParsers.forScalarOid(PgTypeOids.BYTEA, PgValueParsers.Target.REPLICA).parse("\\x00ff10");
        assertArrayEquals(new byte[] {0, (byte) 0xff, 0x10}, (byte[]) replica);
        assertThrows(PgValueFormatException.class, () -> stream(PgTypeOids.BYTEA, "abc"));
    }

    private static final PgTypeCatalog CATALOG = PgTypeCatalog.of(List.of(
            new PgType(1007, "_int4", PgTypeClass.BASE, 'A', 23, ','),
            new PgType(1016, "_int8", PgTypeClass.BASE, 'A', 20, ','),
            new PgType(1009, "_text", PgTypeClass.BASE, 'A', 25, ','),
            new PgType(1115, "_timestamp", PgTypeClass.BASE, 'A', 1114, ','),
            new PgType(199, "_json", PgTypeClass.BASE, 'A', 114, ','),
            new PgType(1020, "_box", PgTypeClass.BASE, 'A', 603, ';'),
            new PgType(1001, "_bytea", PgTypeClass.BASE, 'A', 17, ','),
            new PgType(19, "name", PgTypeClass.BASE, 'S', 18, ','),
            new PgType(600, "point", PgTypeClass.BASE, 'G', 701, ',')));

    private static Object array(int oid, String text) {
        return CATALOG.parser(oid, PgValueParsers.Target.PROTOCOL).parse(text);
    }

    @Test
    void arrays_nestedQuotedEmpty() {
        assertEquals(List.of(1L, 2L, 3L), array(1007, "{1,2,3}"));
        assertEquals(List.of(List.of(1L, 2L), List.of(3L, 4L)), array(1007, "{{1,2},{3,4}}"));
        assertEquals(List.of(), array(1007, "{}"));
        assertEquals(List.of("a b", "x\"y", "back\\slash", "", "{}", "c,d"),
                array(1009, "{\"a b\",\"x\\\"y\",\"back\\\\slash\",\"\",\"{}\",\"c,d\"}"));
        assertEquals(List.of(new BigInteger("123456789098765432"), 5L), array(1016, "{123456789098765432,5}"));
        assertEquals(List.of(1547253035654.321), array(1115, "{\"2019-01-12 00:30:35.654321\"}"));
        assertEquals(List.of("(1,1),(0,0)", "(2,2),(1,1)"), array(1020, "{(1,1),(0,0);(2,2),(1,1)}"));
        assertEquals(List.of(1L, 2L), array(1007, "[0:1]={1,2}"));
    }

    @Test
    void jsonArrayElementsAreParsed() {
        // stream.pg.test.ts: jsons: [1, '2', {a: 123}]
        Object v = array(199, "{1,\"\\\"2\\\"\",\"{\\\"a\\\":123}\"}");
        assertEquals("[1,\"2\",{\"a\":123}]", CODEC.encodeValue(v));
    }

    @Test
    void quirkUnquotedNullArrayElements_areNull() {
        assertEquals(Arrays.asList("a", null, "NULL"), array(1009, "{a,NULL,\"NULL\"}"));
        assertEquals(Arrays.asList(1L, null), array(1007, "{1,NULL}"));
        assertEquals(Arrays.asList((Object) null), array(1115, "{NULL}"));
    }

    @Test
    void quirkTypelemArrays_nameAndPointAreScalars() {
        assertEquals("pg_catalog", array(19, "pg_catalog"));
        assertEquals("(1.5,2.5)", array(600, "(1.5,2.5)"));
    }

    @Test
    void quirkArrayTypesUnknownToTheCatalog_fallBackToText() {
        // An array OID the catalog has not seen is passed through as text; callers reload the
        // catalog for unknown OIDs (PgTypeCatalog#contains).
        assertEquals("{1,2}", array(99999, "{1,2}"));
        assertTrue(!CATALOG.contains(99999));
    }

    @Test
    void byteaArrayElementsAreBuffers() {
        assertEquals("[{\"type\":\"Buffer\",\"data\":[1]},null]", CODEC.encodeValue(array(1001, "{\"\\\\x01\",NULL}")));
    }

    @Test
    void malformedArraysAreRejected() {
        assertThrows(PgValueFormatException.class, () -> array(1007, "{1,2"));
        assertThrows(PgValueFormatException.class, () -> array(1007, "1,2}"));
    }

    @Test
    void bufferJsonShape() {
        Map<String, Object> m = PgTextValues.bufferJson(new byte[] {1});
        assertEquals(List.of("type", "data"), List.copyOf(m.keySet()));
    }
}

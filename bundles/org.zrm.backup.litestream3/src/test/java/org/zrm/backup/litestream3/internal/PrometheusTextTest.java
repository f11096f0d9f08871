package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.backup.litestream3.internal.PrometheusText.Sample;
import org.zrm.backup.litestream3.internal.PrometheusText.Type;

class PrometheusTextTest {

    @Test
    void parsesLitestreamsExposition() throws Exception {
        List<Sample> samples = PrometheusText.parse("""
                # HELP litestream_db_size The current size of the real DB
                # TYPE litestream_db_size gauge
                litestream_db_size{db="/tmp/zbugs-sync-replica.db"} 3.183935488e+09
                # HELP litestream_replica_progress The last replicated watermark and time of replication
                # TYPE litestream_replica_progress gauge
                litestream_replica_progress{db="/tmp/zbugs-sync-replica.db",name="file",watermark="618ocqq8"} 1.74545644476593e+09
                # TYPE litestream_replica_validation_total counter
                litestream_replica_validation_total{db="/tmp/x.db",name="file",status="ok"} 0
                """);
        assertEquals(3, samples.size());
        Sample progress = samples.get(1);
        assertEquals("litestream_replica_progress", progress.name());
        assertEquals(Type.GAUGE, progress.type());
        assertEquals(Map.of("db", "/tmp/zbugs-sync-replica.db", "name", "file", "watermark", "618ocqq8"),
                progress.labels());
        assertEquals(1.74545644476593e+09, progress.value());
        assertNull(progress.timestampMs());
        assertEquals(Type.COUNTER, samples.get(2).type());
        assertEquals(List.of("db", "name", "watermark"), List.copyOf(progress.labels().keySet()));
    }

    @Test
    void unescapesLabelValuesAndAcceptsATrailingComma() throws Exception {
        Sample s = PrometheusText.parse("m{a=\"x\\\\y\",b=\"say \\\"hi\\\"\",c=\"l1\\nl2\",} 1\n").get(0);
        assertEquals("x\\y", s.labels().get("a"));
        assertEquals("say \"hi\"", s.labels().get("b"));
        assertEquals("l1\nl2", s.labels().get("c"));
    }

    @Test
    void labelValuesMayHoldBracesCommasAndSpaces() throws Exception {
        Sample s = PrometheusText.parse("m { a = \"}, {=\" , b=\"\" } 2").get(0);
        assertEquals(Map.of("a", "}, {=", "b", ""), s.labels());
        assertEquals(2.0, s.value());
    }

    @Test
    void readsAnOptionalTimestamp() throws Exception {
        List<Sample> samples = PrometheusText.parse("a 1 1745452800000\nb{x=\"1\"}\t2\t-5\nc 3\n");
        assertEquals(1745452800000L, samples.get(0).timestampMs());
        assertEquals(-5L, samples.get(1).timestampMs());
        assertNull(samples.get(2).timestampMs());
    }

    @Test
    void readsNonFiniteValues() throws Exception {
        List<Sample> samples = PrometheusText.parse("a NaN\nb +Inf\nc -Inf\nd Inf\n");
        assertTrue(Double.isNaN(samples.get(0).value()));
        assertEquals(Double.POSITIVE_INFINITY, samples.get(1).value());
        assertEquals(Double.NEGATIVE_INFINITY, samples.get(2).value());
        assertEquals(Double.POSITIVE_INFINITY, samples.get(3).value());
    }

    @Test
    void typesApplyToTheirFamilyOnly() throws Exception {
        List<Sample> samples = PrometheusText.parse("""
                untyped_before 1
                # TYPE g gauge
                g 1
                g_other 2
                # TYPE h histogram
                h_bucket{le="+Inf"} 3
                h_sum 4
                h_count 3
                # TYPE s summary
                s{quantile="0.5"} 1
                s_count 1
                # a plain comment
                # TYPE u untyped
                u 1
                """);
        assertEquals(List.of(Type.UNTYPED, Type.GAUGE, Type.UNTYPED, Type.HISTOGRAM, Type.HISTOGRAM, Type.HISTOGRAM,
                Type.SUMMARY, Type.SUMMARY, Type.UNTYPED), samples.stream().map(Sample::type).toList());
    }

    @Test
    void helpTextMayContainAnything() throws Exception {
        List<Sample> samples = PrometheusText.parse("# HELP g a \\\\ b \\n c \"{}\" ,\n# HELP g2\n# TYPE g gauge\ng 1\n");
        assertEquals(Type.GAUGE, samples.get(0).type());
    }

    @Test
    void toleratesBlankLinesCrLfAndNoFinalNewline() throws Exception {
        List<Sample> samples = PrometheusText.parse("\n# TYPE g gauge\r\n\r\n  g 1  \r\n\t\ng 2");
        assertEquals(List.of(1.0, 2.0), samples.stream().map(Sample::value).toList());
        assertEquals(List.of(), PrometheusText.parse(""));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "m{a=\"unterminated} 1",
        "m{a=\"x\" b=\"y\"} 1",
        "m{a=\"x\",a=\"y\"} 1",
        "m{a=\"bad \\t escape\"} 1",
        "m{1a=\"x\"} 1",
        "m{a=x} 1",
        "m",
        "m 1.0d",
        "m Infinityx",
        "m 0x1p3",
        "m 1 12.5",
        "m 1 2 3",
        "9m 1",
        "# TYPE m gauge\n# TYPE m counter\nm 1",
        "# TYPE m gaugeish\nm 1",
        "# TYPE m GAUGE\nm 1",
        "# TYPE 9m gauge",
    })
    void rejectsMalformedText(String text) {
        PrometheusText.FormatException e = assertThrows(PrometheusText.FormatException.class,
                () -> PrometheusText.parse(text));
        assertTrue(e.getMessage().startsWith("invalid Prometheus text at line "), e.getMessage());
    }

    @Test
    void errorsNameTheLine() {
        PrometheusText.FormatException e = assertThrows(PrometheusText.FormatException.class,
                () -> PrometheusText.parse("a 1\nb 2\nc{x=\"1\" 3\n"));
        assertTrue(e.getMessage().contains("line 3"), e.getMessage());
        assertTrue(e.getMessage().contains("c{x=\"1\" 3"), e.getMessage());
    }
}

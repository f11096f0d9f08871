package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;

class PrometheusRendererTest {

    private final PrometheusRenderer renderer = new PrometheusRenderer();

    @Test
    void groupsSamplesByNameAcrossContributorsInNameOrder() {
        MetricsContributor a = sink -> {
            sink.gauge("zrm_lag_ms", "Replication lag.", Map.of("slot", "a"), 12);
            sink.counter("zrm_changes_total", "Changes seen.", Map.of(), 3);
        };
        MetricsContributor b = sink -> sink.gauge("zrm_lag_ms", "Replication lag.", Map.of("slot", "b"), 1.5);
        assertEquals("""
                # HELP zrm_changes_total Changes seen.
                # TYPE zrm_changes_total counter
                zrm_changes_total 3
                # HELP zrm_lag_ms Replication lag.
                # TYPE zrm_lag_ms gauge
                zrm_lag_ms{slot="a"} 12
                zrm_lag_ms{slot="b"} 1.5
                """, renderer.render(List.of(a, b)));
    }

    @Test
    void escapesHelpAndLabelValuesAndKeepsLabelOrder() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("z", "quote\" back\\slash\nnewline");
        labels.put("a", "plain");
        String text = renderer.render(List.of(sink -> sink.gauge("zrm_x", "help with \\ and\nnewline", labels, 1)));
        assertEquals("""
                # HELP zrm_x help with \\\\ and\\nnewline
                # TYPE zrm_x gauge
                zrm_x{z="quote\\" back\\\\slash\\nnewline",a="plain"} 1
                """, text);
    }

    @Test
    void formatsSpecialAndLargeValues() {
        assertEquals("NaN", PrometheusRenderer.formatValue(Double.NaN));
        assertEquals("+Inf", PrometheusRenderer.formatValue(Double.POSITIVE_INFINITY));
        assertEquals("-Inf", PrometheusRenderer.formatValue(Double.NEGATIVE_INFINITY));
        assertEquals("-7", PrometheusRenderer.formatValue(-7));
        assertEquals("0.25", PrometheusRenderer.formatValue(0.25));
        assertEquals("1.0E20", PrometheusRenderer.formatValue(1e20));
    }

    @Test
    void invalidReportsThrowIntoTheContributor() {
        assertRejected(s -> s.gauge("zrm bad", "h", Map.of(), 1), "invalid metric name");
        assertRejected(s -> s.gauge("other_metric", "h", Map.of(), 1), "must start with zrm_");
        assertRejected(s -> s.counter("zrm_count", "h", Map.of(), 1), "must end in _total");
        assertRejected(s -> s.gauge("zrm_x", "h", Map.of("bad-label", "v"), 1), "invalid label name");
        assertRejected(s -> s.gauge("zrm_x", "h", Map.of("__reserved", "v"), 1), "invalid label name");
        assertRejected(s -> {
            s.gauge("zrm_x", "h", Map.of(), 1);
            s.counter("zrm_x", "h", Map.of(), 1);
        }, "must end in _total");
        assertRejected(s -> {
            s.gauge("zrm_x", "h", Map.of(), 1);
            s.gauge("zrm_x", "other help", Map.of("l", "v"), 1);
        }, "two help texts");
        assertRejected(s -> {
            s.gauge("zrm_x_total", "h", Map.of(), 1);
            s.counter("zrm_x_total", "h", Map.of("l", "v"), 1);
        }, "reported as counter and as gauge");
        assertRejected(s -> {
            s.gauge("zrm_x", "h", Map.of("l", "v"), 1);
            s.gauge("zrm_x", "h", Map.of("l", "v"), 2);
        }, "series reported twice");
    }

    @Test
    void failingContributorIsLeftOutEntirely() {
        MetricsContributor good = sink -> sink.gauge("zrm_good", "Good.", Map.of(), 1);
        MetricsContributor bad = sink -> {
            sink.gauge("zrm_partial", "Partial.", Map.of(), 1);
            throw new IllegalStateException("boom");
        };
        assertEquals("""
                # HELP zrm_good Good.
                # TYPE zrm_good gauge
                zrm_good 1
                """, renderer.render(List.of(bad, good)));
    }

    @Test
    void conflictWithAnotherContributorDropsOnlyTheLaterOne() {
        MetricsContributor first = sink -> sink.gauge("zrm_x", "X.", Map.of("l", "1"), 1);
        MetricsContributor clash = sink -> {
            sink.gauge("zrm_y", "Y.", Map.of(), 5);
            sink.gauge("zrm_x", "X.", Map.of("l", "1"), 2);
        };
        String text = renderer.render(List.of(first, clash));
        assertEquals("""
                # HELP zrm_x X.
                # TYPE zrm_x gauge
                zrm_x{l="1"} 1
                """, text);
    }

    @Test
    void endpointMetricsRenderValidly() {
        String text = renderer.render(List.of(new HttpMetrics()));
        assertTrue(text.contains("# TYPE zrm_changestreamer_http_connections gauge\n"), text);
        assertTrue(text.contains("zrm_changestreamer_http_connections{endpoint=\"snapshot\"} 0\n"), text);
        assertTrue(text.contains("# TYPE zrm_changestreamer_http_protocol_errors_total counter\n"), text);
    }

    private void assertRejected(MetricsContributor contributor, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> contributor.collect(sinkOf()));
        assertTrue(e.getMessage().contains(message), e.getMessage());
        assertEquals("", renderer.render(List.of(contributor)));
    }

    /** A sink as the renderer hands it out, captured through a contributor. */
    private MetricsSink sinkOf() {
        MetricsSink[] captured = new MetricsSink[1];
        renderer.render(List.of(sink -> captured[0] = sink));
        return captured[0];
    }
}

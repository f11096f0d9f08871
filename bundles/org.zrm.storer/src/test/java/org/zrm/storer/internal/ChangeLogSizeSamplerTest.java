package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogSize;
import org.zrm.status.MetricsSink;
import org.zrm.watermark.Watermarks;

class ChangeLogSizeSamplerTest {

    private static Map<String, Double> collect(ChangeLogSizeSampler.Reading r, long now) {
        Map<String, Double> got = new LinkedHashMap<>();
        ChangeLogSizeSampler.collect(r, now, new MetricsSink() {
            @Override
            public void gauge(String name, String help, Map<String, String> labels, double value) {
                got.put(name + labels, value);
            }

            @Override
            public void counter(String name, String help, Map<String, String> labels, double value) {
                got.put(name + labels, value);
            }
        });
        return got;
    }

    @Test
    void rowsOldestWatermarkAndTheWalSpanTheLogCovers() {
        String oldest = Watermarks.fromLsn("0/1000");
        String newest = Watermarks.fromLsn("0/3000");
        ChangeLogSizeSampler.Reading r = new ChangeLogSizeSampler.Reading(new ChangeLogSize(42, oldest, newest), 1_000, null);
        Map<String, Double> m = collect(r, 3_000);
        assertEquals(42.0, m.get("zrm_changelog_rows{}"));
        assertEquals((double) 0x2000, m.get("zrm_changelog_span_bytes{}"));
        assertEquals(1.0, m.get("zrm_changelog_oldest_watermark_info{watermark=" + oldest + "}"));
        assertEquals(2.0, m.get("zrm_changelog_size_sample_age_seconds{}"));
        assertEquals(0.0, m.get("zrm_changelog_size_sample_failing{}"));
        Map<String, Object> s = ChangeLogSizeSampler.status(r, 3_000);
        assertEquals(42L, s.get("rows"));
        assertEquals(oldest, s.get("oldestWatermark"));
        assertEquals(newest, s.get("newestWatermark"));
        assertEquals(0x2000L, s.get("spanBytes"));
        assertEquals(2_000L, s.get("sampleAgeMs"));
    }

    @Test
    void beforeTheFirstCountAndForAnEmptyLogNothingIsMadeUp() {
        Map<String, Double> none = collect(ChangeLogSizeSampler.Reading.NONE, 5);
        assertFalse(none.containsKey("zrm_changelog_rows{}"));
        assertEquals(0.0, none.get("zrm_changelog_size_sample_failing{}"));
        ChangeLogSizeSampler.Reading empty = new ChangeLogSizeSampler.Reading(new ChangeLogSize(0, null, null), 1, "boom");
        Map<String, Double> m = collect(empty, 5);
        assertEquals(0.0, m.get("zrm_changelog_rows{}"));
        assertFalse(m.containsKey("zrm_changelog_span_bytes{}"));
        assertEquals(1.0, m.get("zrm_changelog_size_sample_failing{}"));
        assertNull(ChangeLogSizeSampler.status(ChangeLogSizeSampler.Reading.NONE, 5).get("rows"));
    }

    @Test
    void theCountIntervalIsBounded() {
        assertEquals(5_000, ChangeLogSizeSampler.clampInterval(1));
        assertEquals(3_600_000, ChangeLogSizeSampler.clampInterval(Long.MAX_VALUE));
    }
}

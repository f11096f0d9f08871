package org.zrm.changesource.pg.internal.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SourceMetricsTest {

    @Test
    void retainedAndUnconfirmedWalAreMeasuredFromTheCurrentLsn() {
        SlotSample s = SlotSample.of("zero_0_a", true, "reserved", 1000L, "1/00000100", "1/00000000", "1/000000F0");
        assertEquals(0x100L, s.retainedWalBytes());
        assertEquals(0x10L, s.unconfirmedBytes());
        // Across the 4 GiB boundary of the LSN's two halves.
        assertEquals(0x20L, SlotSample.of("s", false, "reserved", null, "2/00000010", "1/FFFFFFF0", null).retainedWalBytes());
    }

    @Test
    void aPositionAheadOfTheSampledLsnCountsAsNothingRetainedAndMissingPositionsStayUnknown() {
        SlotSample ahead = SlotSample.of("s", true, "reserved", null, "0/100", "0/200", "0/300");
        assertEquals(0L, ahead.retainedWalBytes());
        assertEquals(0L, ahead.unconfirmedBytes());
        SlotSample lost = SlotSample.of("s", false, "lost", null, "0/100", null, null);
        assertNull(lost.retainedWalBytes());
        assertNull(lost.unconfirmedBytes());
    }

    @Test
    void metricsCarryEverySlotFigureAndOneHotWalStatus() {
        SlotReading reading = new SlotReading(10_000, "0/500", List.of(
                SlotSample.of("zero_0_a", false, "extended", 4096L, "0/500", "0/100", "0/400")), null);
        RecordingSink sink = new RecordingSink();
        SourceMetrics.collect(reading, new StreamActivity("zero_0_a", 7_000, 4_000, "0/400"), 12_500, sink);
        Map<String, Double> m = sink.samples;
        assertEquals(0.0, m.get("zrm_pg_slot_active{slot=zero_0_a}"));
        assertEquals(0x400, m.get("zrm_pg_slot_retained_wal_bytes{slot=zero_0_a}"));
        assertEquals(0x100, m.get("zrm_pg_slot_unconfirmed_wal_bytes{slot=zero_0_a}"));
        assertEquals(4096.0, m.get("zrm_pg_slot_safe_wal_size_bytes{slot=zero_0_a}"));
        assertEquals(1.0, m.get("zrm_pg_slot_wal_status{slot=zero_0_a,wal_status=extended}"));
        assertEquals(0.0, m.get("zrm_pg_slot_wal_status{slot=zero_0_a,wal_status=reserved}"));
        assertEquals(0.0, m.get("zrm_pg_slot_wal_status{slot=zero_0_a,wal_status=lost}"));
        assertEquals(1.0, m.get("zrm_pg_slots"));
        assertEquals(2.5, m.get("zrm_pg_slot_sample_age_seconds"));
        assertEquals(0.0, m.get("zrm_pg_slot_sample_failing"));
        assertEquals(5.5, m.get("zrm_pg_replication_last_message_age_seconds{slot=zero_0_a}"));
        assertEquals(8.5, m.get("zrm_pg_replication_last_ack_age_seconds{slot=zero_0_a}"));
    }

    @Test
    void unlimitedSafeWalSizeAndAStreamThatNeverAckedAreLeftOutRatherThanReportedAsZero() {
        SlotReading reading = new SlotReading(1, "0/10", List.of(SlotSample.of("s", true, "reserved", null, "0/10", "0/0", "0/0")),
                "org.postgresql.util.PSQLException: connection refused");
        RecordingSink sink = new RecordingSink();
        SourceMetrics.collect(reading, new StreamActivity("s", 5, 0, null), 1_001, sink);
        assertFalse(sink.samples.containsKey("zrm_pg_slot_safe_wal_size_bytes{slot=s}"));
        assertFalse(sink.samples.containsKey("zrm_pg_replication_last_ack_age_seconds{slot=s}"));
        assertEquals(1.0, sink.samples.get("zrm_pg_slot_sample_failing"));
        Map<String, Object> status = SourceMetrics.status(reading, null, 1_001);
        assertNull(status.get("stream"));
        @SuppressWarnings("unchecked")
        Map<String, Object> slots = (Map<String, Object>) status.get("slots");
        assertEquals("org.postgresql.util.PSQLException: connection refused", slots.get("error"));
        assertEquals(1000L, slots.get("ageMs"));
    }

    @Test
    void theSamplingIntervalIsBounded() {
        assertEquals(1_000, SlotSampler.clampInterval(0));
        assertEquals(1_000, SlotSampler.clampInterval(-5));
        assertEquals(10_000, SlotSampler.clampInterval(10_000));
        assertEquals(600_000, SlotSampler.clampInterval(Long.MAX_VALUE));
    }
}

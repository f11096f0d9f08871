package org.zrm.backup.vfs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.zrm.backup.vfs.internal.FakeSource.watermark;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ObservedWatermarksTest {

    @Test
    void theFirstObservationWins() {
        ObservedWatermarks observed = new ObservedWatermarks();
        observed.observe(watermark("04", 1_000));
        observed.observe(watermark("04", 5_000));

        assertEquals(Optional.of("04"), observed.eligible(1_000));
    }

    @Test
    void boundedByDroppingTheOldestWhichOnlyDelaysPurging() {
        ObservedWatermarks observed = new ObservedWatermarks();
        for (int i = 0; i <= ObservedWatermarks.MAX_PENDING; i++) {
            observed.observe(watermark(String.format("%06d", i), i));
        }

        assertEquals(ObservedWatermarks.MAX_PENDING, observed.pendingCount());
        assertEquals(Optional.empty(), observed.eligible(0), "000000 was dropped");
        assertEquals(Optional.of("000001"), observed.eligible(1));
    }
}

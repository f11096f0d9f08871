package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.zrm.status.StatusContributor;

class StatusCollectorTest {

    @Test
    void sectionsAreSortedAndAFailingContributorOnlyBreaksItsOwnSection() {
        StatusContributor ok = contributor("storer", Map.of("lastWatermark", "0a"));
        StatusContributor broken = new StatusContributor() {
            @Override
            public String section() {
                return "changesource.pg";
            }

            @Override
            public Map<String, Object> status() {
                throw new IllegalStateException("boom");
            }
        };
        StatusCollector collector = new StatusCollector(null, null, () -> "/c", () -> "/d", () -> List.of(ok, broken));
        Map<String, Object> sections = collector.sections();
        assertEquals(List.of("changesource.pg", "storer"), List.copyOf(sections.keySet()));
        assertEquals(Map.of("lastWatermark", "0a"), sections.get("storer"));
        assertTrue(sections.get("changesource.pg").toString().contains("boom"));
    }

    private static StatusContributor contributor(String name, Map<String, Object> status) {
        return new StatusContributor() {
            @Override
            public String section() {
                return name;
            }

            @Override
            public Map<String, Object> status() {
                return status;
            }
        };
    }
}

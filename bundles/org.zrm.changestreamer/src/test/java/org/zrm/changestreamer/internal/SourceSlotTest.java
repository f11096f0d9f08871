package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Constants;

/** What the streamer says about its change-source selection when nothing matches, and in /status. */
class SourceSlotTest {

    private static Map<String, Object> source(long id, String type) {
        return Map.of(Constants.SERVICE_ID, id, "zrm.changesource.type", type);
    }

    @Test
    void theMissingReasonNamesTheFilterTheRegisteredTypesAndTheFix() {
        ChangeStreamerComponent.SourceSlot slot = new ChangeStreamerComponent.SourceSlot(
                "(zrm.changesource.type=nonsense)", Duration.ofSeconds(10));
        assertTrue(slot.missingReason().contains("registered change-source types: none"), slot.missingReason());
        slot.registered(source(3, "pg"), true);
        slot.registered(source(4, "custom"), true);
        slot.registered(source(5, "pg"), true);
        String reason = slot.missingReason();
        assertTrue(reason.startsWith("no change source matches changeSource.target (zrm.changesource.type=nonsense)"),
                reason);
        assertTrue(reason.contains("registered change-source types: custom, pg."), reason);
        assertTrue(reason.contains("ZERO_UPSTREAM_TYPE"), reason);
        assertTrue(reason.contains("org.zrm.changesource.ChangeSource"), reason);
        slot.registered(source(4, "custom"), false);
        assertTrue(slot.missingReason().contains("types: pg."), slot.missingReason());
    }

    @Test
    void statusShowsTheTargetWhetherASourceIsSelectedAndTheTypes() {
        ChangeStreamerComponent.SourceSlot slot = new ChangeStreamerComponent.SourceSlot(
                "(zrm.changesource.type=pg)", Duration.ofSeconds(10));
        slot.registered(source(3, "pg"), true);
        assertEquals(Map.of("target", "(zrm.changesource.type=pg)", "selected", false, "registeredTypes", List.of("pg")),
                slot.status());
        FakeChangeSource s = new FakeChangeSource("01");
        slot.set(s);
        assertEquals(true, slot.status().get("selected"));
        slot.clear(new FakeChangeSource("02"));
        assertEquals(true, slot.status().get("selected"), "clearing another source keeps the selected one");
        slot.clear(s);
        assertEquals(false, slot.status().get("selected"));
    }
}

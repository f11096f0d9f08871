package org.zrm.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.operator.ChangeStreamerOperations;
import org.zrm.operator.OperationException;
import org.zrm.operator.PurgePreview;
import org.zrm.operator.SlotOperations;

class OperatorCommandsTest {
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Map<String, Object>> sections = new HashMap<>();
    private final List<String> closed = new ArrayList<>();
    private final List<String> dropped = new ArrayList<>();

    private final ChangeStreamerOperations streamer = new ChangeStreamerOperations() {
        @Override
        public void closeSubscriber(String id, String reason) throws OperationException {
            if (!id.equals("sub-1")) {
                throw new OperationException("no connected subscriber with id " + id);
            }
            closed.add(id + ":" + reason);
        }

        @Override
        public PurgePreview previewPurge() {
            return new PurgePreview("0c", null, 42, "0d");
        }
    };

    private final SlotOperations slotOps = new SlotOperations() {
        @Override
        public List<String> orphanSlots() {
            return List.of("zero_0_old");
        }

        @Override
        public void dropOrphanSlot(String slot) throws OperationException {
            if (!slot.equals("zero_0_old")) {
                throw new OperationException("not dropped: slot " + slot + " is active");
            }
            dropped.add(slot);
        }
    };

    private OperatorCommands commands(boolean running) {
        return new OperatorCommands(sections::get, () -> running ? streamer : null, () -> running ? slotOps : null,
                () -> Map.of("org.zrm.storer", Map.of("change.db", "postgresql://u:hunter2@h/db", "app.id", "zero",
                        "felix.fileinstall.filename", "file:/x"), "org.zrm.admin", Map.of("admin.password", "hunter2")));
    }

    private Map<String, Object> parse(String text) throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> m = json.readValue(text, Map.class);
        return m;
    }

    private void populate() {
        Map<String, Object> sub = new LinkedHashMap<>();
        sub.put("id", "sub-1");
        sub.put("mode", "serving");
        sub.put("protocolVersion", 6);
        sub.put("watermark", "0d");
        sub.put("acked", "0c");
        sub.put("catchingUp", false);
        sub.put("lagBytes", 2048L);
        sub.put("lagMs", 1500L);
        sub.put("lagMsAtLeast", false);
        sub.put("bufferedBytes", 10L);
        Map<String, Object> lag = new LinkedHashMap<>();
        lag.put("reports", 3L);
        lag.put("replicationMs", 20L);
        lag.put("storageMs", 5L);
        lag.put("endToEndMs", 40L);
        lag.put("lastEndToEndMs", 40L);
        lag.put("msSinceLastReport", 1000L);
        Map<String, Object> cs = new LinkedHashMap<>();
        cs.put("subscribers", List.of(sub));
        cs.put("upstreamLag", lag);
        sections.put(OperatorCommands.CHANGESTREAMER, cs);
        Map<String, Object> slot = new LinkedHashMap<>();
        slot.put("slot", "zero_0_old");
        slot.put("active", false);
        slot.put("walStatus", "reserved");
        slot.put("retainedWalBytes", 5L << 20);
        slot.put("unconfirmedWalBytes", 5L << 20);
        slot.put("safeWalSizeBytes", null);
        Map<String, Object> sample = new LinkedHashMap<>();
        sample.put("currentLsn", "0/5000000");
        sample.put("ageMs", 200L);
        sample.put("error", null);
        sample.put("slots", List.of(slot));
        Map<String, Object> source = new LinkedHashMap<>();
        source.put("slots", sample);
        source.put("stream", null);
        sections.put(OperatorCommands.CHANGESOURCE, source);
        Map<String, Object> log = new LinkedHashMap<>();
        log.put("rows", 100L);
        log.put("oldestWatermark", "0a");
        log.put("newestWatermark", "0d");
        log.put("spanBytes", 4096L);
        log.put("sampleAgeMs", 3000L);
        log.put("sampleError", null);
        sections.put(OperatorCommands.CHANGELOG, log);
    }

    @Test
    void everyCommandSaysWhenItsComponentIsNotRunning() throws Exception {
        OperatorCommands c = new OperatorCommands(sections::get, () -> null, () -> null, null);
        assertTrue(c.lag().startsWith("zrm:lag: the change streamer is not running"), c.lag());
        assertTrue(c.subscribers().contains("the change streamer is not running"));
        assertTrue(c.slots().contains("the Postgres change source is not running"));
        assertTrue(c.changelog().contains("the change log (org.zrm.storer) is not running"));
        assertTrue(c.config().contains("Configuration Admin is not running"));
        for (String out : List.of(c.lag("--json"), c.subscribers("--json"), c.slots("--json"), c.changelog("--json"),
                c.config("--json"), c.subscribers("close", "a", "b", "--json"), c.slots("drop", "x", "--json"))) {
            Map<String, Object> m = parse(out);
            assertEquals(false, m.get("running"), out);
            assertTrue(((String) m.get("error")).contains("is not running"), out);
        }
    }

    @Test
    void lagAndSubscribersAsTablesAndJson() throws Exception {
        populate();
        OperatorCommands c = commands(true);
        String table = c.lag();
        assertTrue(table.contains("replication (written upstream -> received)") && table.contains("20 ms"), table);
        assertTrue(table.contains("sub-1") && table.contains("1500 ms") && table.contains("2.0 KiB"), table);
        Map<String, Object> lag = parse(c.lag("--json"));
        assertEquals(20, ((Map<?, ?>) lag.get("upstreamLag")).get("replicationMs"));
        assertEquals(2048, ((Map<?, ?>) ((List<?>) lag.get("subscribers")).get(0)).get("lagBytes"));

        assertTrue(c.subscribers().contains("sub-1"));
        Map<String, Object> subs = parse(c.subscribers("--json"));
        assertEquals("0c", ((Map<?, ?>) ((List<?>) subs.get("subscribers")).get(0)).get("acked"));
    }

    @Test
    void closingASubscriberNeedsAReasonAndAnExistingId() throws Exception {
        populate();
        OperatorCommands c = commands(true);
        assertTrue(c.subscribers("close", "sub-1").contains("a reason is required"));
        assertEquals(List.of(), closed);
        assertEquals("closed subscriber sub-1: moving it to another node\n",
                c.subscribers("close", "sub-1", "moving", "it", "to", "another", "node"));
        assertEquals(List.of("sub-1:moving it to another node"), closed);
        Map<String, Object> missing = parse(c.subscribers("close", "nope", "why", "--json"));
        assertEquals("no connected subscriber with id nope", missing.get("error"));
    }

    @Test
    void slotsListWithWalRetainedAndDropOnlyAfterConfirmation() throws Exception {
        populate();
        OperatorCommands c = commands(true);
        String table = c.slots();
        assertTrue(table.contains("zero_0_old") && table.contains("5.0 MiB") && table.contains("unlimited"), table);
        Map<String, Object> list = parse(c.slots("--json"));
        Map<?, ?> slot = (Map<?, ?>) ((List<?>) list.get("slots")).get(0);
        assertEquals(true, slot.get("orphan"));
        assertEquals(5 << 20, slot.get("retainedWalBytes"));

        Map<String, Object> ask = parse(c.slots("drop", "zero_0_old", "--json"));
        assertEquals(false, ask.get("dropped"));
        assertTrue(((String) ask.get("confirm")).contains("--yes"));
        assertEquals(List.of(), dropped, "nothing is dropped without --yes");
        assertEquals(true, parse(c.slots("drop", "zero_0_old", "--yes", "--json")).get("dropped"));
        assertEquals(List.of("zero_0_old"), dropped);
        assertTrue(c.slots("drop", "zero_0_live").contains("is not an orphaned slot"));
        assertTrue(c.slots("drop", "zero_0_live", "--yes").contains("not dropped: slot zero_0_live is active"));
    }

    @Test
    void changelogShowsSizeAndTheNextPurgesDryRun() throws Exception {
        populate();
        OperatorCommands c = commands(true);
        String table = c.changelog();
        assertTrue(table.contains("oldest watermark") && table.contains("0a") && table.contains("42 rows"), table);
        Map<String, Object> m = parse(c.changelog("--json"));
        assertEquals(100, m.get("rows"));
        assertEquals(Map.of("bound", "0c", "rows", 42, "earliestAck", "0d"),
                withoutNulls((Map<?, ?>) m.get("nextPurge")));
        Map<String, Object> noStreamer = parse(commands(false).changelog("--json"));
        assertEquals(null, noStreamer.get("nextPurge"));
        assertTrue(((String) noStreamer.get("nextPurgeError")).contains("change streamer is not running"));
    }

    @Test
    void configIsMaskedAndHidesFileInstallBookkeeping() throws Exception {
        OperatorCommands c = commands(true);
        String table = c.config();
        assertFalse(table.contains("hunter2"), table);
        assertTrue(table.contains("postgresql://u:****@h/db"), table);
        assertFalse(table.contains("felix.fileinstall.filename"), table);
        Map<String, Object> m = parse(c.config("--json"));
        assertEquals("****", ((Map<?, ?>) m.get("org.zrm.admin")).get("admin.password"));
        assertEquals("zero", ((Map<?, ?>) m.get("org.zrm.storer")).get("app.id"));
    }

    private static Map<Object, Object> withoutNulls(Map<?, ?> m) {
        Map<Object, Object> out = new HashMap<>();
        m.forEach((k, v) -> {
            if (v != null) {
                out.put(k, v);
            }
        });
        return out;
    }
}

package org.zrm.shell.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.zrm.operator.ChangeStreamerOperations;
import org.zrm.operator.OperationException;
import org.zrm.operator.PurgePreview;
import org.zrm.operator.SlotOperations;
import org.zrm.secret.Secrets;

/**
 * The commands {@code zrm:lag}, {@code zrm:subscribers}, {@code zrm:slots}, {@code zrm:changelog}
 * and {@code zrm:config}. Each prints a table, or JSON with {@code --json}; each says plainly when
 * the component it needs is not running. The figures come from the status sections the components
 * contribute (the same as {@code /status}); the actions go through {@link org.zrm.operator}.
 *
 * <p>In JSON, a missing component gives {@code {"running": false, "error": "..."}} and a refused
 * or failed action {@code {"error": "..."}}, so a script can tell them from results.
 */
final class OperatorCommands {
    static final String CHANGESTREAMER = "changestreamer";
    static final String CHANGESOURCE = "changesource.pg";
    static final String CHANGELOG = "changelog";
    private static final Set<String> HIDDEN_PROPERTIES = Set.of("felix.fileinstall.filename", "service.bundleLocation",
            "service.pid", "service.factoryPid");

    private final Function<String, Map<String, Object>> sections;
    private final Supplier<ChangeStreamerOperations> streamer;
    private final Supplier<SlotOperations> slots;
    private final ConfigSource config;
    private final ObjectMapper json = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    /**
     * @param sections a status section by key, {@code null} if no component contributes it
     * @param streamer the change streamer's actions, {@code null} while it is not running
     * @param slots the change source's slot actions, {@code null} while it is not running
     * @param config the effective configurations, or {@code null} without Configuration Admin
     */
    OperatorCommands(Function<String, Map<String, Object>> sections, Supplier<ChangeStreamerOperations> streamer,
            Supplier<SlotOperations> slots, ConfigSource config) {
        this.sections = sections;
        this.streamer = streamer;
        this.slots = slots;
        this.config = config;
    }

    /** The parsed arguments: {@code --json}, {@code --yes}, and the rest in order. */
    record Args(boolean json, boolean yes, List<String> words) {
        static Args parse(String... args) {
            boolean json = false;
            boolean yes = false;
            List<String> words = new ArrayList<>();
            for (String a : args == null ? new String[0] : args) {
                switch (a) {
                    case "--json" -> json = true;
                    case "--yes", "-y" -> yes = true;
                    default -> words.add(a);
                }
            }
            return new Args(json, yes, words);
        }
    }

    // ------------------------------------------------------------------ zrm:lag

    String lag(String... argv) {
        Args a = Args.parse(argv);
        Map<String, Object> cs = sections.apply(CHANGESTREAMER);
        if (cs == null) {
            return notRunning(a, "lag", "the change streamer");
        }
        Map<String, Object> upstream = map(cs.get("upstreamLag"));
        Map<String, Object> source = sections.apply(CHANGESOURCE);
        Map<String, Object> stream = source == null ? null : map(source.get("stream"));
        List<Map<String, Object>> subs = new ArrayList<>();
        for (Map<String, Object> s : list(cs.get("subscribers"))) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("id", s.get("id"));
            e.put("mode", s.get("mode"));
            e.put("lagBytes", s.get("lagBytes"));
            e.put("lagMs", s.get("lagMs"));
            e.put("lagMsAtLeast", s.get("lagMsAtLeast"));
            subs.add(e);
        }
        if (a.json()) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("upstreamLag", upstream);
            out.put("stream", stream);
            out.put("subscribers", subs);
            return toJson(out);
        }
        StringBuilder out = new StringBuilder();
        Table t = new Table("MEASURE", "VALUE");
        t.row("replication (written upstream -> received)", ms(upstream.get("replicationMs")));
        t.row("storage (received -> durable in the change log)", ms(upstream.get("storageMs")));
        t.row("end to end, now (grows while a report is overdue)", ms(upstream.get("endToEndMs")));
        t.row("end to end, last measured", ms(upstream.get("lastEndToEndMs")));
        t.row("since the last lag report", ms(upstream.get("msSinceLastReport")));
        t.row("lag reports received", upstream.get("reports"));
        if (stream != null) {
            t.row("since the last message from Postgres (slot " + stream.get("slot") + ")", ms(stream.get("lastMessageAgeMs")));
            t.row("since the last ack to Postgres", ms(stream.get("lastAckAgeMs")));
        } else {
            t.row("replication connection", source == null ? "no Postgres change source" : "no stream open");
        }
        out.append(t.render()).append('\n');
        Table st = new Table("SUBSCRIBER", "MODE", "LAG", "LAG BYTES");
        for (Map<String, Object> s : subs) {
            st.row(s.get("id"), s.get("mode"), (Boolean.TRUE.equals(s.get("lagMsAtLeast")) ? ">= " : "") + ms(s.get("lagMs")),
                    bytes(s.get("lagBytes")));
        }
        out.append(st.isEmpty() ? "no subscribers\n" : st.render());
        return out.toString();
    }

    // ------------------------------------------------------------------ zrm:subscribers

    String subscribers(String... argv) {
        Args a = Args.parse(argv);
        if (!a.words().isEmpty() && a.words().get(0).equals("close")) {
            return closeSubscriber(a);
        }
        if (!a.words().isEmpty()) {
            return usage(a, "subscribers", "zrm:subscribers [--json] | zrm:subscribers close <id> <reason...>");
        }
        Map<String, Object> cs = sections.apply(CHANGESTREAMER);
        if (cs == null) {
            return notRunning(a, "subscribers", "the change streamer");
        }
        List<Map<String, Object>> subs = list(cs.get("subscribers"));
        if (a.json()) {
            return toJson(Map.of("subscribers", subs));
        }
        Table t = new Table("ID", "MODE", "PROTOCOL", "WATERMARK", "ACKED", "CATCHING UP", "LAG", "LAG BYTES", "BUFFERED");
        for (Map<String, Object> s : subs) {
            t.row(s.get("id"), s.get("mode"), s.get("protocolVersion"), s.get("watermark"), s.get("acked"),
                    s.get("catchingUp"), ms(s.get("lagMs")), bytes(s.get("lagBytes")), bytes(s.get("bufferedBytes")));
        }
        return t.isEmpty() ? "no subscribers\n" : t.render();
    }

    private String closeSubscriber(Args a) {
        if (a.words().size() < 3) {
            return usage(a, "subscribers", "zrm:subscribers close <id> <reason...> (a reason is required)");
        }
        ChangeStreamerOperations ops = streamer.get();
        if (ops == null) {
            return notRunning(a, "subscribers", "the change streamer");
        }
        String id = a.words().get(1);
        String reason = String.join(" ", a.words().subList(2, a.words().size()));
        try {
            ops.closeSubscriber(id, reason);
        } catch (OperationException e) {
            return failed(a, "subscribers", e);
        }
        return a.json() ? toJson(Map.of("closed", id, "reason", reason)) : "closed subscriber " + id + ": " + reason + "\n";
    }

    // ------------------------------------------------------------------ zrm:slots

    String slots(String... argv) {
        Args a = Args.parse(argv);
        if (!a.words().isEmpty() && a.words().get(0).equals("drop")) {
            return dropSlot(a);
        }
        if (!a.words().isEmpty()) {
            return usage(a, "slots", "zrm:slots [--json] | zrm:slots drop <slot> [--yes]");
        }
        Map<String, Object> source = sections.apply(CHANGESOURCE);
        if (source == null) {
            return notRunning(a, "slots", "the Postgres change source");
        }
        Map<String, Object> sample = map(source.get("slots"));
        List<String> orphans = null;
        String orphanError = null;
        SlotOperations ops = slots.get();
        if (ops != null) {
            try {
                orphans = ops.orphanSlots();
            } catch (OperationException e) {
                orphanError = e.getMessage();
            }
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Map<String, Object> s : list(sample.get("slots"))) {
            Map<String, Object> e = new LinkedHashMap<>(s);
            e.put("orphan", orphans == null ? null : orphans.contains((String) s.get("slot")));
            rows.add(e);
        }
        if (a.json()) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("currentLsn", sample.get("currentLsn"));
            out.put("sampleAgeMs", sample.get("ageMs"));
            out.put("sampleError", sample.get("error"));
            out.put("orphanError", orphanError);
            out.put("slots", rows);
            return toJson(out);
        }
        Table t = new Table("SLOT", "ACTIVE", "WAL STATUS", "WAL RETAINED", "UNCONFIRMED", "SAFE WAL SIZE", "ORPHAN");
        for (Map<String, Object> s : rows) {
            t.row(s.get("slot"), s.get("active"), s.get("walStatus"), bytes(s.get("retainedWalBytes")),
                    bytes(s.get("unconfirmedWalBytes")), s.get("safeWalSizeBytes") == null ? "unlimited"
                            : bytes(s.get("safeWalSizeBytes")), s.get("orphan"));
        }
        StringBuilder out = new StringBuilder(t.isEmpty() ? "no replication slots of this shard\n" : t.render());
        out.append("sampled ").append(ms(sample.get("ageMs"))).append(" ago at WAL position ")
                .append(sample.get("currentLsn")).append('\n');
        if (sample.get("error") != null) {
            out.append("last sampling failed: ").append(sample.get("error")).append('\n');
        }
        if (orphanError != null) {
            out.append("cannot tell orphans: ").append(orphanError).append('\n');
        }
        return out.toString();
    }

    private String dropSlot(Args a) {
        if (a.words().size() != 2) {
            return usage(a, "slots", "zrm:slots drop <slot> [--yes]");
        }
        SlotOperations ops = slots.get();
        if (ops == null) {
            return notRunning(a, "slots", "the Postgres change source");
        }
        String slot = a.words().get(1);
        try {
            if (!a.yes()) {
                // The confirmation step: say what would go, change nothing.
                if (!ops.orphanSlots().contains(slot)) {
                    throw new OperationException("slot " + slot + " is not an orphaned slot of this shard (it is"
                            + " active, claimed by a replica, or not this shard's); nothing to drop");
                }
                String confirm = "slot " + slot + " is inactive and claimed by no replica; run `zrm:slots drop " + slot
                        + " --yes` to drop it and release the WAL it retains";
                return a.json() ? toJson(mapOf("slot", slot, "dropped", false, "confirm", confirm)) : confirm + "\n";
            }
            ops.dropOrphanSlot(slot);
        } catch (OperationException e) {
            return failed(a, "slots", e);
        }
        return a.json() ? toJson(mapOf("slot", slot, "dropped", true)) : "dropped replication slot " + slot + "\n";
    }

    // ------------------------------------------------------------------ zrm:changelog

    String changelog(String... argv) {
        Args a = Args.parse(argv);
        if (!a.words().isEmpty()) {
            return usage(a, "changelog", "zrm:changelog [--json]");
        }
        Map<String, Object> log = sections.apply(CHANGELOG);
        if (log == null) {
            return notRunning(a, "changelog", "the change log (org.zrm.storer)");
        }
        ChangeStreamerOperations ops = streamer.get();
        PurgePreview preview = null;
        String previewError = null;
        if (ops == null) {
            previewError = "the change streamer is not running: no purge is scheduled";
        } else {
            try {
                preview = ops.previewPurge();
            } catch (OperationException e) {
                previewError = e.getMessage();
            }
        }
        if (a.json()) {
            Map<String, Object> out = new LinkedHashMap<>(log);
            if (preview == null) {
                out.put("nextPurge", null);
            } else {
                out.put("nextPurge", mapOf("bound", preview.bound(), "blockedBy", preview.blockedBy(),
                        "rows", preview.rows(), "earliestAck", preview.earliestAck()));
            }
            out.put("nextPurgeError", previewError);
            return toJson(out);
        }
        Table t = new Table("CHANGE LOG", "VALUE");
        t.row("rows", log.get("rows"));
        t.row("oldest watermark", log.get("oldestWatermark"));
        t.row("newest watermark", log.get("newestWatermark"));
        t.row("WAL span", bytes(log.get("spanBytes")));
        t.row("counted", ms(log.get("sampleAgeMs")) + " ago");
        if (preview != null) {
            t.row("next purge: below", preview.bound());
            t.row("next purge: would delete", preview.blockedBy() == null ? preview.rows() + " rows"
                    : "nothing: " + preview.blockedBy());
            t.row("earliest subscriber ack", preview.earliestAck());
        } else {
            t.row("next purge", previewError);
        }
        String out = t.render();
        return log.get("sampleError") == null ? out : out + "last count failed: " + log.get("sampleError") + "\n";
    }

    // ------------------------------------------------------------------ zrm:config

    String config(String... argv) {
        Args a = Args.parse(argv);
        if (!a.words().isEmpty()) {
            return usage(a, "config", "zrm:config [--json]");
        }
        if (config == null) {
            return notRunning(a, "config", "Configuration Admin");
        }
        Map<String, Map<String, Object>> all;
        try {
            all = config.zrmConfigurations();
        } catch (Exception e) {
            return failed(a, "config", new OperationException("cannot read the configuration: " + e, e));
        }
        Map<String, Map<String, String>> masked = new TreeMap<>();
        all.forEach((pid, props) -> {
            Map<String, String> shown = new TreeMap<>();
            props.forEach((k, v) -> {
                if (!HIDDEN_PROPERTIES.contains(k)) {
                    shown.put(k, Secrets.mask(k, v));
                }
            });
            masked.put(pid, shown);
        });
        if (a.json()) {
            return toJson(masked);
        }
        Table t = new Table("PID", "PROPERTY", "VALUE");
        masked.forEach((pid, props) -> props.forEach((k, v) -> t.row(pid, k, v)));
        return t.isEmpty() ? "no org.zrm.* configuration: every component uses its defaults\n" : t.render();
    }

    // ------------------------------------------------------------------ helpers

    private String notRunning(Args a, String command, String component) {
        String message = component + " is not running (no " + component + " service in this runtime; see zrm:status)";
        return a.json() ? toJson(mapOf("running", false, "error", message)) : "zrm:" + command + ": " + message + "\n";
    }

    private String failed(Args a, String command, OperationException e) {
        return a.json() ? toJson(mapOf("error", e.getMessage())) : "zrm:" + command + ": " + e.getMessage() + "\n";
    }

    private String usage(Args a, String command, String usage) {
        return a.json() ? toJson(mapOf("error", "usage: " + usage)) : "zrm:" + command + ": usage: " + usage + "\n";
    }

    private String toJson(Object value) {
        try {
            return json.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            // Only JSON-compatible values reach here (status sections are); this is a programming error.
            throw new IllegalStateException("cannot render JSON: " + e.getMessage(), e);
        }
    }

    private static Map<String, Object> mapOf(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object o) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (o instanceof List<?> l) {
            for (Object e : l) {
                if (e instanceof Map<?, ?> m) {
                    out.add((Map<String, Object>) m);
                }
            }
        }
        return out;
    }

    static String ms(Object value) {
        if (!(value instanceof Number n)) {
            return "-";
        }
        long ms = n.longValue();
        return ms < 10_000 ? ms + " ms" : String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }

    static String bytes(Object value) {
        if (!(value instanceof Number n)) {
            return "-";
        }
        long b = n.longValue();
        if (b < 1024) {
            return b + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = b;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}

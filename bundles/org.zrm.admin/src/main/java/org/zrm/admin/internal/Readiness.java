package org.zrm.admin.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@code GET /readyz} decides: the node may take traffic only when the change streamer is
 * streaming (so the change log and the replica's lineage are initialized), the replica file is
 * initialized and kept up to date, and the backup is either not configured or has made its first
 * snapshot, so a node restoring it would find one (zero 1.10 waits for a usable backup before it
 * reports ready).
 *
 * <p>Convention: a status section that can be ready or not says so in its {@code "ready"} entry
 * ({@code changestreamer}, {@code replicator}, {@code litestream}). The change streamer's section
 * is required; the others count when their bundle runs. An unhealthy runtime is never ready.
 */
final class Readiness {

    /** Sections that must be present and ready. */
    static final List<String> REQUIRED = List.of("changestreamer");

    private Readiness() {
    }

    /** @return why the node is not ready; empty when it is */
    static List<String> notReady(RuntimeStatus status) {
        List<String> why = new ArrayList<>();
        if (!status.healthy()) {
            why.add("the runtime is unhealthy" + (status.unhealthySections().isEmpty() ? ""
                    : " (" + String.join(", ", status.unhealthySections()) + ")"));
        }
        for (String required : REQUIRED) {
            if (!status.sections().containsKey(required)) {
                why.add(required + " is not running");
            }
        }
        status.sections().forEach((name, section) -> {
            if (section instanceof Map<?, ?> m && m.containsKey("ready") && !Boolean.TRUE.equals(m.get("ready"))) {
                why.add(name + " is not ready");
            }
        });
        return why;
    }
}

package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReadinessTest {

    private static RuntimeStatus status(Map<String, Object> sections, List<String> unhealthy) {
        // As StatusCollector builds them: sections sorted by name.
        return new RuntimeStatus("/conf", "/deploy", List.of(), List.of(), new java.util.TreeMap<>(sections), unhealthy);
    }

    private static final Map<String, Object> STREAMING = Map.of("state", "STREAMING", "ready", true);
    private static final Map<String, Object> REPLICATING = Map.of("phase", "REPLICATING", "ready", true);

    @Test
    void readyWhenStreamingReplicatingAndNoBackup() {
        assertEquals(List.of(), Readiness.notReady(status(Map.of("changestreamer", STREAMING, "replicator",
                REPLICATING, "litestream", Map.of("state", "DISABLED", "ready", true)), List.of())));
    }

    @Test
    void notReadyUntilTheFirstSnapshot() {
        assertEquals(List.of("litestream is not ready"), Readiness.notReady(status(Map.of("changestreamer",
                STREAMING, "replicator", REPLICATING, "litestream", Map.of("state", "RUNNING", "ready", false)),
                List.of())));
    }

    @Test
    void notReadyWhileTheReplicaIsInitializingOrTheStreamIsDown() {
        assertEquals(List.of("changestreamer is not ready", "replicator is not ready"),
                Readiness.notReady(status(Map.of("changestreamer", Map.of("state", "STARTING", "ready", false),
                        "replicator", Map.of("phase", "WAITING_FOR_REPLICA", "ready", false)), List.of())));
        assertEquals(List.of("changestreamer is not running"), Readiness.notReady(status(Map.of(), List.of())));
    }

    @Test
    void neverReadyWhenUnhealthy() {
        assertEquals(List.of("the runtime is unhealthy (changestreamer)", "changestreamer is not ready"),
                Readiness.notReady(status(Map.of("changestreamer", Map.of("state", "STOPPED", "ready", false)),
                        List.of("changestreamer"))));
    }
}

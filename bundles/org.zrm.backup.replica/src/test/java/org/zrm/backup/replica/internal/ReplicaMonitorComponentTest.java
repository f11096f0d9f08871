package org.zrm.backup.replica.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.backup.BackupMonitor;
import org.zrm.testing.backup.RecordingMonitorContext;

class ReplicaMonitorComponentTest {

    @TempDir
    Path dir;

    /** A config instance as DS would build it: defaults plus the given properties (by method name). */
    static ReplicaMonitorConfig config(Map<String, Object> values) {
        return (ReplicaMonitorConfig) Proxy.newProxyInstance(ReplicaMonitorConfig.class.getClassLoader(),
                new Class<?>[] {ReplicaMonitorConfig.class}, (proxy, method, args) -> {
                    if (values.containsKey(method.getName())) {
                        return values.get(method.getName());
                    }
                    Object dflt = method.getDefaultValue();
                    if (dflt == null) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    return dflt;
                });
    }

    @Test
    void defaultsFollowZeroCache() {
        ReplicaMonitorSettings s = ReplicaMonitorSettings.from(config(Map.of()));
        assertEquals(Path.of("zero.db").toAbsolutePath(), s.replicaFile());
        assertEquals(Duration.ofSeconds(30), s.initialDelay());
        assertEquals(Duration.ofSeconds(30), s.interval());
    }

    @Test
    void invalidConfigurationIsRejectedNamingTheProperty() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ReplicaMonitorComponent(config(Map.of("replica_monitor_intervalMs", 0L))));
        assertTrue(e.getMessage().contains("replica.monitor.intervalMs") && e.getMessage().contains("got 0"),
                e.getMessage());

        e = assertThrows(IllegalArgumentException.class,
                () -> new ReplicaMonitorComponent(config(Map.of("replica_monitor_initialDelayMs", -5L))));
        assertTrue(e.getMessage().contains("replica.monitor.initialDelayMs") && e.getMessage().contains("-5"),
                e.getMessage());

        e = assertThrows(IllegalArgumentException.class,
                () -> new ReplicaMonitorComponent(config(Map.of("replica_file", "  "))));
        assertTrue(e.getMessage().contains("replica.file"), e.getMessage());

        e = assertThrows(IllegalArgumentException.class,
                () -> new ReplicaMonitorComponent(config(Map.of("replica_file", "bad\0name"))));
        assertTrue(e.getMessage().contains("replica.file"), e.getMessage());
    }

    @Test
    void activationStartsNoWorkAndDelegates() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "0a");
        ReplicaMonitorComponent component = new ReplicaMonitorComponent(config(Map.of("replica_file", file.toString(),
                "replica_monitor_initialDelayMs", 3_600_000L)));
        try {
            assertEquals(BackupMonitor.STRATEGY_REPLICA, component.strategy());
            assertEquals(Optional.empty(), component.backupURL());
            assertEquals(false, component.status().get("running"), "activation alone starts nothing");
            assertEquals(file.toString(), component.status().get("replicaFile"));

            RecordingMonitorContext ctx = new RecordingMonitorContext(Duration.ofSeconds(30));
            component.start(ctx);
            assertEquals(true, component.status().get("running"));
            component.stop();
            assertEquals(false, component.status().get("running"));
            assertEquals(java.util.List.of(), ctx.scheduled(), "stopped long before the first check");
        } finally {
            component.deactivate();
        }
    }

    @Test
    void deactivateStopsARunningMonitor() throws Exception {
        Path file = dir.resolve("missing.db");
        ReplicaMonitorComponent component = new ReplicaMonitorComponent(config(Map.of("replica_file", file.toString())));
        component.start(new RecordingMonitorContext(Duration.ofSeconds(30)));
        component.deactivate();
        assertEquals(false, component.status().get("running"));
        assertFalse(Files.exists(file));
    }
}

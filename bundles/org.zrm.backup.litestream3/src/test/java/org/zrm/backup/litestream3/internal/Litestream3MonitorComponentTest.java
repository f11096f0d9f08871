package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.zrm.backup.BackupMonitor;

class Litestream3MonitorComponentTest {

    /** A config instance as DS builds it: defaults plus the given values (keyed by method name). */
    static Litestream3MonitorConfig config(Map<String, Object> values) {
        return (Litestream3MonitorConfig) Proxy.newProxyInstance(Litestream3MonitorConfig.class.getClassLoader(),
                new Class<?>[] {Litestream3MonitorConfig.class}, (proxy, method, args) -> {
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

    static Map<String, Object> configured() {
        Map<String, Object> m = new HashMap<>();
        m.put("litestream_backupURL", "s3://bucket/path");
        m.put("litestream_executable", "/usr/local/bin/litestream");
        return m;
    }

    static IllegalArgumentException invalid(Map<String, Object> values) {
        return assertThrows(IllegalArgumentException.class, () -> new Litestream3MonitorComponent(config(values)));
    }

    @Test
    void registersAsTheLitestream3Strategy() {
        Litestream3MonitorComponent component = new Litestream3MonitorComponent(config(configured()));
        assertEquals(BackupMonitor.STRATEGY_LITESTREAM3, component.strategy());
        assertEquals(Optional.of("s3://bucket/path"), component.backupURL());
        assertEquals("org.zrm.backup.litestream3", Litestream3MonitorComponent.PID);
    }

    @Test
    void defaultsFollowZeroCache() {
        Litestream3Monitor m = Litestream3MonitorComponent.create(config(configured()), Map.of(), Clock.systemUTC());
        Map<String, Object> status = m.status();
        assertEquals("http://127.0.0.1:4850/metrics", status.get("metricsURL"));
        assertEquals(false, status.get("running"));
        Litestream3MonitorConfig d = config(Map.of());
        assertEquals(60_000L, d.litestream_checkIntervalMs());
        assertEquals(900_000L, d.litestream_wedgedShutdownGraceMs());
        assertEquals(30_000L, d.litestream_listBackupTimeoutMs());
        assertEquals(4850, d.litestream_port());
        assertEquals("zero.db", d.replica_file());
    }

    @Test
    void theMetricsURLFollowsThePortOrTheOverride() {
        Map<String, Object> v = configured();
        v.put("litestream_port", 5000);
        assertEquals("http://127.0.0.1:5000/metrics", Litestream3MonitorComponent.create(config(v), Map.of(),
                Clock.systemUTC()).status().get("metricsURL"));
        v.put("litestream_metricsURL", " https://metrics.internal:9000/m ");
        assertEquals("https://metrics.internal:9000/m", Litestream3MonitorComponent.create(config(v), Map.of(),
                Clock.systemUTC()).status().get("metricsURL"));
    }

    @Test
    void anEmptyBackupURLRegistersAnUnconfiguredMonitor() {
        Litestream3MonitorComponent component = new Litestream3MonitorComponent(config(Map.of()));
        assertEquals(Optional.empty(), component.backupURL());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> component.start(new org.zrm.testing.backup.RecordingMonitorContext(java.time.Duration.ofSeconds(30))));
        assertTrue(e.getMessage().contains("not configured"), e.getMessage());
        component.deactivate();
    }

    @Test
    void rejectsAPortOutOfRange() {
        for (int port : new int[] {0, -1, 65536}) {
            Map<String, Object> v = configured();
            v.put("litestream_port", port);
            assertEquals("litestream.port must be within 1..65535, got " + port, invalid(v).getMessage());
        }
    }

    @Test
    void rejectsANonHttpMetricsURL() {
        for (String url : new String[] {"ftp://127.0.0.1/metrics", "127.0.0.1:4850/metrics", "http:///metrics",
                "file:/tmp/metrics", "http://bad host/"}) {
            Map<String, Object> v = configured();
            v.put("litestream_metricsURL", url);
            String message = invalid(v).getMessage();
            assertTrue(message.startsWith("litestream.metricsURL must be an http:// or https:// URL"), message);
        }
    }

    @Test
    void requiresTheExecutableWhenABackupURLIsSet() {
        Map<String, Object> v = configured();
        v.put("litestream_executable", "  ");
        assertTrue(invalid(v).getMessage().startsWith("litestream.executable (ZERO_LITESTREAM_EXECUTABLE) is required"));
    }

    @Test
    void rejectsNonPositiveTimings() {
        for (String name : new String[] {"litestream_checkIntervalMs", "litestream_wedgedShutdownGraceMs",
                "litestream_listBackupTimeoutMs", "litestream_metricsTimeoutMs"}) {
            Map<String, Object> v = configured();
            v.put(name, 0L);
            String property = name.replace('_', '.');
            assertEquals(property + " must be positive, got 0", invalid(v).getMessage());
        }
    }

    @Test
    void rejectsAnEmptyReplicaFile() {
        Map<String, Object> v = configured();
        v.put("replica_file", "");
        assertEquals("replica.file must not be empty", invalid(v).getMessage());
    }
}

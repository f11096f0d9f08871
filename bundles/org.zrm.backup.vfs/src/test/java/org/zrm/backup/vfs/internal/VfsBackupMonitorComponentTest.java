package org.zrm.backup.vfs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.zrm.testing.backup.RecordingMonitorContext;

/** Configuration handling of PID {@code org.zrm.backup.vfs}, and the reader-command seam end to end. */
class VfsBackupMonitorComponentTest {

    /** A config with the OCD's defaults, overridden by {@code values} (keyed by method name). */
    static VfsBackupMonitorConfig config(Map<String, Object> values) {
        return (VfsBackupMonitorConfig) Proxy.newProxyInstance(VfsBackupMonitorConfig.class.getClassLoader(),
                new Class<?>[] {VfsBackupMonitorConfig.class},
                (proxy, method, args) -> values.containsKey(method.getName()) ? values.get(method.getName())
                        : method.getDefaultValue());
    }

    private static Path fakeReader() throws URISyntaxException {
        return Path.of(VfsBackupMonitorComponentTest.class
                .getResource("/org/zrm/backup/vfs/internal/process/fake-reader.sh").toURI());
    }

    @Test
    void registersEvenWithoutABackupUrl() {
        VfsMonitor monitor = VfsBackupMonitorComponent.create(config(Map.of()), null);
        assertEquals(Optional.empty(), monitor.backupURL());
        assertEquals("vfs", monitor.strategy());
    }

    @Test
    void rejectsInvalidConfiguration() {
        assertEquals("litestream.vfsProbeIntervalMs must be positive, got 0", assertThrows(
                IllegalArgumentException.class, () -> VfsBackupMonitorComponent.create(
                        config(Map.of("litestream_vfsProbeIntervalMs", 0L)), null)).getMessage());
        assertEquals("litestream.vfsProbeTimeoutMs must be positive, got -1", assertThrows(
                IllegalArgumentException.class, () -> VfsBackupMonitorComponent.create(
                        config(Map.of("litestream_vfsProbeTimeoutMs", -1L)), null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> VfsBackupMonitorComponent.create(
                config(Map.of("litestream_vfsReaderCommand", "sh 'unterminated")), null));
        assertEquals("litestream.backupURL is not a URL: bucket/db", assertThrows(IllegalArgumentException.class,
                () -> VfsBackupMonitorComponent.create(config(Map.of("litestream_backupURL", "bucket/db",
                        "litestream_region", "us-east-2")), null)).getMessage());
    }

    @Test
    void theReaderCommandReplacesTheChild() throws Exception {
        VfsMonitor monitor = VfsBackupMonitorComponent.create(config(Map.of(
                "litestream_backupURL", "s3://bucket/db",
                "litestream_vfsReaderCommand", "/bin/sh '" + fakeReader() + "' respond",
                "litestream_vfsProbeTimeoutMs", 20_000L)), null);
        RecordingMonitorContext ctx = new RecordingMonitorContext(Duration.ofSeconds(30));
        monitor.start(ctx);
        try {
            monitor.check(); // the fake reports watermark 01 observed at 1970-01-01T00:00:01Z: long aged
            assertEquals(List.of("01"), ctx.scheduled());
            assertEquals(Duration.ofMillis(877), ctx.lastBackupLag(), "observed at 1000 ms, written at 123 ms");
        } finally {
            monitor.stop();
        }
    }
}

package org.zrm.backup.vfs.internal;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.ForwardingBackupMonitor;
import org.zrm.backup.vfs.internal.process.ReaderSetup;

/**
 * Registers the {@link VfsMonitor} for PID {@code org.zrm.backup.vfs} as a {@link BackupMonitor}
 * with {@code zrm.backup.strategy=vfs}, whenever the PID is configured, even with an empty
 * {@code litestream.backupURL} (the coordinator then refuses to start it and says why).
 * Activation only validates the configuration; the reader child is started by the first check.
 */
@Component(service = BackupMonitor.class, configurationPid = "org.zrm.backup.vfs",
        configurationPolicy = ConfigurationPolicy.REQUIRE,
        property = BackupMonitor.STRATEGY + "=" + BackupMonitor.STRATEGY_VFS)
@Designate(ocd = VfsBackupMonitorConfig.class)
public final class VfsBackupMonitorComponent extends ForwardingBackupMonitor {

    private final VfsMonitor monitor;

    /**
     * @throws IllegalArgumentException on invalid configuration (non-positive interval or timeout,
     *     an unterminated quote in the reader command, a backup URL that is no URL while an
     *     endpoint or region is set)
     */
    @Activate
    public VfsBackupMonitorComponent(VfsBackupMonitorConfig config, BundleContext context) {
        this.monitor = create(config, context);
    }

    static VfsMonitor create(VfsBackupMonitorConfig config, BundleContext context) {
        long interval = positive(config.litestream_vfsProbeIntervalMs(), "litestream.vfsProbeIntervalMs");
        long timeout = positive(config.litestream_vfsProbeTimeoutMs(), "litestream.vfsProbeTimeoutMs");
        String backupURL = trim(config.litestream_backupURL());
        ReaderSetup setup = new ReaderSetup(backupURL, trim(config.litestream_endpoint()),
                trim(config.litestream_region()), trim(config.litestream_vfsExtensionPath()),
                trim(config.litestream_logLevel()), trim(config.litestream_vfsLogFile()),
                trim(config.litestream_vfsReaderCommand()), Duration.ofMillis(timeout),
                Path.of(System.getProperty("java.home")), context);
        return new VfsMonitor(backupURL, setup::newSource, Duration.ofMillis(interval), Clock.systemUTC());
    }

    private static long positive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
        return value;
    }

    private static String trim(String value) {
        return value == null ? "" : value.trim();
    }

    @Deactivate
    void deactivate() {
        monitor.stop(); // normally the coordinator has stopped it already
    }

    @Override
    protected BackupMonitor delegate() {
        return monitor;
    }
}

package org.zrm.backup.replica.internal;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.ForwardingBackupMonitor;
import org.zrm.config.NodeIdentity;

/**
 * Registers the {@link ReplicaMonitor} as the {@code replica} backup strategy while PID
 * {@code org.zrm.backup.replica} is configured. Activation only validates the configuration; the
 * coordinator in the change streamer decides when the monitor runs ({@link #start}) and stops it
 * on swap or deactivation.
 */
@Component(service = BackupMonitor.class, configurationPid = {NodeIdentity.PID, ReplicaMonitorComponent.PID},
        configurationPolicy = ConfigurationPolicy.REQUIRE,
        property = BackupMonitor.STRATEGY + "=" + BackupMonitor.STRATEGY_REPLICA)
public final class ReplicaMonitorComponent extends ForwardingBackupMonitor {

    static final String PID = "org.zrm.backup.replica";

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaMonitorComponent.class);

    private final ReplicaMonitor monitor;

    /** @throws IllegalArgumentException if the configuration is invalid (the message names the property) */
    @Activate
    public ReplicaMonitorComponent(ReplicaMonitorConfig config) {
        ReplicaMonitorSettings settings = ReplicaMonitorSettings.from(config);
        monitor = new ReplicaMonitor(settings.replicaFile(), settings.initialDelay(), settings.interval());
        LOG.info("replica-monitor: available as strategy replica for {} (first check {} ms after start, then every {}"
                + " ms)", settings.replicaFile(), settings.initialDelay().toMillis(), settings.interval().toMillis());
    }

    @Deactivate
    void deactivate() {
        monitor.stop();
    }

    @Override
    protected BackupMonitor delegate() {
        return monitor;
    }
}

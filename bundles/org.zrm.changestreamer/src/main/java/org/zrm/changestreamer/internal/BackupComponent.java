package org.zrm.changestreamer.internal;

import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Locale;
import java.util.Map;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitor;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * The backup-monitor coordinator's operator face (PID {@value #PID}): applies the {@code strategy}
 * setting live through {@code @Modified} (a swap, never a restart of the streamer), tracks every
 * registered {@link BackupMonitor} dynamically, contributes the {@code backup} status section and
 * metrics, and provides the Gogo command {@code zrm:backup [strategy]}, which writes the strategy
 * through Configuration Admin (and so, under FileInstall, into {@code org.zrm.backup.cfg}).
 *
 * <p>An invalid configuration is rejected before it gets here: {@link BackupConfigValidator} holds
 * the rules, and the admin bundle's configuration plugin logs the one ERROR line, shows the
 * rejection on {@code /status} and hands this component its last good configuration. Without the
 * admin bundle (a framework assembled by hand), a bad value still keeps the previous selection (at
 * activation: the default, {@code auto}) and is logged at ERROR, rather than failing the component
 * and with it the status section an operator needs to see what is wrong.
 */
@Component(service = {StatusContributor.class, MetricsContributor.class, BackupComponent.class},
        configurationPid = BackupComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true,
        property = {"osgi.command.scope=zrm", "osgi.command.function=backup"})
@Designate(ocd = BackupConfig.class)
public final class BackupComponent implements StatusContributor, MetricsContributor {

    static final String PID = "org.zrm.backup";
    private static final Logger LOG = LoggerFactory.getLogger(BackupComponent.class);

    private final BackupCoordinator coordinator;
    private final ConfigurationAdmin configAdmin;

    @Activate
    public BackupComponent(BackupConfig config, @Reference BackupControl control,
            @Reference ConfigurationAdmin configAdmin) {
        this.coordinator = control.coordinator();
        this.configAdmin = configAdmin;
        apply(config);
    }

    @Modified
    void modified(BackupConfig config) {
        apply(config);
    }

    private void apply(BackupConfig config) {
        try {
            coordinator.select(BackupSettings.of(config));
        } catch (IllegalArgumentException e) {
            LOG.error("backup: invalid configuration of {}: {}; keeping the current selection", PID, e.getMessage());
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addMonitor(BackupMonitor monitor) {
        coordinator.monitorAdded(monitor);
    }

    void removeMonitor(BackupMonitor monitor) {
        coordinator.monitorRemoved(monitor);
    }

    @Override
    public String section() {
        return "backup";
    }

    @Override
    public Map<String, Object> status() {
        return coordinator.status();
    }

    @Override
    public boolean healthy() {
        return coordinator.healthy();
    }

    @Override
    public void collect(MetricsSink sink) {
        coordinator.collect(sink);
    }

    // ------------------------------------------------------------------ Gogo: zrm:backup

    /** {@code zrm:backup}: the backup section. */
    public String backup() {
        StringBuilder b = new StringBuilder();
        coordinator.status().forEach((k, v) -> b.append(String.format("%-20s %s%n", k + ":", v)));
        return b.toString();
    }

    /**
     * {@code zrm:backup <strategy>}: selects the strategy through Configuration Admin; the change
     * arrives here through {@code @Modified} like any other configuration change.
     */
    public String backup(String strategy) throws IOException {
        String s = strategy.strip().toLowerCase(Locale.ROOT);
        if (!BackupSettings.STRATEGIES.contains(s)) {
            return "unknown strategy '" + strategy + "': use auto, replica, litestream3 or vfs";
        }
        Configuration c = configAdmin.getConfiguration(PID, "?");
        Dictionary<String, Object> props = c.getProperties();
        if (props == null) {
            props = new Hashtable<>();
        }
        props.put("strategy", s);
        c.update(props);
        LOG.info("backup: strategy {} requested from the shell", s);
        return "strategy " + s + " requested; see zrm:backup for the active monitor";
    }
}

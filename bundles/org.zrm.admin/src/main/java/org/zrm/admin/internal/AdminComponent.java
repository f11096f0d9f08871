package org.zrm.admin.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.status.StatusContributor;

/**
 * Owns the deploy folder watcher and publishes the runtime status. A configuration change
 * (PID {@value #PID}) moves the deploy folder in place through {@link Modified}: no restart.
 */
@Component(service = StatusSource.class, configurationPid = AdminComponent.PID, immediate = true)
@Designate(ocd = AdminConfig.class)
public final class AdminComponent implements StatusSource {

    static final String PID = "org.zrm.admin";
    private static final Logger LOG = LoggerFactory.getLogger(AdminComponent.class);

    private final BundleContext context;
    private final DeployFolder deployFolder;
    private final StatusCollector collector;
    private volatile Path deployDir;

    /** Whiteboard of status sections; replaced wholesale by SCR (field strategy), never mutated. */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<StatusContributor> contributors = List.of();

    @Activate
    public AdminComponent(AdminConfig config, BundleContext context, @Reference ServiceComponentRuntime scr,
            @Reference ConfigurationAdmin configAdmin) {
        this.context = context;
        this.deployFolder = new DeployFolder(configAdmin);
        this.collector = new StatusCollector(context, scr, this::configDir, () -> deployDir.toString(),
                () -> contributors);
        apply(config);
    }

    @Modified
    void modified(AdminConfig config) {
        apply(config);
    }

    @Deactivate
    void deactivate() throws IOException {
        deployFolder.close();
    }

    @Override
    public RuntimeStatus status() {
        return collector.collect();
    }

    private void apply(AdminConfig config) {
        DeployFolder.checkPoll(config.deployPollMillis());
        Path folder = DeployFolder.resolve(config.deployDir(), context.getProperty("zrm.deploy.dir"));
        try {
            deployFolder.watch(folder, config.deployPollMillis());
        } catch (IOException e) {
            throw DeployFolder.unchecked(e);
        }
        if (!folder.equals(deployDir)) {
            LOG.info("deploy folder: {} (polled every {} ms)", folder, config.deployPollMillis());
        }
        deployDir = folder;
    }

    private String configDir() {
        String dir = context.getProperty("felix.fileinstall.dir");
        return Path.of(dir == null || dir.isBlank() ? "load" : dir).toAbsolutePath().normalize().toString();
    }
}

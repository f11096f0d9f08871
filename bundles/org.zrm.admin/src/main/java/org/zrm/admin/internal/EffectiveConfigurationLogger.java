package org.zrm.admin.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Dictionary;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.ConfigurationListener;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.secret.Secrets;

/**
 * Logs the effective ZRM configuration, secrets masked: every {@code org.zrm.*} configuration at
 * start, and each one again whenever it changes. "Effective" means after ConfigAdmin plugins ran,
 * so {@code $[env:ZERO_UPSTREAM_DB]} shows the value the component receives.
 */
@Component(immediate = true)
public final class EffectiveConfigurationLogger implements ConfigurationListener {

    private static final Logger LOG = LoggerFactory.getLogger(EffectiveConfigurationLogger.class);
    private static final String ZRM_FILTER = "(|(service.pid=org.zrm.*)(service.factoryPid=org.zrm.*))";
    /** Bookkeeping that FileInstall and ConfigAdmin add; not something an operator set. */
    private static final Set<String> HIDDEN = Set.of("felix.fileinstall.filename", "service.bundleLocation");

    private final ConfigurationAdmin configAdmin;
    private final ServiceReference<?> self;

    @Activate
    public EffectiveConfigurationLogger(@Reference ConfigurationAdmin configAdmin, ComponentContext context)
            throws IOException, InvalidSyntaxException {
        this.configAdmin = configAdmin;
        this.self = context.getServiceReference();
        Configuration[] all = configAdmin.listConfigurations(ZRM_FILTER);
        if (all == null || all.length == 0) {
            LOG.info("effective configuration: no org.zrm.* configuration present; components use their defaults");
            return;
        }
        List<Configuration> sorted = new ArrayList<>(List.of(all));
        sorted.sort((a, b) -> a.getPid().compareTo(b.getPid()));
        for (Configuration configuration : sorted) {
            log(configuration);
        }
    }

    @Override
    public void configurationEvent(ConfigurationEvent event) {
        if (!event.getPid().startsWith("org.zrm.")) {
            return;
        }
        if (event.getType() == ConfigurationEvent.CM_DELETED) {
            LOG.info("effective configuration {}: deleted, defaults apply", event.getPid());
            return;
        }
        try {
            Configuration[] match = configAdmin.listConfigurations("(service.pid=" + event.getPid() + ")");
            if (match != null) {
                log(match[0]);
            }
        } catch (IOException | InvalidSyntaxException e) {
            LOG.warn("cannot read configuration {} to log it: {}", event.getPid(), e.toString(), e);
        }
    }

    private void log(Configuration configuration) {
        LOG.info("effective configuration {}: {}", configuration.getPid(), describe(processed(configuration)));
    }

    private Dictionary<String, Object> processed(Configuration configuration) {
        Dictionary<String, Object> properties = self == null ? null : configuration.getProcessedProperties(self);
        return properties != null ? properties : configuration.getProperties();
    }

    static String describe(Dictionary<String, Object> properties) {
        if (properties == null) {
            return "{}";
        }
        TreeMap<String, String> shown = new TreeMap<>();
        for (String key : Collections.list(properties.keys())) {
            if (!HIDDEN.contains(key) && !key.equals("service.pid") && !key.equals("service.factoryPid")) {
                shown.put(key, Secrets.mask(key, properties.get(key)));
            }
        }
        return shown.toString();
    }
}

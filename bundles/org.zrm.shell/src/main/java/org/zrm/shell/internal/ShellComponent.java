package org.zrm.shell.internal;

import java.util.Collections;
import java.util.Dictionary;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.zrm.operator.ChangeStreamerOperations;
import org.zrm.operator.SlotOperations;
import org.zrm.status.StatusContributor;

/**
 * Registers the Gogo commands {@code zrm:lag}, {@code zrm:subscribers}, {@code zrm:slots},
 * {@code zrm:changelog} and {@code zrm:config} ({@link OperatorCommands} does the work). Every
 * reference is optional and dynamic: a command whose component is missing says so instead of the
 * command disappearing.
 */
@Component(service = ShellComponent.class, immediate = true, property = {"osgi.command.scope=zrm",
        "osgi.command.function=lag", "osgi.command.function=subscribers", "osgi.command.function=slots",
        "osgi.command.function=changelog", "osgi.command.function=config"})
public final class ShellComponent {
    private static final String ZRM_FILTER = "(|(service.pid=org.zrm.*)(service.factoryPid=org.zrm.*))";

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<StatusContributor> contributors;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile ChangeStreamerOperations streamer;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile SlotOperations slotOperations;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile ConfigurationAdmin configAdmin;

    private final OperatorCommands commands;
    private final ServiceReference<?> self;

    @Activate
    public ShellComponent(ComponentContext context) {
        this.self = context.getServiceReference();
        this.commands = new OperatorCommands(this::section, () -> streamer, () -> slotOperations, this::configurations);
    }

    /** {@code zrm:lag [--json]}: upstream lag, the replication connection's ages, each subscriber's lag. */
    public String lag(String... args) {
        return commands.lag(args);
    }

    /** {@code zrm:subscribers [--json]}, {@code zrm:subscribers close <id> <reason...>}. */
    public String subscribers(String... args) {
        return commands.subscribers(args);
    }

    /** {@code zrm:slots [--json]}, {@code zrm:slots drop <slot> [--yes]}. */
    public String slots(String... args) {
        return commands.slots(args);
    }

    /** {@code zrm:changelog [--json]}: size, oldest and newest watermark, dry run of the next purge. */
    public String changelog(String... args) {
        return commands.changelog(args);
    }

    /** {@code zrm:config [--json]}: the effective org.zrm.* configuration, secrets masked. */
    public String config(String... args) {
        return commands.config(args);
    }

    private Map<String, Object> section(String name) {
        List<StatusContributor> all = contributors;
        if (all == null) {
            return null;
        }
        for (StatusContributor c : all) {
            if (name.equals(c.section())) {
                return c.status();
            }
        }
        return null;
    }

    private Map<String, Map<String, Object>> configurations() throws Exception {
        ConfigurationAdmin ca = configAdmin;
        if (ca == null) {
            throw new IllegalStateException("Configuration Admin is not running");
        }
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        Configuration[] all = ca.listConfigurations(ZRM_FILTER);
        if (all == null) {
            return out;
        }
        for (Configuration c : all) {
            // Processed: after the interpolation plugin, i.e. what the component sees.
            Dictionary<String, Object> props = self == null ? null : c.getProcessedProperties(self);
            if (props == null) {
                props = c.getProperties();
            }
            Map<String, Object> m = new LinkedHashMap<>();
            if (props != null) {
                for (String k : Collections.list(props.keys())) {
                    m.put(k, props.get(k));
                }
            }
            out.put(c.getPid(), m);
        }
        return out;
    }
}

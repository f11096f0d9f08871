package org.zrm.admin.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.service.component.runtime.dto.UnsatisfiedReferenceDTO;
import org.osgi.service.component.runtime.dto.ReferenceDTO;
import org.zrm.admin.internal.RuntimeStatus.BundleStatus;
import org.zrm.admin.internal.RuntimeStatus.ComponentStatus;
import org.zrm.admin.internal.RuntimeStatus.UnsatisfiedReference;
import org.zrm.status.StatusContributor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds a {@link RuntimeStatus} from the framework and SCR's runtime DTOs. */
final class StatusCollector {

    private static final Logger LOG = LoggerFactory.getLogger(StatusCollector.class);

    /** Bundles whose symbolic name starts with this are "ZRM bundles" in the status. */
    static final String ZRM_PREFIX = "org.zrm.";

    private final BundleContext context;
    private final ServiceComponentRuntime scr;
    private final Supplier<String> configDir;
    private final Supplier<String> deployDir;
    private final Supplier<List<StatusContributor>> contributors;

    StatusCollector(BundleContext context, ServiceComponentRuntime scr, Supplier<String> configDir,
            Supplier<String> deployDir, Supplier<List<StatusContributor>> contributors) {
        this.context = context;
        this.scr = scr;
        this.configDir = configDir;
        this.deployDir = deployDir;
        this.contributors = contributors;
    }

    RuntimeStatus collect() {
        List<BundleStatus> bundles = Arrays.stream(context.getBundles())
                .filter(b -> b.getSymbolicName() != null && b.getSymbolicName().startsWith(ZRM_PREFIX))
                .sorted(Comparator.comparing(Bundle::getSymbolicName))
                .map(b -> new BundleStatus(b.getBundleId(), b.getSymbolicName(), b.getVersion().toString(),
                        bundleState(b.getState())))
                .toList();
        List<ComponentStatus> components = new ArrayList<>();
        for (ComponentDescriptionDTO description : scr.getComponentDescriptionDTOs()) {
            components.add(componentStatus(description));
        }
        components.sort(Comparator.comparing(ComponentStatus::bundle).thenComparing(ComponentStatus::name));
        return new RuntimeStatus(configDir.get(), deployDir.get(), bundles, List.copyOf(components), sections(),
                unhealthySections());
    }

    /** Sections whose contributor reports itself unhealthy; a contributor that throws counts as unhealthy. */
    List<String> unhealthySections() {
        List<String> out = new ArrayList<>();
        for (StatusContributor contributor : contributors.get()) {
            boolean healthy;
            try {
                healthy = contributor.healthy();
            } catch (RuntimeException e) {
                LOG.warn("status section {} failed to report its health: {}", contributor.section(), e.toString(), e);
                healthy = false;
            }
            if (!healthy) {
                out.add(contributor.section());
            }
        }
        out.sort(Comparator.naturalOrder());
        return List.copyOf(out);
    }

    /**
     * One entry per contributor, sorted by section name. A contributor that throws is reported in
     * its own section, so one broken bundle can't take the whole status page down.
     */
    Map<String, Object> sections() {
        Map<String, Object> sections = new TreeMap<>();
        for (StatusContributor contributor : contributors.get()) {
            String name = contributor.section();
            try {
                sections.put(name, contributor.status());
            } catch (RuntimeException e) {
                LOG.warn("status section {} failed: {}", name, e.toString(), e);
                sections.put(name, Map.of("error", e.toString()));
            }
        }
        return Collections.unmodifiableMap(sections);
    }

    private ComponentStatus componentStatus(ComponentDescriptionDTO description) {
        String bundle = description.bundle == null ? "?" : description.bundle.symbolicName;
        if (!scr.isComponentEnabled(description)) {
            return new ComponentStatus(description.name, bundle, "DISABLED", List.of(), null);
        }
        Collection<ComponentConfigurationDTO> configurations = scr.getComponentConfigurationDTOs(description);
        if (configurations.isEmpty()) {
            // SCR creates no configuration object while a required configuration is missing.
            return new ComponentStatus(description.name, bundle, "UNSATISFIED_CONFIGURATION", List.of(), null);
        }
        // A factory-configured component has one configuration per instance; report the worst.
        ComponentConfigurationDTO worst = configurations.stream()
                .min(Comparator.comparingInt(c -> severityRank(c.state)))
                .orElseThrow();
        Map<String, String> interfaces = new HashMap<>();
        for (ReferenceDTO reference : description.references) {
            interfaces.put(reference.name, reference.interfaceName);
        }
        List<UnsatisfiedReference> unsatisfied = new ArrayList<>();
        for (ComponentConfigurationDTO configuration : configurations) {
            for (UnsatisfiedReferenceDTO reference : configuration.unsatisfiedReferences) {
                unsatisfied.add(new UnsatisfiedReference(reference.name, interfaces.get(reference.name), reference.target));
            }
        }
        return new ComponentStatus(description.name, bundle, componentState(worst.state), List.copyOf(unsatisfied),
                worst.failure);
    }

    /** Lower is worse, so {@code min} picks the configuration an operator must look at. */
    private static int severityRank(int state) {
        return switch (state) {
            case ComponentConfigurationDTO.FAILED_ACTIVATION -> 0;
            case ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION -> 1;
            case ComponentConfigurationDTO.UNSATISFIED_REFERENCE -> 2;
            case ComponentConfigurationDTO.SATISFIED -> 3;
            default -> 4;
        };
    }

    static String componentState(int state) {
        return switch (state) {
            case ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION -> "UNSATISFIED_CONFIGURATION";
            case ComponentConfigurationDTO.UNSATISFIED_REFERENCE -> "UNSATISFIED_REFERENCE";
            case ComponentConfigurationDTO.SATISFIED -> "SATISFIED";
            case ComponentConfigurationDTO.ACTIVE -> "ACTIVE";
            case ComponentConfigurationDTO.FAILED_ACTIVATION -> "FAILED_ACTIVATION";
            default -> "UNKNOWN(" + state + ")";
        };
    }

    static String bundleState(int state) {
        return switch (state) {
            case Bundle.UNINSTALLED -> "UNINSTALLED";
            case Bundle.INSTALLED -> "INSTALLED";
            case Bundle.RESOLVED -> "RESOLVED";
            case Bundle.STARTING -> "STARTING";
            case Bundle.STOPPING -> "STOPPING";
            case Bundle.ACTIVE -> "ACTIVE";
            default -> "UNKNOWN(" + state + ")";
        };
    }
}

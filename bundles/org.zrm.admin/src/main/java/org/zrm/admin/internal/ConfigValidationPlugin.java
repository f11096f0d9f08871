package org.zrm.admin.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Dictionary;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.ConfigurationListener;
import org.osgi.service.cm.ConfigurationPlugin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.AttributeDefinition;
import org.osgi.service.metatype.MetaTypeInformation;
import org.osgi.service.metatype.MetaTypeService;
import org.osgi.service.metatype.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.config.ConfigValidator;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * Validates every {@code org.zrm.*} configuration as Configuration Admin hands it to a component
 * (Felix SCR reads configurations through {@code getProcessedProperties}, so this plugin sees what
 * each DS component receives). Ranked after the {@code $[env:…]} interpolation plugin (500), so it
 * checks the interpolated values. The rules and what happens on a rejection are
 * {@link ConfigGate}'s; this class adapts the metatype, the registered {@link ConfigValidator}s
 * and the plugin callback to it, and shows the rejections in the {@value #SECTION} status section
 * and in {@code /metrics}.
 *
 * <p>{@code felix.cm.config.plugins} lists {@value #PLUGIN_ID}, so Configuration Admin delivers no
 * configuration before this plugin is registered: the very first delivery is validated too. The
 * component therefore needs no configuration of its own (a required one would wait for itself).
 */
@Component(service = {ConfigurationPlugin.class, ConfigurationListener.class, StatusContributor.class,
        MetricsContributor.class}, configurationPolicy = ConfigurationPolicy.IGNORE, immediate = true,
        property = {ConfigurationPlugin.CM_RANKING + ":Integer=" + ConfigValidationPlugin.RANKING,
                "config.plugin.id=" + ConfigValidationPlugin.PLUGIN_ID})
public final class ConfigValidationPlugin implements ConfigurationPlugin, ConfigurationListener, StatusContributor,
        MetricsContributor {

    static final String PLUGIN_ID = "org.zrm.admin.configvalidation";
    /** After interpolation (500); below 1000, the highest rank that may still change properties. */
    static final int RANKING = 900;
    static final String SECTION = "config";
    /** Configurations remembered (last good and rejected); see {@link ConfigGate}. */
    static final int MAX_PIDS = 4096;

    private static final Logger LOG = LoggerFactory.getLogger(ConfigValidationPlugin.class);

    private record Registered(Set<String> pids, ConfigValidator validator) {
    }

    private record CachedRules(long bundleId, long lastModified, Map<String, AttributeRule> rules) {
    }

    private final MetaTypeService metaType;
    private final BundleContext context;
    private final ConfigGate gate = new ConfigGate(Clock.systemUTC(), MAX_PIDS);
    private final List<Registered> validators = new CopyOnWriteArrayList<>();
    private final Map<String, CachedRules> rulesByPid = new ConcurrentHashMap<>();
    /** Deliveries checked, and PIDs checked without a metatype: shows whether the plugin is in the path. */
    private final java.util.concurrent.atomic.AtomicLong checked = new java.util.concurrent.atomic.AtomicLong();
    private final Set<String> withoutMetatype = ConcurrentHashMap.newKeySet();

    @Activate
    public ConfigValidationPlugin(@Reference MetaTypeService metaType, BundleContext context) {
        this.metaType = metaType;
        this.context = context;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addValidator(ConfigValidator validator, Map<String, Object> properties) {
        validators.add(new Registered(Set.copyOf(stringsOf(properties.get(ConfigValidator.PID_PROPERTY))), validator));
    }

    void removeValidator(ConfigValidator validator) {
        validators.removeIf(r -> r.validator() == validator);
    }

    @Override
    public void modifyConfiguration(ServiceReference<?> reference, Dictionary<String, Object> properties) {
        Object pidValue = properties.get("service.pid");
        if (pidValue == null || !pidValue.toString().startsWith("org.zrm.")) {
            return;
        }
        String configPid = pidValue.toString();
        Object factory = properties.get("service.factoryPid");
        String pid = factory != null ? factory.toString() : configPid;
        Map<String, Object> current = new LinkedHashMap<>();
        for (String key : Collections.list(properties.keys())) {
            current.put(key, properties.get(key));
        }
        List<ConfigValidator> matching = new ArrayList<>();
        for (Registered r : validators) {
            if (r.pids().contains(pid)) {
                matching.add(r.validator());
            }
        }
        Map<String, AttributeRule> rules = rules(pid);
        checked.incrementAndGet();
        if (rules.isEmpty() && withoutMetatype.size() < MAX_PIDS) {
            withoutMetatype.add(pid);
        }
        ConfigGate.Outcome outcome = gate.check(pid, configPid, current, rules, matching);
        if (outcome.logLine() != null) {
            LOG.error(outcome.logLine());
        }
        if (outcome.cleared()) {
            LOG.info("configuration {} ({}) accepted; its earlier rejected change is cleared", configPid,
                    ConfigGate.file(current));
        }
        if (!outcome.accepted()) {
            for (String key : Collections.list(properties.keys())) {
                properties.remove(key);
            }
            outcome.properties().forEach(properties::put);
        }
    }

    @Override
    public void configurationEvent(ConfigurationEvent event) {
        if (event.getType() == ConfigurationEvent.CM_DELETED) {
            gate.deleted(event.getPid());
        }
    }

    @Override
    public String section() {
        return SECTION;
    }

    @Override
    public Map<String, Object> status() {
        List<Object> rejected = new ArrayList<>();
        for (ConfigGate.Rejection r : gate.rejected()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("pid", r.pid());
            m.put("file", r.file());
            m.put("key", r.key());
            m.put("reason", r.reason());
            m.put("since", r.since().toString());
            rejected.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rejected", rejected);
        out.put("rejectionsTotal", gate.rejectionsTotal());
        out.put("deliveriesChecked", checked.get());
        out.put("pidsWithoutMetatype", new java.util.TreeSet<>(withoutMetatype).stream().toList());
        return out;
    }

    @Override
    public void collect(MetricsSink sink) {
        sink.gauge("zrm_config_rejected_configurations",
                "Configurations whose latest change was rejected; their components run with the last good one",
                Map.of(), gate.rejectedPids());
        sink.counter("zrm_config_rejections_total", "Rejected configuration changes since start", Map.of(),
                gate.rejectionsTotal());
    }

    /**
     * The metatype of the PID, from the ZRM bundle that declares it; cached per bundle version.
     * Felix Metatype holds parsed descriptors in memory and the bounds are cached here, so this does
     * no I/O once a bundle's metatype was read (the first read is of the bundle's own jar, local).
     */
    private Map<String, AttributeRule> rules(String pid) {
        CachedRules cached = rulesByPid.get(pid);
        if (cached != null) {
            Bundle b = context.getBundle(cached.bundleId());
            if (b != null && b.getLastModified() == cached.lastModified()) {
                return cached.rules();
            }
            rulesByPid.remove(pid);
        }
        for (Bundle b : context.getBundles()) {
            String name = b.getSymbolicName();
            if (name == null || !name.startsWith("org.zrm.")) {
                continue;
            }
            MetaTypeInformation info = metaType.getMetaTypeInformation(b);
            if (info == null || !(contains(info.getPids(), pid) || contains(info.getFactoryPids(), pid))) {
                continue;
            }
            ObjectClassDefinition ocd = info.getObjectClassDefinition(pid, null);
            AttributeDefinition[] ads = ocd == null ? null : ocd.getAttributeDefinitions(ObjectClassDefinition.ALL);
            Map<String, AttributeRule> rules = new LinkedHashMap<>();
            if (ads != null) {
                Map<String, MetatypeBounds.Bounds> bounds = bounds(b, pid);
                for (AttributeDefinition ad : ads) {
                    AttributeRule.Kind kind = kind(ad.getType());
                    if (kind != null) {
                        String[] options = ad.getOptionValues();
                        MetatypeBounds.Bounds range = bounds.getOrDefault(ad.getID(), new MetatypeBounds.Bounds(null, null));
                        rules.put(ad.getID(), new AttributeRule(ad.getID(), kind, ad.getCardinality(),
                                options == null ? List.of() : List.of(options), range.min(), range.max()));
                    }
                }
            }
            Map<String, AttributeRule> frozen = Collections.unmodifiableMap(rules);
            rulesByPid.put(pid, new CachedRules(b.getBundleId(), b.getLastModified(), frozen));
            return frozen;
        }
        return Map.of();
    }

    /**
     * The min/max of the PID's attributes from the bundle's metatype resources (read once per bundle
     * version, with the rest of its rules). A resource that cannot be read costs only its bounds: the
     * type, cardinality and option checks still apply, and the WARN says why ranges are not.
     */
    private static Map<String, MetatypeBounds.Bounds> bounds(Bundle bundle, String pid) {
        Map<String, MetatypeBounds.Bounds> out = new LinkedHashMap<>();
        Enumeration<URL> entries = bundle.findEntries("OSGI-INF/metatype", "*.xml", false);
        while (entries != null && entries.hasMoreElements()) {
            URL entry = entries.nextElement();
            try (InputStream in = entry.openStream()) {
                out.putAll(MetatypeBounds.read(in, pid));
            } catch (IOException e) {
                LOG.warn("min/max of {} are not checked: {} of bundle {} could not be read: {}", pid, entry.getPath(),
                        bundle.getSymbolicName(), e.getMessage());
            }
        }
        return out;
    }

    @SuppressWarnings("deprecation") // BIGINTEGER/BIGDECIMAL: not used by ZRM; left unchecked
    private static AttributeRule.Kind kind(int type) {
        return switch (type) {
            case AttributeDefinition.STRING -> AttributeRule.Kind.STRING;
            case AttributeDefinition.PASSWORD -> AttributeRule.Kind.PASSWORD;
            case AttributeDefinition.LONG -> AttributeRule.Kind.LONG;
            case AttributeDefinition.INTEGER -> AttributeRule.Kind.INTEGER;
            case AttributeDefinition.SHORT -> AttributeRule.Kind.SHORT;
            case AttributeDefinition.BYTE -> AttributeRule.Kind.BYTE;
            case AttributeDefinition.CHARACTER -> AttributeRule.Kind.CHARACTER;
            case AttributeDefinition.DOUBLE -> AttributeRule.Kind.DOUBLE;
            case AttributeDefinition.FLOAT -> AttributeRule.Kind.FLOAT;
            case AttributeDefinition.BOOLEAN -> AttributeRule.Kind.BOOLEAN;
            default -> null;
        };
    }

    private static boolean contains(String[] values, String pid) {
        if (values != null) {
            for (String v : values) {
                if (pid.equals(v)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static List<String> stringsOf(Object value) {
        if (value instanceof String s) {
            return List.of(s);
        }
        if (value instanceof String[] a) {
            return List.of(a);
        }
        if (value instanceof java.util.Collection<?> c) {
            return c.stream().map(String::valueOf).toList();
        }
        return List.of();
    }
}

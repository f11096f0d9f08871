package org.zrm.changestreamer.http.internal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;

/**
 * Renders {@link MetricsContributor}s in the Prometheus text exposition format 0.0.4: one
 * {@code # HELP} and {@code # TYPE} header per metric name followed by all its samples, names in
 * alphabetical order, samples in reporting order.
 *
 * <p><b>Validation</b> (the {@link MetricsSink} contract): names must match
 * {@code [a-zA-Z_:][a-zA-Z0-9_:]*} and start with {@code zrm_}, counters must end in
 * {@code _total}, label names must match {@code [a-zA-Z_][a-zA-Z0-9_]*} and not start with
 * {@code __}, all samples of a name must share help text and type, and a series (name plus labels)
 * may be reported once. A violation throws {@link IllegalArgumentException} into the contributor;
 * whatever makes a contributor's {@code collect} fail, all of its samples of that scrape are left
 * out and the failure is logged, so one broken contributor never breaks the page.
 */
final class PrometheusRenderer {

    /** The {@code Content-Type} of the rendered text. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final Logger LOG = LoggerFactory.getLogger(PrometheusRenderer.class);
    private static final Pattern METRIC_NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /**
     * @param contributors the contributors, called in order on this thread
     * @return the exposition text, ending in a newline unless empty
     */
    String render(Iterable<? extends MetricsContributor> contributors) {
        Map<String, Family> families = new TreeMap<>();
        for (MetricsContributor contributor : contributors) {
            Buffer buffer = new Buffer(families);
            try {
                contributor.collect(buffer);
            } catch (RuntimeException e) {
                LOG.warn("metrics contributor {} failed, its samples are left out: {}",
                        contributor.getClass().getName(), e.toString());
                continue;
            }
            buffer.commit();
        }
        StringBuilder out = new StringBuilder();
        for (Family family : families.values()) {
            out.append("# HELP ").append(family.name).append(' ').append(escapeHelp(family.help)).append('\n');
            out.append("# TYPE ").append(family.name).append(' ').append(family.type).append('\n');
            for (Sample sample : family.samples) {
                out.append(family.name);
                if (!sample.labels.isEmpty()) {
                    out.append('{');
                    boolean first = true;
                    for (Map.Entry<String, String> label : sample.labels.entrySet()) {
                        if (!first) {
                            out.append(',');
                        }
                        first = false;
                        out.append(label.getKey()).append("=\"").append(escapeLabelValue(label.getValue())).append('"');
                    }
                    out.append('}');
                }
                out.append(' ').append(formatValue(sample.value)).append('\n');
            }
        }
        return out.toString();
    }

    static String formatValue(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "+Inf" : "-Inf";
        }
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        return Double.toString(value);
    }

    static String escapeHelp(String help) {
        return help.replace("\\", "\\\\").replace("\n", "\\n");
    }

    static String escapeLabelValue(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private record Sample(Map<String, String> labels, double value) {}

    private static final class Family {
        final String name;
        final String help;
        final String type;
        final List<Sample> samples = new ArrayList<>();
        final Set<Map<String, String>> series = new HashSet<>();

        Family(String name, String help, String type) {
            this.name = name;
            this.help = help;
            this.type = type;
        }
    }

    /** One contributor's samples of one scrape, validated as they arrive and kept only if it succeeds. */
    private static final class Buffer implements MetricsSink {
        private final Map<String, Family> committed;
        private final Map<String, Family> added = new LinkedHashMap<>();
        private final List<Map.Entry<Family, Sample>> samples = new ArrayList<>();

        Buffer(Map<String, Family> committed) {
            this.committed = committed;
        }

        @Override
        public void gauge(String name, String help, Map<String, String> labels, double value) {
            add(name, help, "gauge", labels, value);
        }

        @Override
        public void counter(String name, String help, Map<String, String> labels, double value) {
            if (name != null && !name.endsWith("_total")) {
                throw new IllegalArgumentException("counter name must end in _total: " + name);
            }
            add(name, help, "counter", labels, value);
        }

        private void add(String name, String help, String type, Map<String, String> labels, double value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(help, "help");
            Objects.requireNonNull(labels, "labels");
            if (!METRIC_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("invalid metric name: " + name);
            }
            if (!name.startsWith("zrm_")) {
                throw new IllegalArgumentException("metric name must start with zrm_: " + name);
            }
            Map<String, String> copy = new LinkedHashMap<>();
            for (Map.Entry<String, String> label : labels.entrySet()) {
                String labelName = label.getKey();
                if (labelName == null || !LABEL_NAME.matcher(labelName).matches() || labelName.startsWith("__")) {
                    throw new IllegalArgumentException("invalid label name " + labelName + " of metric " + name);
                }
                copy.put(labelName, Objects.requireNonNull(label.getValue(), () -> "value of label " + labelName));
            }
            Family family = committed.get(name);
            if (family == null) {
                family = added.computeIfAbsent(name, n -> new Family(n, help, type));
            }
            if (!family.type.equals(type)) {
                throw new IllegalArgumentException(name + " reported as " + type + " and as " + family.type);
            }
            if (!family.help.equals(help)) {
                throw new IllegalArgumentException(name + " reported with two help texts");
            }
            Family f = family;
            boolean duplicate = f.series.contains(copy)
                    || samples.stream().anyMatch(s -> s.getKey() == f && s.getValue().labels.equals(copy));
            if (duplicate) {
                throw new IllegalArgumentException("series reported twice: " + name + copy);
            }
            samples.add(Map.entry(family, new Sample(copy, value)));
        }

        void commit() {
            committed.putAll(added);
            for (Map.Entry<Family, Sample> s : samples) {
                s.getKey().samples.add(s.getValue());
                s.getKey().series.add(s.getValue().labels);
            }
        }
    }
}

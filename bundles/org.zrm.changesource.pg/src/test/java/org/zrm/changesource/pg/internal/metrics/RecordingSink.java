package org.zrm.changesource.pg.internal.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import org.zrm.status.MetricsSink;

/** Keeps every sample as {@code name{k=v,...}} → value. */
final class RecordingSink implements MetricsSink {
    final Map<String, Double> samples = new LinkedHashMap<>();

    @Override
    public void gauge(String name, String help, Map<String, String> labels, double value) {
        samples.put(key(name, labels), value);
    }

    @Override
    public void counter(String name, String help, Map<String, String> labels, double value) {
        samples.put(key(name, labels), value);
    }

    static String key(String name, Map<String, String> labels) {
        StringBuilder b = new StringBuilder(name);
        if (!labels.isEmpty()) {
            b.append('{');
            labels.forEach((k, v) -> b.append(k).append('=').append(v).append(','));
            b.setLength(b.length() - 1);
            b.append('}');
        }
        return b.toString();
    }
}

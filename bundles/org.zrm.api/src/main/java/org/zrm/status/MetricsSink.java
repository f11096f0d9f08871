package org.zrm.status;

import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Receives the samples of a {@link MetricsContributor}. Samples of one metric name must share the
 * same help text and type; the renderer groups them under one {@code # HELP}/{@code # TYPE} header.
 *
 * <p>Names follow Prometheus rules ({@code [a-zA-Z_:][a-zA-Z0-9_:]*}) and use the {@code zrm_}
 * prefix; counters end in {@code _total}. Label values are escaped by the renderer. An invalid name
 * or label name throws {@link IllegalArgumentException}, so a typo fails the contributor's tests
 * rather than producing output a scraper rejects.
 */
@ProviderType
public interface MetricsSink {

    /**
     * Reports a value that can go up and down (lag, buffered bytes, connected subscribers).
     *
     * @param name metric name
     * @param help one-line description
     * @param labels label names to values, in display order; may be empty
     * @param value the value
     */
    void gauge(String name, String help, Map<String, String> labels, double value);

    /**
     * Reports a monotonically increasing count since the process started.
     *
     * @param name metric name, ending in {@code _total}
     * @param help one-line description
     * @param labels label names to values, in display order; may be empty
     * @param value the count
     */
    void counter(String name, String help, Map<String, String> labels, double value);
}

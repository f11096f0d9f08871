package org.zrm.status;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A source of Prometheus metrics, contributed through the service registry (whiteboard): the
 * {@code GET /metrics} endpoint calls every registered contributor and renders what it reports in
 * the Prometheus text exposition format.
 *
 * <p><b>Threading.</b> {@link #collect(MetricsSink)} is called on HTTP threads, concurrently with
 * the component's own work: it must be thread-safe, cheap and non-blocking (read volatile or
 * atomic state; never query a database).
 */
@ConsumerType
public interface MetricsContributor {

    /**
     * Reports the contributor's current figures.
     *
     * @param sink receives the samples; valid only during this call
     */
    void collect(MetricsSink sink);
}

package org.zrm.status;

import java.util.Map;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A section of the runtime status ({@code GET /status}, {@code zrm:status}), contributed by a
 * component through the service registry (whiteboard): the admin bundle lists every registered
 * contributor under {@code "sections"}, keyed by {@link #section()}.
 *
 * <p><b>Threading.</b> {@link #status()} is called on HTTP and shell threads, concurrently with
 * the component's own work: it must be thread-safe, cheap and non-blocking (read volatile or
 * atomic state; never query a database).
 *
 * <p><b>Secrets.</b> Values are shown to operators: mask connection strings with
 * {@link org.zrm.secret.Secrets}.
 */
@ConsumerType
public interface StatusContributor {

    /** The section's key, e.g. {@code "changesource.pg"}; unique per runtime. */
    String section();

    /**
     * The section's current content as JSON-compatible values ({@code null}, {@link Boolean},
     * {@link Number}, {@link String}, {@link java.util.List}, {@link Map}), in display order.
     */
    Map<String, Object> status();

    /**
     * Whether the contributing component is healthy. An unhealthy contributor makes the whole
     * runtime report {@code "healthy": false} (for example a backup that stayed stale past its
     * grace period, after which the pipeline stops acking and purging), so that an orchestrator
     * polling {@code /status} can act even when the process is configured not to exit.
     *
     * @return {@code true} unless the component has hit a condition an operator must act on
     */
    default boolean healthy() {
        return true;
    }
}

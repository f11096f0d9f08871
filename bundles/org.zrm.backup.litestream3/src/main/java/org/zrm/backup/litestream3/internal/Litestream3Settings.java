package org.zrm.backup.litestream3.internal;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * What a {@link Litestream3Monitor} needs besides its collaborators; validated on construction.
 *
 * @param backupURL {@code litestream.backupURL}; empty means unconfigured (the monitor then
 *     refuses to start)
 * @param metricsURL litestream's metrics endpoint, http or https
 * @param replicaFile {@code replica.file}, read for the backup lag
 * @param checkInterval time between checks (upstream {@code CHECK_INTERVAL_MS})
 * @param wedgedShutdownGrace continuous staleness after which the backup counts as wedged
 *     (upstream {@code WEDGED_SHUTDOWN_GRACE_MS})
 * @param metricsTimeout bound on one metrics fetch
 * @param maxMetricsBytes bound on one metrics body; a larger body is discarded
 */
record Litestream3Settings(String backupURL, URI metricsURL, Path replicaFile, Duration checkInterval,
        Duration wedgedShutdownGrace, Duration metricsTimeout, int maxMetricsBytes) {

    static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(60);
    static final Duration DEFAULT_WEDGED_SHUTDOWN_GRACE = Duration.ofMinutes(15);
    static final Duration DEFAULT_METRICS_TIMEOUT = Duration.ofSeconds(30);
    /** litestream's whole exposition is a few KiB; 4 MiB leaves room for many databases. */
    static final int DEFAULT_MAX_METRICS_BYTES = 4 << 20;

    Litestream3Settings {
        if (backupURL == null) {
            throw new IllegalArgumentException("litestream.backupURL must not be null");
        }
        String scheme = metricsURL.getScheme() == null ? "" : metricsURL.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || metricsURL.getHost() == null) {
            throw new IllegalArgumentException("the litestream metrics endpoint must be an http(s) URL with a host,"
                    + " got '" + metricsURL + "'");
        }
        positive("litestream.checkIntervalMs", checkInterval);
        positive("litestream.wedgedShutdownGraceMs", wedgedShutdownGrace);
        positive("litestream.metricsTimeoutMs", metricsTimeout);
        if (maxMetricsBytes <= 0) {
            throw new IllegalArgumentException("the metrics body bound must be positive, got " + maxMetricsBytes);
        }
    }

    /** Settings with the upstream constants for everything but the given values. */
    static Litestream3Settings defaults(String backupURL, URI metricsURL, Path replicaFile) {
        return new Litestream3Settings(backupURL, metricsURL, replicaFile, DEFAULT_CHECK_INTERVAL,
                DEFAULT_WEDGED_SHUTDOWN_GRACE, DEFAULT_METRICS_TIMEOUT, DEFAULT_MAX_METRICS_BYTES);
    }

    private static void positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + (d == null ? null : d.toMillis()));
        }
    }
}

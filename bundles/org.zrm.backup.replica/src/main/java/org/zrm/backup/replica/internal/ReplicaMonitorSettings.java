package org.zrm.backup.replica.internal;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Validated {@link ReplicaMonitorConfig}. Errors name the offending property, because SCR logs
 * them as the reason the component did not activate.
 */
record ReplicaMonitorSettings(Path replicaFile, Duration initialDelay, Duration interval) {

    static ReplicaMonitorSettings from(ReplicaMonitorConfig config) {
        String file = config.replica_file() == null ? "" : config.replica_file().trim();
        if (file.isEmpty()) {
            throw new IllegalArgumentException("replica.file must name the SQLite replica file (ZERO_REPLICA_FILE);"
                    + " it is empty");
        }
        Path path;
        try {
            path = Path.of(file).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("replica.file is not a valid path: \"" + file + "\": " + e.getMessage(),
                    e);
        }
        long initialDelayMs = config.replica_monitor_initialDelayMs();
        if (initialDelayMs < 0) {
            throw new IllegalArgumentException("replica.monitor.initialDelayMs must be at least 0 (ms), got "
                    + initialDelayMs);
        }
        long intervalMs = config.replica_monitor_intervalMs();
        if (intervalMs < 1) {
            throw new IllegalArgumentException("replica.monitor.intervalMs must be at least 1 (ms), got " + intervalMs);
        }
        return new ReplicaMonitorSettings(path, Duration.ofMillis(initialDelayMs), Duration.ofMillis(intervalMs));
    }
}

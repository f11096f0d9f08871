package org.zrm.backup.replica.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of PID {@code org.zrm.backup.replica}. {@code replica.file} follows zero-cache's
 * option; zero-cache hard-codes the 30 s check interval, so the two timing properties are ZRM's own.
 */
@ObjectClassDefinition(pid = "org.zrm.backup.replica", name = "ZRM backup monitor: replica",
        description = "No-backup strategy: periodically reads stateVersion from the local replica file and lets the"
                + " change streamer purge changes up to it. Selected by strategy = replica (or auto without a"
                + " backup URL) in org.zrm.backup.")
@interface ReplicaMonitorConfig {

    @AttributeDefinition(name = "replica.file",
            description = "SQLite replica file, ZERO_REPLICA_FILE. Opened read-only; never created.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "replica.monitor.initialDelayMs", min = "0",
            description = "Wait after start before the first read, in ms (zero-cache: 30000).")
    long replica_monitor_initialDelayMs() default 30_000;

    @AttributeDefinition(name = "replica.monitor.intervalMs", min = "1",
            description = "Wait between the end of one read and the start of the next, in ms (zero-cache: 30000).")
    long replica_monitor_intervalMs() default 30_000;
}

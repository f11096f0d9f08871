package org.zrm.litestream.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of PID {@code org.zrm.litestream}. The {@code litestream.*} names follow
 * zero-cache's {@code --litestream-*} options (and read the same {@code ZERO_LITESTREAM_*}
 * variables in the shipped file); the supervision timings are ZRM's own.
 */
@ObjectClassDefinition(name = "ZRM litestream process",
        description = "Runs `litestream replicate` for the replica file while a backup URL is set, as zero-cache's"
                + " replication manager does, and supervises it (restart with back-off, bounded stop).")
@interface LitestreamConfig {

    @AttributeDefinition(name = "litestream.backupURL", required = false,
            description = "ZERO_LITESTREAM_BACKUP_URL, e.g. s3://bucket/path or file:///backups/zero. Empty: no"
                    + " litestream process runs (removing it stops a running one).")
    String litestream_backupURL() default "";

    @AttributeDefinition(name = "litestream.executable", required = false,
            description = "ZERO_LITESTREAM_EXECUTABLE: the litestream binary that runs `replicate` (and `snapshots`)."
                    + " Required with a backup URL.")
    String litestream_executable() default "";

    @AttributeDefinition(name = "litestream.executableV5", required = false,
            description = "ZERO_LITESTREAM_EXECUTABLE_V5: the v0.5 binary (restores with restoreUsingV5).")
    String litestream_executableV5() default "";

    @AttributeDefinition(name = "litestream.backupUsingV5",
            description = "ZERO_LITESTREAM_BACKUP_USING_V5; requires restoreUsingV5 and executable = executableV5.")
    boolean litestream_backupUsingV5() default false;

    @AttributeDefinition(name = "litestream.restoreUsingV5", description = "ZERO_LITESTREAM_RESTORE_USING_V5.")
    boolean litestream_restoreUsingV5() default false;

    @AttributeDefinition(name = "litestream.configPath", required = false,
            description = "ZERO_LITESTREAM_CONFIG_PATH: litestream's configuration, passed as LITESTREAM_CONFIG. Empty:"
                    + " ZRM writes zero-cache's config.yml next to the replica file, as <replica.file>-litestream.yml.")
    String litestream_configPath() default "";

    @AttributeDefinition(name = "litestream.logLevel", description = "ZERO_LITESTREAM_LOG_LEVEL: debug, info, warn, error.")
    String litestream_logLevel() default "warn";

    @AttributeDefinition(name = "log.format", description = "ZERO_LOG_FORMAT (text or json): litestream's log type.")
    String log_format() default "text";

    @AttributeDefinition(name = "litestream.endpoint", required = false, description = "ZERO_LITESTREAM_ENDPOINT (S3).")
    String litestream_endpoint() default "";

    @AttributeDefinition(name = "litestream.region", required = false, description = "ZERO_LITESTREAM_REGION (S3).")
    String litestream_region() default "";

    @AttributeDefinition(name = "litestream.port", min = "1", max = "65535",
            description = "ZERO_LITESTREAM_PORT: litestream's /metrics listener (zero-cache: ZERO_PORT + 2).")
    int litestream_port() default 4850;

    @AttributeDefinition(name = "litestream.checkpointThresholdMB", min = "1",
            description = "ZERO_LITESTREAM_CHECKPOINT_THRESHOLD_MB: default of the minimum checkpoint page count"
                    + " (MB * 250).")
    int litestream_checkpointThresholdMB() default 40;

    @AttributeDefinition(name = "litestream.minCheckpointPageCount", min = "-1",
            description = "ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT; -1 = checkpointThresholdMB * 250.")
    long litestream_minCheckpointPageCount() default -1;

    @AttributeDefinition(name = "litestream.maxCheckpointPageCount", min = "-1",
            description = "ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT; -1 = min * 10; 0 disables RESTART checkpoints.")
    long litestream_maxCheckpointPageCount() default -1;

    @AttributeDefinition(name = "litestream.incrementalBackupIntervalMinutes",
            description = "ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES: the replica's sync-interval (a"
                    + " fraction of a minute is allowed).")
    double litestream_incrementalBackupIntervalMinutes() default 15;

    @AttributeDefinition(name = "litestream.snapshotBackupIntervalHours",
            description = "ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_HOURS: retention is hours * 60 - 5 minutes.")
    double litestream_snapshotBackupIntervalHours() default 12;

    @AttributeDefinition(name = "litestream.multipartConcurrency", min = "1",
            description = "ZERO_LITESTREAM_MULTIPART_CONCURRENCY.")
    int litestream_multipartConcurrency() default 48;

    @AttributeDefinition(name = "litestream.multipartSize", min = "1", description = "ZERO_LITESTREAM_MULTIPART_SIZE.")
    long litestream_multipartSize() default 16_777_216;

    @AttributeDefinition(name = "litestream.restoreParallelism", min = "1",
            description = "ZERO_LITESTREAM_RESTORE_PARALLELISM: `litestream restore -parallelism`.")
    int litestream_restoreParallelism() default 48;

    @AttributeDefinition(name = "replica.file", description = "ZERO_REPLICA_FILE: the database litestream backs up.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "litestream.stopTimeoutMs", min = "1",
            description = "After SIGTERM, how long litestream may take to exit before it gets SIGKILL.")
    long litestream_stopTimeoutMs() default 10_000;

    @AttributeDefinition(name = "litestream.restartInitialMs", min = "1",
            description = "First delay before restarting litestream after it died; doubled per restart.")
    long litestream_restartInitialMs() default 1_000;

    @AttributeDefinition(name = "litestream.restartMaxMs", min = "1", description = "Largest restart delay.")
    long litestream_restartMaxMs() default 60_000;

    @AttributeDefinition(name = "litestream.snapshotProbeIntervalMs", min = "1",
            description = "Until the first snapshot is listed at the destination (`litestream snapshots`), how often"
                    + " to look; readiness waits for it.")
    long litestream_snapshotProbeIntervalMs() default 5_000;
}

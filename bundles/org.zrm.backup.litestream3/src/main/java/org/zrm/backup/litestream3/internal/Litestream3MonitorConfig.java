package org.zrm.backup.litestream3.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of PID {@code org.zrm.backup.litestream3}. Names follow zero-cache's
 * {@code --litestream-*} options; the timing properties are ZRM's (upstream hard-codes them).
 */
@ObjectClassDefinition(pid = "org.zrm.backup.litestream3", name = "ZRM backup monitor: litestream v0.3",
        description = "Purges the change log up to the watermarks litestream reports as backed up"
                + " (litestream_replica_progress on its /metrics), verified against the destination with"
                + " 'litestream snapshots' and 'litestream wal'.")
@interface Litestream3MonitorConfig {

    @AttributeDefinition(name = "litestream.backupURL", required = false,
            description = "Backup location, ZERO_LITESTREAM_BACKUP_URL, e.g. s3://bucket/path; sent to restoring"
                    + " nodes. Empty: the monitor is registered but unconfigured, and the coordinator will not"
                    + " start it.")
    String litestream_backupURL() default "";

    @AttributeDefinition(name = "litestream.port", min = "1", max = "65535",
            description = "Port of litestream's metrics listener, ZERO_LITESTREAM_PORT (zero-cache: ZERO_PORT + 2)."
                    + " The monitor reads http://127.0.0.1:<port>/metrics.")
    int litestream_port() default 4850;

    @AttributeDefinition(name = "litestream.metricsURL", required = false,
            description = "Overrides the metrics endpoint derived from litestream.port (http or https).")
    String litestream_metricsURL() default "";

    @AttributeDefinition(name = "litestream.executable", required = false,
            description = "The litestream v0.3 executable, ZERO_LITESTREAM_EXECUTABLE; runs 'snapshots' and 'wal'"
                    + " to verify the backup. Required when litestream.backupURL is set.")
    String litestream_executable() default "";

    @AttributeDefinition(name = "litestream.configPath", required = false,
            description = "litestream configuration file passed as LITESTREAM_CONFIG, ZERO_LITESTREAM_CONFIG_PATH;"
                    + " must be the one 'litestream replicate' uses. Empty: inherit LITESTREAM_CONFIG.")
    String litestream_configPath() default "";

    @AttributeDefinition(name = "litestream.endpoint", required = false,
            description = "S3 endpoint, ZERO_LITESTREAM_ENDPOINT (passed to litestream).")
    String litestream_endpoint() default "";

    @AttributeDefinition(name = "litestream.region", required = false,
            description = "S3 region, ZERO_LITESTREAM_REGION (passed to litestream).")
    String litestream_region() default "";

    @AttributeDefinition(name = "replica.file",
            description = "The SQLite replica that litestream backs up, ZERO_REPLICA_FILE; listed by the"
                    + " verification and read (read-only) for the backup lag.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "litestream.checkIntervalMs", min = "1",
            description = "Time between checks (zero-cache: 60000).")
    long litestream_checkIntervalMs() default 60_000;

    @AttributeDefinition(name = "litestream.wedgedShutdownGraceMs", min = "1",
            description = "How long the backup may stay continuously behind litestream's claimed progress before it"
                    + " is reported as wedged, a fatal error (zero-cache: 900000).")
    long litestream_wedgedShutdownGraceMs() default 900_000;

    @AttributeDefinition(name = "litestream.listBackupTimeoutMs", min = "1",
            description = "Timeout of each 'litestream snapshots' / 'litestream wal' listing; the process is killed"
                    + " after it (zero-cache: 30000).")
    long litestream_listBackupTimeoutMs() default 30_000;

    @AttributeDefinition(name = "litestream.metricsTimeoutMs", min = "1",
            description = "Timeout of one /metrics fetch (zero-cache has none).")
    long litestream_metricsTimeoutMs() default 30_000;
}

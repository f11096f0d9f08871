package org.zrm.backup.vfs.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/** Configuration of PID {@code org.zrm.backup.vfs}; names follow zero-cache's {@code litestream} options. */
@ObjectClassDefinition(name = "ZRM backup monitor (vfs)",
        description = "Litestream v0.5 backups: the backed-up watermark is read from the backup itself through the"
                + " Litestream VFS extension, in a child process.")
@interface VfsBackupMonitorConfig {

    @AttributeDefinition(name = "litestream.backupURL", required = false,
            description = "Backup destination, ZERO_LITESTREAM_BACKUP_URL (e.g. s3://bucket/path). Empty: the monitor"
                    + " is registered but unconfigured, and the coordinator will not start it.")
    String litestream_backupURL() default "";

    @AttributeDefinition(name = "litestream.endpoint", required = false,
            description = "S3 endpoint, ZERO_LITESTREAM_ENDPOINT; added to an s3:// replica URL as ?endpoint= unless"
                    + " already there.")
    String litestream_endpoint() default "";

    @AttributeDefinition(name = "litestream.region", required = false,
            description = "S3 region, ZERO_LITESTREAM_REGION; added to an s3:// replica URL as ?region= unless already"
                    + " there.")
    String litestream_region() default "";

    @AttributeDefinition(name = "litestream.vfsExtensionPath",
            description = "The litestream-vfs.so SQLite extension, ZERO_LITESTREAM_VFS_EXTENSION_PATH.")
    String litestream_vfsExtensionPath() default "/usr/local/lib/litestream-vfs.so";

    @AttributeDefinition(name = "litestream.vfsProbeIntervalMs", min = "1",
            description = "Time between two reads of the backup, ZERO_LITESTREAM_VFS_PROBE_INTERVAL_MS.")
    long litestream_vfsProbeIntervalMs() default 30_000;

    @AttributeDefinition(name = "litestream.vfsProbeTimeoutMs", min = "1",
            description = "How long the reader child may take to start (ready) and to answer one read,"
                    + " ZERO_LITESTREAM_VFS_PROBE_TIMEOUT_MS; on timeout it is killed and a new one started.")
    long litestream_vfsProbeTimeoutMs() default 30_000;

    @AttributeDefinition(name = "litestream.vfsLogFile", required = false,
            description = "LITESTREAM_LOG_FILE of the extension, ZERO_LITESTREAM_VFS_LOG_FILE. Empty: it logs to the"
                    + " child's stdout, which the monitor logs.")
    String litestream_vfsLogFile() default "";

    @AttributeDefinition(name = "litestream.logLevel", description = "Extension log level, ZERO_LITESTREAM_LOG_LEVEL"
            + " (passed upper-cased as LITESTREAM_LOG_LEVEL; the extension distinguishes only DEBUG).",
            options = {@Option(value = "debug"), @Option(value = "info"), @Option(value = "warn"),
                @Option(value = "error")})
    String litestream_logLevel() default "warn";

    @AttributeDefinition(name = "litestream.vfsReaderCommand", required = false,
            description = "Replaces the reader child's command line (split on whitespace, quotes group words)."
                    + " Empty: <java.home>/bin/java -cp <this bundle, sqlite-jdbc, Jackson> VfsWatermarkReaderMain."
                    + " The command must speak the reader's JSON lines on stdin/stdout; it gets LITESTREAM_REPLICA_URL,"
                    + " LITESTREAM_LOG_LEVEL, LITESTREAM_LOG_FILE and ZERO_LITESTREAM_VFS_EXTENSION_PATH.")
    String litestream_vfsReaderCommand() default "";
}

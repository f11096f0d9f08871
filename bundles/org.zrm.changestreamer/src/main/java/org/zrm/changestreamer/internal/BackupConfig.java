package org.zrm.changestreamer.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of PID {@value BackupComponent#PID}: which backup monitor is active. */
@ObjectClassDefinition(name = "ZRM backup-monitor coordinator",
        description = "Chooses the active backup monitor; changing the strategy swaps it live")
public @interface BackupConfig {

    @AttributeDefinition(name = "Strategy", options = {
            @org.osgi.service.metatype.annotations.Option(value = "auto", label = "auto (zero-cache's rule)"),
            @org.osgi.service.metatype.annotations.Option(value = "replica", label = "replica (no backup)"),
            @org.osgi.service.metatype.annotations.Option(value = "litestream3", label = "litestream v0.3"),
            @org.osgi.service.metatype.annotations.Option(value = "vfs", label = "litestream v0.5 (VFS)")},
            description = "auto = no backup URL: replica; ZERO_LITESTREAM_BACKUP_USING_V5: vfs; otherwise litestream3")
    String strategy() default "auto";

    @AttributeDefinition(name = "Backup URL", required = false,
            description = "ZERO_LITESTREAM_BACKUP_URL, for the auto rule")
    String litestream_backupURL() default "";

    @AttributeDefinition(name = "Backup using v5", description = "ZERO_LITESTREAM_BACKUP_USING_V5, for the auto rule")
    boolean litestream_backupUsingV5() default false;

    @AttributeDefinition(name = "Exit on fatal",
            description = "Stop the runtime when a backup monitor reports a fatal condition (a wedged backup); the"
                    + " launcher then exits with status 1 and prints the reason, for an orchestrator to restart the"
                    + " node, as zero-cache does. When off, the pipeline stays stopped"
                    + " and /status reports healthy=false")
    boolean exitOnFatal() default true;

    @AttributeDefinition(name = "Minimum cleanup delay (ms)", min = "1",
            description = "Floor of the cleanup delay a backed-up watermark must age before it is purged (zero-cache: 30000)")
    long minCleanupDelayMs() default 30_000;
}

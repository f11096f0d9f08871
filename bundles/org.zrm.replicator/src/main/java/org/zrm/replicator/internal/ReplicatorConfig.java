package org.zrm.replicator.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of PID {@code org.zrm.replicator}; names follow zero-cache's options. */
@ObjectClassDefinition(pid = "org.zrm.replicator", name = "ZRM backup replicator",
        description = "Keeps the SQLite replica file up to date from a protocol-v6 change streamer (backup mode).")
@interface ReplicatorConfig {

    @AttributeDefinition(name = "replica.file", description = "SQLite replica file, ZERO_REPLICA_FILE; created by the"
            + " change source's initial sync, which the replicator waits for.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "upstream.target",
            description = "DS target filter of the upstream to subscribe to: (zrm.replicator.upstream=in-process) for this"
                    + " runtime's change streamer, (zrm.replicator.upstream=remote) for changeStreamer.uri. The launcher"
                    + " derives it from ZERO_CHANGE_STREAMER_URI.")
    String upstream_target() default ReplicatorComponent.DEFAULT_UPSTREAM_TARGET;

    @AttributeDefinition(name = "changeStreamer.uri", required = false,
            description = "The ws:// (or http://) base URI of a protocol-v6 change streamer, ZERO_CHANGE_STREAMER_URI;"
                    + " used when upstream.target selects the remote upstream.")
    String changeStreamer_uri() default "";

    @AttributeDefinition(name = "task.id", required = false,
            description = "Task id sent as taskID, ZERO_TASK_ID; empty = a random id per activation.")
    String task_id() default "";

    @AttributeDefinition(name = "replica.walAutocheckpoint", min = "-1",
            description = "PRAGMA wal_autocheckpoint of the writer, in pages. -1 (default): 0 when litestream.backupURL"
                    + " is set, because litestream then owns checkpoints (zero-cache's backup mode; a checkpoint behind"
                    + " litestream v0.3's back makes it start a new generation), otherwise SQLite's default 1000.")
    int replica_walAutocheckpoint() default -1;

    @AttributeDefinition(name = "litestream.backupURL", required = false,
            description = "ZERO_LITESTREAM_BACKUP_URL: only decides the default of replica.walAutocheckpoint.")
    String litestream_backupURL() default "";

    @AttributeDefinition(name = "replicator.retryInitialMs", min = "1",
            description = "First delay before resubscribing after a failure (and between checks for the replica file);"
                    + " doubled per attempt.")
    long replicator_retryInitialMs() default 1000;

    @AttributeDefinition(name = "replicator.retryMaxMs", min = "1", description = "Largest delay between attempts.")
    long replicator_retryMaxMs() default 30_000;

    @AttributeDefinition(name = "changeStreamer.connectTimeoutMs", min = "1",
            description = "Timeout of the WebSocket handshake with a remote change streamer.")
    long changeStreamer_connectTimeoutMs() default 10_000;

    @AttributeDefinition(name = "changeStreamer.maxMessageBytes", min = "1024",
            description = "Largest message accepted from a remote change streamer (zero-cache's server accepts 100 MiB).")
    int changeStreamer_maxMessageBytes() default 100 << 20;
}

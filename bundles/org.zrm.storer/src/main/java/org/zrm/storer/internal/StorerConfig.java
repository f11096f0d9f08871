package org.zrm.storer.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;
import org.zrm.storer.internal.queue.StorerQueueSettings;

/** Configuration of PID {@value StorerComponent#PID}; names follow zero-cache's options. */
@ObjectClassDefinition(pid = StorerComponent.PID, name = "ZRM storer (change log)",
        description = "The Postgres change log (schema \"<app>_<shard>/cdc\", version 6) shared with zero-cache")
public @interface StorerConfig {

    @AttributeDefinition(name = "Change DB", type = AttributeType.PASSWORD,
            description = "URI of the change database, postgresql://user:password@host:port/db (ZERO_CHANGE_DB)")
    String change_db();

    @AttributeDefinition(name = "App ID", description = "Application id, [a-z0-9_]+ (ZERO_APP_ID)")
    String app_id() default "zero";

    @AttributeDefinition(name = "Shard number", min = "0", description = "Shard number (ZERO_SHARD_NUM)")
    int shard_num() default 0;

    @AttributeDefinition(name = "Change-log batch size", min = "1",
            description = "Rows per changeLog INSERT; 1 writes each row on its own (ZERO_CHANGE_LOG_BATCH_SIZE)")
    int change_logBatchSize() default StorerSettings.DEFAULT_BATCH_SIZE;

    @AttributeDefinition(name = "Max connections", min = "2",
            description = "Connections to the change database (ZERO_CHANGE_MAX_CONNS)")
    int change_maxConns() default StorerSettings.DEFAULT_MAX_CONNS;

    @AttributeDefinition(name = "Statement timeout (ms)", min = "1",
            description = "How long a write statement may take before the write transaction fails")
    int change_statementTimeoutMs() default StorerSettings.DEFAULT_STATEMENT_TIMEOUT_MS;

    @AttributeDefinition(name = "Change-log count interval (ms)", min = "5000", max = "3600000",
            description = "How often the change log's rows and oldest/newest watermark are counted for /status and"
                    + " /metrics (a scan of the table's index); clamped to 5 s .. 1 h")
    long change_sizeSampleIntervalMs() default 30_000;

    @AttributeDefinition(name = "Change-log insert mode",
            options = {@Option(label = "copy", value = "copy"), @Option(label = "json", value = "json")},
            description = "How a batch of changeLog rows is written: copy = one binary COPY FROM STDIN per batch"
                    + " (default; 2-3x faster on Zero's W3 workload); json = upstream's json_to_recordset"
                    + " INSERT. The stored rows are identical either way")
    String change_insertMode() default "copy";

    @AttributeDefinition(name = "Back-pressure: heap proportion", min = "0", max = "1",
            description = "Share of the free heap (measured when the storer queue starts) that queued changes may"
                    + " use before the change stream is slowed; in (0, 1]"
                    + " (ZERO_CHANGE_STREAMER_BACK_PRESSURE_LIMIT_HEAP_PROPORTION)")
    double changeStreamer_backPressureLimitHeapProportion() default StorerQueueSettings.DEFAULT_HEAP_PROPORTION;

    @AttributeDefinition(name = "Back-pressure: byte cap", min = "0",
            description = "Absolute cap on queued change text in bytes, on top of the heap proportion; 0 = none")
    long change_backPressureLimitBytes() default 0;

    @AttributeDefinition(name = "Back-pressure: max queued messages", min = "1",
            description = "Bound on queued messages whatever their size; the change stream is slowed beyond it")
    int change_maxQueuedMessages() default StorerQueueSettings.DEFAULT_MAX_QUEUED_MESSAGES;

    @AttributeDefinition(name = "Group commit: max transactions", min = "1", max = "100000",
            description = "Upstream transactions written in one change-db transaction at most; 1 turns group commit off")
    int change_groupCommit_maxTransactions() default StorerQueueSettings.DEFAULT_MAX_GROUP_TRANSACTIONS;

    @AttributeDefinition(name = "Group commit: max bytes", min = "1",
            description = "Change text per group commit at most; no further transaction joins a group past it")
    long change_groupCommit_maxBytes() default StorerQueueSettings.DEFAULT_MAX_GROUP_BYTES;

    @AttributeDefinition(name = "Group commit: max delay (ms)", min = "0", max = "1000",
            description = "How long a group may wait for the next queued transaction before committing; 0 = never"
                    + " wait (only coalesce what is already queued)")
    long change_groupCommit_maxDelayMs() default 0;
}

package org.zrm.storer.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of PID {@value StorerComponent#PID}; names follow zero-cache's options. */
@ObjectClassDefinition(name = "ZRM storer (change log)",
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
}

package org.zrm.changesource.endpoint.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of PID {@code org.zrm.changesource.endpoint} (read after {@code org.zrm.identity},
 * which gives {@code app.id}, {@code shard.num} and {@code replica.file}).
 */
@ObjectClassDefinition(pid = "org.zrm.changesource.endpoint", name = "ZRM custom change-source endpoint",
        description = "Serves Zero's custom change-source protocol at /changes/v0/stream (off unless apiKey is set).")
@interface EndpointConfig {

    @AttributeDefinition(name = "apiKey", type = AttributeType.PASSWORD, required = false,
            description = "The secret clients pass as ?apiKey=…; empty: the endpoint is off (ZRM_CUSTOM_ENDPOINT_API_KEY).")
    String apiKey() default "";

    @AttributeDefinition(name = "app.id", description = "App id, ZERO_APP_ID.")
    String app_id() default "zero";

    @AttributeDefinition(name = "shard.num", min = "0", description = "Shard number, ZERO_SHARD_NUM.")
    int shard_num() default 0;

    @AttributeDefinition(name = "app.publications", required = false,
            description = "The publications this runtime replicates (ZERO_APP_PUBLICATIONS); a client that names"
                    + " others is refused.")
    String[] app_publications() default {};

    @AttributeDefinition(name = "replica.file", description = "The replica the initial snapshot is read from.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "pingIntervalMs", min = "1",
            description = "Ping interval; a client silent for a whole interval is disconnected.")
    long pingIntervalMs() default 30_000;

    @AttributeDefinition(name = "maxQueuedChars", min = "1",
            description = "Per connection: characters handed to the socket but not yet written; at the bound the"
                    + " connection stops taking changes (see docs/OPERATIONS.md).")
    long maxQueuedChars() default 8L << 20;

    @AttributeDefinition(name = "maxIncomingChars", min = "1",
            description = "Largest upstream frame accepted (clients send only small status acks); larger: close 1009.")
    int maxIncomingChars() default 64 << 10;
}

package org.zrm.changesource.custom.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of PID {@code org.zrm.changesource.custom} (read after {@code org.zrm.identity}).
 * The component has two PIDs, so this is not {@code @Designate}d; it documents the properties.
 */
@ObjectClassDefinition(pid = "org.zrm.changesource.custom", name = "ZRM custom change source",
        description = "Client of Zero's custom change-source WebSocket protocol (ZERO_UPSTREAM_TYPE=custom).")
@interface CustomChangeSourceConfig {

    @AttributeDefinition(name = "upstream.db", type = AttributeType.PASSWORD,
            description = "The endpoint's ws://, wss://, http:// or https:// URL (ZERO_UPSTREAM_DB), e.g."
                    + " wss://host/changes/v0/stream?apiKey=…; the query is masked in logs.")
    String upstream_db() default "";

    @AttributeDefinition(name = "app.id", description = "App id, ZERO_APP_ID.")
    String app_id() default "zero";

    @AttributeDefinition(name = "shard.num", min = "0", description = "Shard number, ZERO_SHARD_NUM.")
    int shard_num() default 0;

    @AttributeDefinition(name = "app.publications", required = false,
            description = "Publications (comma-separated), sent as one publications parameter each.")
    String[] app_publications() default {};

    @AttributeDefinition(name = "replica.file", description = "SQLite replica file, ZERO_REPLICA_FILE.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "connectTimeoutMs", min = "1", description = "Timeout of opening the WebSocket.")
    long connectTimeoutMs() default 10_000;

    @AttributeDefinition(name = "pingIntervalMs", min = "1",
            description = "Ping interval; a socket silent (no message, no pong) for one interval is terminated.")
    long pingIntervalMs() default 30_000;

    @AttributeDefinition(name = "maxMessageChars", min = "1", description = "Largest message accepted, in characters.")
    int maxMessageChars() default 256 << 20;

    @AttributeDefinition(name = "bufferMessages", min = "1",
            description = "Messages read ahead of the change streamer; at the bound the socket is not read.")
    int bufferMessages() default 1024;

    @AttributeDefinition(name = "bufferChars", min = "1",
            description = "Characters of messages read ahead of the change streamer; at the bound the socket is not read.")
    long bufferChars() default 16L << 20;
}

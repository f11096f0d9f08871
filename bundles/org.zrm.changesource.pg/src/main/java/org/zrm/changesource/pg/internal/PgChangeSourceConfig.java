package org.zrm.changesource.pg.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of PID {@code org.zrm.changesource.pg}; names follow zero-cache's options. */
@ObjectClassDefinition(pid = "org.zrm.changesource.pg", name = "ZRM Postgres change source",
        description = "Logical replication from the upstream Postgres database (zero-cache's pg change source).")
@interface PgChangeSourceConfig {

    @AttributeDefinition(name = "upstream.db", type = AttributeType.PASSWORD,
            description = "Upstream Postgres URI, postgresql://user:password@host:port/db (ZERO_UPSTREAM_DB). Masked in logs.")
    String upstream_db();

    @AttributeDefinition(name = "app.id", description = "App id ([a-z0-9_]+), ZERO_APP_ID.")
    String app_id() default "zero";

    @AttributeDefinition(name = "app.publications", required = false,
            description = "Publications to replicate (comma-separated); empty = _{app}_public_{shard} over schema public.")
    String[] app_publications() default {};

    @AttributeDefinition(name = "shard.num", min = "0", description = "Shard number, ZERO_SHARD_NUM.")
    int shard_num() default 0;

    @AttributeDefinition(name = "replica.file", description = "SQLite replica file, ZERO_REPLICA_FILE.")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "replicationLag.reportIntervalMs",
            description = "Interval of replication lag reports in ms; <= 0 disables them.")
    long replicationLag_reportIntervalMs() default 30_000;

    @AttributeDefinition(name = "replication.inboundTimeoutMs",
            description = "Reconnect when nothing arrives from Postgres for this long: 0 = 2 x wal_sender_timeout"
                    + " (disabled when wal_sender_timeout = 0), > 0 = this many ms, < 0 = never.")
    long replication_inboundTimeoutMs() default 0;

    @AttributeDefinition(name = "replication.keepaliveFraction",
            description = "Send a status update when nothing was sent for this fraction of wal_sender_timeout.")
    double replication_keepaliveFraction() default 0.75;

    @AttributeDefinition(name = "replication.slotActiveRetries", min = "0",
            description = "Retries of START_REPLICATION while the slot is still active for a terminated walsender.")
    int replication_slotActiveRetries() default 5;

    @AttributeDefinition(name = "replication.slotActiveRetryDelayMs", min = "0",
            description = "First delay between those retries, doubled per attempt (capped at 1 s).")
    long replication_slotActiveRetryDelayMs() default 10;

    @AttributeDefinition(name = "replication.maxMessageBytes", min = "1024",
            description = "Largest replication message (one row change) accepted; larger ones stop the stream with an error.")
    int replication_maxMessageBytes() default 256 << 20;

    @AttributeDefinition(name = "replication.bufferMessages", min = "1",
            description = "Messages buffered between Postgres and the change streamer before reading pauses.")
    int replication_bufferMessages() default 1024;

    @AttributeDefinition(name = "replication.bufferBytes", min = "1",
            description = "Bytes buffered between Postgres and the change streamer before reading pauses.")
    long replication_bufferBytes() default 16L << 20;

    @AttributeDefinition(name = "slotMetrics.intervalMs", min = "1000", max = "600000",
            description = "How often the shard's replication slots (WAL retained, safe_wal_size, wal_status, active) are"
                    + " read from pg_replication_slots for /status and /metrics, over an ordinary connection; clamped to"
                    + " 1 s .. 10 min.")
    long slotMetrics_intervalMs() default 10_000;

    @AttributeDefinition(name = "initialSync.tableCopyWorkers", min = "1",
            description = "Tables copied in parallel during initial sync (ZERO_INITIAL_SYNC_TABLE_COPY_WORKERS).")
    int initialSync_tableCopyWorkers() default 5;

    @AttributeDefinition(name = "initialSync.textCopy",
            description = "Use text COPY instead of binary COPY for initial sync (ZERO_INITIAL_SYNC_TEXT_COPY).")
    boolean initialSync_textCopy() default false;

    @AttributeDefinition(name = "tables.requireRowKey",
            description = "Reject a published table without a primary key or a unique index over NOT NULL columns, at"
                    + " initial sync and when a transaction commits one (replication then halts with reset-required)."
                    + " false = zero-cache's behaviour: such a table is replicated with a warning and never synced to"
                    + " clients.")
    boolean tables_requireRowKey() default true;
}

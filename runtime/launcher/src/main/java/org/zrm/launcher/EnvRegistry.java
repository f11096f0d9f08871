package org.zrm.launcher;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The environment variables of ZRM, in one place: zero-cache's {@code ZERO_*} variables that ZRM
 * reads (names and defaults as in zero-cache 1.8, {@code config/zero-config.ts}) and the
 * launcher's own {@code ZRM_*} variables. Components that read a new variable add a row here, so
 * that {@code zrm env} documents it and the launch report shows (and masks) it.
 */
public final class EnvRegistry {
    /** {@code ZERO_UPSTREAM_DB}: the upstream PostgreSQL; unset means "start the embedded one". */
    public static final String UPSTREAM_DB = "ZERO_UPSTREAM_DB";
    /** {@code ZERO_UPSTREAM_TYPE}: the change source's type, {@code pg} or one a deployed bundle registers. */
    public static final String UPSTREAM_TYPE = "ZERO_UPSTREAM_TYPE";
    /** {@code ZERO_CHANGE_DB}: where the change log lives; defaults to the upstream. */
    public static final String CHANGE_DB = "ZERO_CHANGE_DB";
    /** {@code ZERO_CHANGE_STREAMER_URI}: a remote change streamer for the replicator, as zero-cache reads it. */
    public static final String CHANGE_STREAMER_URI = "ZERO_CHANGE_STREAMER_URI";
    /** {@code ZRM_BIND_ADDRESS}: the address the HTTP port binds to; empty for every interface. */
    public static final String BIND_ADDRESS = "ZRM_BIND_ADDRESS";
    /** {@code ZRM_REPLICATOR_UPSTREAM}: {@code in-process} or {@code remote}, the replicator's DS target. */
    public static final String REPLICATOR_UPSTREAM = "ZRM_REPLICATOR_UPSTREAM";
    /** {@code ZERO_PORT}: zero-cache's main port; the other ports derive from it. */
    public static final String PORT = "ZERO_PORT";
    /** {@code ZERO_CHANGE_STREAMER_PORT}: the change-streamer's HTTP/WebSocket port. */
    public static final String CHANGE_STREAMER_PORT = "ZERO_CHANGE_STREAMER_PORT";
    /** {@code ZERO_LITESTREAM_PORT}: litestream's metrics port. */
    public static final String LITESTREAM_PORT = "ZERO_LITESTREAM_PORT";
    /** {@code ZERO_APP_ID}. */
    public static final String APP_ID = "ZERO_APP_ID";
    /** {@code ZERO_SHARD_NUM}. */
    public static final String SHARD_NUM = "ZERO_SHARD_NUM";
    /** {@code ZERO_SHARD_ID}: removed upstream; setting it is an error. */
    public static final String SHARD_ID = "ZERO_SHARD_ID";
    /** {@code ZERO_CHANGE_LOG_BATCH_SIZE}. */
    public static final String CHANGE_LOG_BATCH_SIZE = "ZERO_CHANGE_LOG_BATCH_SIZE";
    /** {@code ZRM_HOME}: the project folder. */
    public static final String ZRM_HOME = "ZRM_HOME";
    /** {@code ZRM_CONFIG_DIR}. */
    public static final String ZRM_CONFIG_DIR = "ZRM_CONFIG_DIR";
    /** {@code ZRM_DEPLOY_DIR}. */
    public static final String ZRM_DEPLOY_DIR = "ZRM_DEPLOY_DIR";
    /** {@code ZRM_STATE_DIR}. */
    public static final String ZRM_STATE_DIR = "ZRM_STATE_DIR";
    /** {@code ZRM_JAVA_OPTS}: extra JVM options for the runtime. */
    public static final String ZRM_JAVA_OPTS = "ZRM_JAVA_OPTS";
    /** {@code ZRM_EMBEDDED_PG_PORT}: the embedded PostgreSQL's port. */
    public static final String ZRM_EMBEDDED_PG_PORT = "ZRM_EMBEDDED_PG_PORT";
    /** {@code ZRM_PG_BIN}: where the PostgreSQL 15 server binaries are. */
    public static final String ZRM_PG_BIN = "ZRM_PG_BIN";
    /** {@code ZRM_CACHE_DIR}: where the PostgreSQL build from Maven Central is unpacked. */
    public static final String ZRM_CACHE_DIR = "ZRM_CACHE_DIR";

    private static final List<EnvVar> VARIABLES = List.of(
            new EnvVar(UPSTREAM_DB, null, "upstream PostgreSQL URI; unset: the launcher starts an embedded PostgreSQL 15", false),
            new EnvVar(UPSTREAM_TYPE, "pg", "change-source type: pg, or a type a deployed change-source bundle registers", false),
            new EnvVar(CHANGE_DB, null, "change-log database URI; default: ZERO_UPSTREAM_DB", false),
            new EnvVar(PORT, "4848", "zero-cache's main port; the other ports derive from it", false),
            new EnvVar(CHANGE_STREAMER_PORT, null, "change-streamer HTTP/WebSocket port; default: ZERO_PORT + 1", false),
            new EnvVar(LITESTREAM_PORT, null, "litestream metrics port; default: ZERO_PORT + 2", false),
            new EnvVar(APP_ID, "zero", "app id, ^[a-z0-9_]+$; names the shard schema, publications and slots", false),
            new EnvVar("ZERO_APP_PUBLICATIONS", null, "comma-separated publications; none: the internal _<app>_public_<n>", false),
            new EnvVar(SHARD_NUM, "0", "shard number, an integer >= 0", false),
            new EnvVar("ZERO_REPLICA_FILE", "zero.db", "SQLite replica file (relative to the state folder)", false),
            new EnvVar("ZERO_CHANGE_MAX_CONNS", "5", "change-DB connection pool size", false),
            new EnvVar("ZERO_CHANGE_STATEMENT_TIMEOUT_MS", "20000", "change-DB statement timeout", false),
            new EnvVar("ZERO_INITIAL_SYNC_TABLE_COPY_WORKERS", "5", "tables copied in parallel during initial sync", false),
            new EnvVar("ZERO_INITIAL_SYNC_TEXT_COPY", "false", "text instead of binary COPY for initial sync", false),
            new EnvVar("ZERO_REPLICATION_LAG_REPORT_INTERVAL_MS", "30000", "replication lag report interval; <= 0 disables", false),
            new EnvVar(CHANGE_LOG_BATCH_SIZE, "2000", "change-log rows per INSERT, an integer >= 1", false),
            new EnvVar("ZERO_AUTO_RESET", "true", "resync automatically when replication cannot continue", false),
            new EnvVar("ZERO_TASK_ID", null, "owner id of this replication manager; default: generated", false),
            new EnvVar("ZERO_CHANGE_STREAMER_ADDRESS", null, "host:port subscribers discover in the change log; default: <hostname>:<change-streamer port>", false),
            new EnvVar("ZERO_CHANGE_STREAMER_PROTOCOL", "ws", "ws | wss, prefixed to the published address", false),
            new EnvVar("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "15000", "wait before streaming unless a serving subscriber connects first", false),
            new EnvVar("ZERO_CHANGE_STREAMER_FLOW_CONTROL_CONSENSUS_PADDING_SECONDS", "1", "flow control: after a majority consumed, wait this long for the rest; < 0: wait for all", false),
            new EnvVar(CHANGE_STREAMER_URI, null, "replicator source: empty = this runtime's change streamer; ws:// or http://host:port of any protocol-v6 change streamer", false),
            new EnvVar(REPLICATOR_UPSTREAM, "in-process", "replicator upstream: in-process | remote (derived: remote when ZERO_CHANGE_STREAMER_URI is set)", false),
            new EnvVar("ZERO_LITESTREAM_BACKUP_URL", null, "backup destination; with strategy auto it selects the litestream3 (or vfs) backup monitor and enables /snapshot", false),
            new EnvVar("ZERO_LITESTREAM_BACKUP_USING_V5", "false", "the backup is made by litestream v0.5: strategy auto selects the vfs monitor", false),
            new EnvVar("ZERO_LITESTREAM_EXECUTABLE", null, "litestream binary ZRM runs (replicate, restore, snapshots/wal listings)", false),
            new EnvVar("ZERO_LITESTREAM_EXECUTABLE_V5", null, "litestream v0.5 binary (restore with ZERO_LITESTREAM_RESTORE_USING_V5)", false),
            new EnvVar("ZERO_LITESTREAM_RESTORE_USING_V5", "false", "restore with the v0.5 binary", false),
            new EnvVar("ZERO_LITESTREAM_CONFIG_PATH", null, "litestream config file (LITESTREAM_CONFIG); default: zero-cache's config.yml, written to <replica>-litestream.yml", false),
            new EnvVar("ZERO_LITESTREAM_CHECKPOINT_THRESHOLD_MB", "40", "litestream: default min checkpoint page count (MB * 250)", false),
            new EnvVar("ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT", null, "litestream min-checkpoint-page-count; default: threshold MB * 250", false),
            new EnvVar("ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT", null, "litestream max-checkpoint-page-count; default: min * 10", false),
            new EnvVar("ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES", "15", "litestream sync-interval", false),
            new EnvVar("ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_HOURS", "12", "litestream retention (hours * 60 - 5 minutes)", false),
            new EnvVar("ZERO_LITESTREAM_MULTIPART_CONCURRENCY", "48", "litestream multipart-concurrency", false),
            new EnvVar("ZERO_LITESTREAM_MULTIPART_SIZE", "16777216", "litestream multipart-size", false),
            new EnvVar("ZERO_LITESTREAM_RESTORE_PARALLELISM", "48", "litestream restore -parallelism", false),
            new EnvVar("ZERO_LOG_FORMAT", "text", "litestream log type (text or json)", false),
            new EnvVar("ZERO_LITESTREAM_ENDPOINT", null, "S3 endpoint of the backup", false),
            new EnvVar("ZERO_LITESTREAM_REGION", null, "S3 region of the backup", false),
            new EnvVar("ZERO_LITESTREAM_LOG_LEVEL", "warn", "litestream and VFS extension log level", false),
            new EnvVar("ZERO_LITESTREAM_VFS_EXTENSION_PATH", "/usr/local/lib/litestream-vfs.so", "litestream v0.5 VFS extension the vfs monitor's reader loads", false),
            new EnvVar("ZERO_LITESTREAM_VFS_PROBE_INTERVAL_MS", "30000", "vfs monitor: backup read period", false),
            new EnvVar("ZERO_LITESTREAM_VFS_PROBE_TIMEOUT_MS", "30000", "vfs monitor: reader start-up and per-read bound", false),
            new EnvVar("ZERO_LITESTREAM_VFS_LOG_FILE", null, "VFS extension log file; default: its stdout", false),
            new EnvVar("ZERO_ADMIN_PASSWORD", null, "password of /status, /metrics and the status page (basic auth, any user, or a bearer token)", true),
            new EnvVar(BIND_ADDRESS, null, "address the change-streamer port binds to; default: every interface, as zero-cache", false),
            new EnvVar("ZRM_CUSTOM_ENDPOINT_API_KEY", null, "secret of the custom change-source endpoint /changes/v0/stream; unset: the endpoint is off", true),
            new EnvVar("ZRM_CHANGE_STREAMER_ALLOW", null, "comma-separated CIDRs allowed to open /replication/* connections; default: anyone", false),
            new EnvVar("ZRM_SUBSCRIBER_MAX_BUFFERED_BYTES", "67108864", "unconsumed bytes one subscriber may hold; beyond it a live one is disconnected (it reconnects and catches up), one still catching up is caught up again from the change log; at least 131072", false),
            new EnvVar(ZRM_HOME, null, "project folder; default: derived from the launcher jar's location", false),
            new EnvVar(ZRM_CONFIG_DIR, null, "watched .cfg folder; default: <project>/conf, seeded from runtime/conf", false),
            new EnvVar(ZRM_DEPLOY_DIR, null, "hot-deploy bundle folder; default: <project>/deploy", false),
            new EnvVar(ZRM_STATE_DIR, null, "state folder (embedded PostgreSQL, replica, caches); default: <project>/run", false),
            new EnvVar(ZRM_JAVA_OPTS, null, "extra JVM options for the runtime, e.g. -Xmx2g", false),
            new EnvVar(ZRM_EMBEDDED_PG_PORT, null, "port of the embedded PostgreSQL on 127.0.0.1; default: a free port", false),
            new EnvVar(ZRM_PG_BIN, null, "folder with initdb, pg_ctl and postgres; default: /usr/lib/postgresql/15/bin,"
                    + " else PostgreSQL 15 from Maven Central, unpacked into ZRM_CACHE_DIR", false),
            new EnvVar(ZRM_CACHE_DIR, null, "cache of the unpacked PostgreSQL build; default: ~/.cache/zrm"
                    + " (/var/cache/zrm for root)", false));

    private static final Map<String, EnvVar> BY_NAME = index();

    private EnvRegistry() {}

    /** @return every known variable, in documentation order */
    public static List<EnvVar> all() {
        return VARIABLES;
    }

    /** @return the variable called {@code name}, if known */
    public static Optional<EnvVar> find(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    private static Map<String, EnvVar> index() {
        Map<String, EnvVar> byName = new LinkedHashMap<>();
        for (EnvVar v : VARIABLES) {
            if (byName.put(v.name(), v) != null) {
                throw new IllegalStateException("duplicate variable " + v.name());
            }
        }
        return Map.copyOf(byName);
    }
}

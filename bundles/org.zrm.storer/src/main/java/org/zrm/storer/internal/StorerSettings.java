package org.zrm.storer.internal;

import org.zrm.config.PostgresUri;

import java.util.Objects;
import java.util.regex.Pattern;
import org.zrm.secret.Secrets;

/**
 * Everything a {@link PgChangeLog} needs, validated on construction, so that the DS component and
 * other code in this bundle (the storer queue, benchmarks, tests) build the change log the same way.
 *
 * @param changeDb the change database URI ({@code postgresql://user:password@host:port/db}); secret
 * @param appId the application id ({@code [a-z0-9_]+}), first part of the schema name
 * @param shardNum the shard number (≥ 0)
 * @param changeLogBatchSize rows per {@code changeLog} INSERT (≥ 1; 1 writes each row on its own)
 * @param maxConns connections in the pool (≥ 2: the writer and at least one reader)
 * @param statementTimeoutMs how long a write-transaction statement may take before it is cancelled
 *     and the transaction fails (≥ 1)
 * @param purgeChunkRows rows deleted per purge transaction (≥ 1); bounds how long a purge holds locks
 * @param lockHolderTerminateMs how long a reset's TRUNCATE may wait before blocking catch-up readers
 *     are terminated (≥ 0)
 * @param insertMode how a batch of {@code changeLog} rows is written ({@code change.insertMode})
 */
public record StorerSettings(
        String changeDb,
        String appId,
        int shardNum,
        int changeLogBatchSize,
        int maxConns,
        int statementTimeoutMs,
        int purgeChunkRows,
        int lockHolderTerminateMs,
        InsertMode insertMode) {

    /**
     * How a batch of rows reaches {@code changeLog} (property {@code change.insertMode}).
     *
     * <p><b>Decision: {@link #COPY} by default, departing from upstream's statement.</b> Upstream
     * (1.8) writes a batch as one {@code INSERT … SELECT … FROM json_to_recordset($1::json)}. The
     * server then parses the whole batch document, un-escapes every change string and validates
     * each change again with {@code ::json}, and the client escapes every quote first; measured on
     * Zero's W3 workload this reaches only about 0.25 × the rate of {@code COPY}, far below the
     * issue's target of 0.8 (docs/BENCHMARKS.md). A binary {@code COPY … FROM STDIN} per batch, on
     * the same connection inside the same transaction, sends each change's text bytes unchanged;
     * Postgres still validates them as JSON. The stored rows are identical either way (same
     * columns, same bytes, same order, same transaction), so a zero-cache reading the log cannot
     * tell which mode wrote it. {@link #JSON} keeps upstream's statement for compatibility checks
     * and comparison.
     */
    public enum InsertMode {
        /** Binary {@code COPY … FROM STDIN} per batch (default). */
        COPY,
        /** Upstream's {@code json_to_recordset} INSERT with one JSON parameter per batch. */
        JSON;

        /** @return the configuration spelling, {@code copy} or {@code json} */
        public String property() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /**
         * @param value {@code copy} or {@code json} (case-insensitive, surrounding blanks ignored)
         * @throws IllegalArgumentException naming {@code change.insertMode} otherwise
         */
        public static InsertMode parse(String value) {
            String v = value == null ? "" : value.strip();
            for (InsertMode m : values()) {
                if (m.property().equalsIgnoreCase(v)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("change.insertMode must be copy or json: \"" + value + "\"");
        }
    }

    public static final int DEFAULT_BATCH_SIZE = 2000;
    public static final int DEFAULT_MAX_CONNS = 5;
    public static final int DEFAULT_STATEMENT_TIMEOUT_MS = 20_000;
    public static final int DEFAULT_PURGE_CHUNK_ROWS = 10_000;
    public static final int DEFAULT_LOCK_HOLDER_TERMINATE_MS = 5_000;
    public static final InsertMode DEFAULT_INSERT_MODE = InsertMode.COPY;

    private static final Pattern APP_ID = Pattern.compile("^[a-z0-9_]+$");

    /** @throws IllegalArgumentException with a clear (secret-free) message if a value is invalid */
    public StorerSettings {
        Objects.requireNonNull(changeDb, "changeDb");
        Objects.requireNonNull(appId, "appId");
        Objects.requireNonNull(insertMode, "insertMode");
        PostgresUri.parse(changeDb, "change.db");
        if (!APP_ID.matcher(appId).matches()) {
            throw new IllegalArgumentException("app.id must match [a-z0-9_]+: \"" + appId + "\"");
        }
        if (shardNum < 0) {
            throw new IllegalArgumentException("shard.num must be >= 0: " + shardNum);
        }
        if (changeLogBatchSize < 1) {
            throw new IllegalArgumentException("change.logBatchSize must be >= 1 (1 turns batching off): "
                    + changeLogBatchSize);
        }
        if (maxConns < 2) {
            throw new IllegalArgumentException("change.maxConns must be >= 2 (one writer, one reader): " + maxConns);
        }
        if (statementTimeoutMs < 1) {
            throw new IllegalArgumentException("change.statementTimeoutMs must be >= 1: " + statementTimeoutMs);
        }
        if (purgeChunkRows < 1) {
            throw new IllegalArgumentException("purge chunk size must be >= 1: " + purgeChunkRows);
        }
        if (lockHolderTerminateMs < 0) {
            throw new IllegalArgumentException("lock-holder terminate delay must be >= 0: " + lockHolderTerminateMs);
        }
    }

    /** Settings with every tuning value at its default. */
    public static StorerSettings of(String changeDb, String appId, int shardNum) {
        return new StorerSettings(changeDb, appId, shardNum, DEFAULT_BATCH_SIZE, DEFAULT_MAX_CONNS,
                DEFAULT_STATEMENT_TIMEOUT_MS, DEFAULT_PURGE_CHUNK_ROWS, DEFAULT_LOCK_HOLDER_TERMINATE_MS, DEFAULT_INSERT_MODE);
    }

    public StorerSettings withChangeLogBatchSize(int size) {
        return new StorerSettings(changeDb, appId, shardNum, size, maxConns, statementTimeoutMs, purgeChunkRows,
                lockHolderTerminateMs, insertMode);
    }

    public StorerSettings withMaxConns(int conns) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, conns, statementTimeoutMs,
                purgeChunkRows, lockHolderTerminateMs, insertMode);
    }

    public StorerSettings withStatementTimeoutMs(int ms) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, ms, purgeChunkRows,
                lockHolderTerminateMs, insertMode);
    }

    public StorerSettings withPurgeChunkRows(int rows) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, statementTimeoutMs, rows,
                lockHolderTerminateMs, insertMode);
    }

    public StorerSettings withLockHolderTerminateMs(int ms) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, statementTimeoutMs,
                purgeChunkRows, ms, insertMode);
    }

    public StorerSettings withInsertMode(InsertMode mode) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, statementTimeoutMs,
                purgeChunkRows, lockHolderTerminateMs, mode);
    }

    /** @return the change-log schema name, {@code <app>_<shard>/cdc} */
    public String schemaName() {
        return appId + "_" + shardNum + "/cdc";
    }

    /** Masks the URI's password. */
    @Override
    public String toString() {
        return "StorerSettings[changeDb=" + Secrets.maskUrls(changeDb) + ", appId=" + appId + ", shardNum=" + shardNum
                + ", changeLogBatchSize=" + changeLogBatchSize + ", maxConns=" + maxConns + ", statementTimeoutMs="
                + statementTimeoutMs + ", purgeChunkRows=" + purgeChunkRows + ", lockHolderTerminateMs="
                + lockHolderTerminateMs + ", insertMode=" + insertMode.property() + "]";
    }
}

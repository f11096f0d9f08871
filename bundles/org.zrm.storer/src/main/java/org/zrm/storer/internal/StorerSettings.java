package org.zrm.storer.internal;

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
 */
public record StorerSettings(
        String changeDb,
        String appId,
        int shardNum,
        int changeLogBatchSize,
        int maxConns,
        int statementTimeoutMs,
        int purgeChunkRows,
        int lockHolderTerminateMs) {

    public static final int DEFAULT_BATCH_SIZE = 2000;
    public static final int DEFAULT_MAX_CONNS = 5;
    public static final int DEFAULT_STATEMENT_TIMEOUT_MS = 20_000;
    public static final int DEFAULT_PURGE_CHUNK_ROWS = 10_000;
    public static final int DEFAULT_LOCK_HOLDER_TERMINATE_MS = 5_000;

    private static final Pattern APP_ID = Pattern.compile("^[a-z0-9_]+$");

    /** @throws IllegalArgumentException with a clear (secret-free) message if a value is invalid */
    public StorerSettings {
        Objects.requireNonNull(changeDb, "changeDb");
        Objects.requireNonNull(appId, "appId");
        PgUri.parse(changeDb);
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
                DEFAULT_STATEMENT_TIMEOUT_MS, DEFAULT_PURGE_CHUNK_ROWS, DEFAULT_LOCK_HOLDER_TERMINATE_MS);
    }

    public StorerSettings withChangeLogBatchSize(int size) {
        return new StorerSettings(changeDb, appId, shardNum, size, maxConns, statementTimeoutMs, purgeChunkRows,
                lockHolderTerminateMs);
    }

    public StorerSettings withMaxConns(int conns) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, conns, statementTimeoutMs,
                purgeChunkRows, lockHolderTerminateMs);
    }

    public StorerSettings withStatementTimeoutMs(int ms) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, ms, purgeChunkRows,
                lockHolderTerminateMs);
    }

    public StorerSettings withPurgeChunkRows(int rows) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, statementTimeoutMs, rows,
                lockHolderTerminateMs);
    }

    public StorerSettings withLockHolderTerminateMs(int ms) {
        return new StorerSettings(changeDb, appId, shardNum, changeLogBatchSize, maxConns, statementTimeoutMs,
                purgeChunkRows, ms);
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
                + lockHolderTerminateMs + "]";
    }
}

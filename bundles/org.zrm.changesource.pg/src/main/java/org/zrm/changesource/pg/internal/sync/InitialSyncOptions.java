package org.zrm.changesource.pg.internal.sync;

import java.time.Duration;

/**
 * Tuning of initial sync. Defaults are zero-cache's constants (spec §8), except the size of a
 * buffered batch (below).
 *
 * @param tableCopyWorkers parallel COPY connections ({@code initialSync.tableCopyWorkers}, 5)
 * @param textCopy text instead of binary COPY ({@code initialSync.textCopy})
 * @param slotCreateTimeout client-side limit for CREATE_REPLICATION_SLOT (30 s); the server-side
 *     {@code lock_timeout} is one second less
 * @param insertBatchSize rows per multi-row SQLite INSERT (50)
 * @param bufferRows rows per buffered batch handed to the SQLite writer (2,000; zero-cache: 10,000)
 * @param bufferBytes COPY bytes per buffered batch (1 MiB; zero-cache: 8 MiB). Smaller than
 *     upstream's on purpose: the decoded rows of a batch take about five times its COPY bytes on
 *     the heap, and every batch in flight survives the young collections that run meanwhile. With
 *     8 MiB the batches of five workers and a full queue kept 400–480 MB live through the W6
 *     initial sync; every young collection copied them (80–110 ms pauses, 1.1 s in all), and the
 *     sync took up to 1.4× as long. With 1 MiB at most 26 MB stays live, the pauses total about
 *     0.1 s, and the SQLite writer still always has a batch waiting (docs/BENCHMARKS.md, session 17)
 * @param writerQueueBatches batches waiting for the SQLite writer; copy workers block when full, so
 *     memory stays below (workers + queue) × bufferBytes of COPY data
 * @param progressInterval minimum interval between progress log lines (5 s)
 * @param failover request a failover slot (PG ≥ 17 only)
 * @param requireRowKey reject tables without a usable row key (see {@code TableValidator})
 */
public record InitialSyncOptions(int tableCopyWorkers, boolean textCopy, Duration slotCreateTimeout,
        int insertBatchSize, int bufferRows, long bufferBytes, int writerQueueBatches, Duration progressInterval,
        boolean failover, boolean requireRowKey) {

    public InitialSyncOptions {
        if (tableCopyWorkers < 1) {
            throw new IllegalArgumentException("initialSync.tableCopyWorkers must be >= 1, got " + tableCopyWorkers);
        }
        if (insertBatchSize < 1 || bufferRows < 1 || bufferBytes < 1 || writerQueueBatches < 1) {
            throw new IllegalArgumentException("initial sync buffer sizes must be positive");
        }
        if (slotCreateTimeout.toMillis() < 2000) {
            throw new IllegalArgumentException("slot creation timeout must be at least 2 s");
        }
    }

    public static InitialSyncOptions defaults() {
        return new InitialSyncOptions(5, false, ReplicationSlots.DEFAULT_CREATE_TIMEOUT, 50, 2_000, 1L << 20, 4,
                Duration.ofSeconds(5), false, true);
    }

    public InitialSyncOptions withTableCopyWorkers(int n) {
        return new InitialSyncOptions(n, textCopy, slotCreateTimeout, insertBatchSize, bufferRows, bufferBytes,
                writerQueueBatches, progressInterval, failover, requireRowKey);
    }

    public InitialSyncOptions withTextCopy(boolean text) {
        return new InitialSyncOptions(tableCopyWorkers, text, slotCreateTimeout, insertBatchSize, bufferRows, bufferBytes,
                writerQueueBatches, progressInterval, failover, requireRowKey);
    }

    public InitialSyncOptions withSlotCreateTimeout(Duration timeout) {
        return new InitialSyncOptions(tableCopyWorkers, textCopy, timeout, insertBatchSize, bufferRows, bufferBytes,
                writerQueueBatches, progressInterval, failover, requireRowKey);
    }

    public InitialSyncOptions withBuffers(int batchSize, int rows, long bytes) {
        return new InitialSyncOptions(tableCopyWorkers, textCopy, slotCreateTimeout, batchSize, rows, bytes,
                writerQueueBatches, progressInterval, failover, requireRowKey);
    }

    public InitialSyncOptions withRequireRowKey(boolean require) {
        return new InitialSyncOptions(tableCopyWorkers, textCopy, slotCreateTimeout, insertBatchSize, bufferRows,
                bufferBytes, writerQueueBatches, progressInterval, failover, require);
    }

    public InitialSyncOptions withFailover(boolean failover) {
        return new InitialSyncOptions(tableCopyWorkers, textCopy, slotCreateTimeout, insertBatchSize, bufferRows,
                bufferBytes, writerQueueBatches, progressInterval, failover, requireRowKey);
    }
}

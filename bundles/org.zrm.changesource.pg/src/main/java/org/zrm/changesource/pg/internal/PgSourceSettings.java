package org.zrm.changesource.pg.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.zrm.changesource.pg.internal.replication.StreamSettings;
import org.zrm.changesource.pg.internal.setup.ShardId;

/**
 * Validated settings of the Postgres change source (the component's configuration as a plain
 * value that tests construct directly).
 *
 * @param upstreamUri {@code upstream.db}
 * @param shard {@code app.id} and {@code shard.num}
 * @param publications {@code app.publications} (empty = the default publication)
 * @param replicaFile {@code replica.file}
 * @param lagReportIntervalMs {@code replicationLag.reportIntervalMs}; ≤ 0 disables lag reports
 * @param inboundTimeoutMs {@code replication.inboundTimeoutMs}: 0 = 2 × wal_sender_timeout,
 *     positive = this many ms, negative = disabled
 * @param keepaliveFraction {@code replication.keepaliveFraction} of wal_sender_timeout (0.75)
 * @param slotActiveRetries {@code replication.slotActiveRetries} (5)
 * @param slotActiveRetryDelayMs {@code replication.slotActiveRetryDelayMs}, doubled per attempt (10)
 * @param maxMessageBytes {@code replication.maxMessageBytes}
 * @param bufferMessages {@code replication.bufferMessages}
 * @param bufferBytes {@code replication.bufferBytes}
 */
public record PgSourceSettings(String upstreamUri, ShardId shard, List<String> publications, String replicaFile,
        long lagReportIntervalMs, long inboundTimeoutMs, double keepaliveFraction, int slotActiveRetries,
        long slotActiveRetryDelayMs, int maxMessageBytes, int bufferMessages, long bufferBytes) {

    public PgSourceSettings {
        Objects.requireNonNull(shard, "shard");
        publications = List.copyOf(publications);
        Objects.requireNonNull(replicaFile, "replicaFile");
        if (bufferMessages < 1 || bufferBytes < 1) {
            throw new IllegalArgumentException("replication.bufferMessages and replication.bufferBytes must be positive");
        }
        if (slotActiveRetryDelayMs < 0) {
            throw new IllegalArgumentException("replication.slotActiveRetryDelayMs must be >= 0");
        }
    }

    /** Defaults for everything but the upstream and the shard. */
    public static PgSourceSettings defaults(String upstreamUri, ShardId shard, List<String> publications) {
        return new PgSourceSettings(upstreamUri, shard, publications, "zero.db", 30_000, 0, 0.75, 5, 10,
                256 << 20, 1024, 16L << 20);
    }

    public PgSourceSettings withLagReportIntervalMs(long ms) {
        return new PgSourceSettings(upstreamUri, shard, publications, replicaFile, ms, inboundTimeoutMs,
                keepaliveFraction, slotActiveRetries, slotActiveRetryDelayMs, maxMessageBytes, bufferMessages,
                bufferBytes);
    }

    public PgSourceSettings withInboundTimeoutMs(long ms) {
        return new PgSourceSettings(upstreamUri, shard, publications, replicaFile, lagReportIntervalMs, ms,
                keepaliveFraction, slotActiveRetries, slotActiveRetryDelayMs, maxMessageBytes, bufferMessages,
                bufferBytes);
    }

    public PgSourceSettings withBuffer(int messages, long bytes) {
        return new PgSourceSettings(upstreamUri, shard, publications, replicaFile, lagReportIntervalMs,
                inboundTimeoutMs, keepaliveFraction, slotActiveRetries, slotActiveRetryDelayMs, maxMessageBytes,
                messages, bytes);
    }

    public PgSourceSettings withReplicaFile(String file) {
        return new PgSourceSettings(upstreamUri, shard, publications, file, lagReportIntervalMs, inboundTimeoutMs,
                keepaliveFraction, slotActiveRetries, slotActiveRetryDelayMs, maxMessageBytes, bufferMessages,
                bufferBytes);
    }

    /** Stream settings for a slot and its publications. */
    public StreamSettings streamSettings(String slot, List<String> streamPublications) {
        return new StreamSettings(slot, streamPublications, keepaliveFraction, Duration.ofMillis(inboundTimeoutMs),
                slotActiveRetries, Duration.ofMillis(slotActiveRetryDelayMs), maxMessageBytes);
    }

    /**
     * Normalises a publications property: OSGi may deliver {@code "a,b"} as one element, and an
     * empty environment variable as {@code [""]}.
     */
    public static List<String> splitPublications(String[] values) {
        return org.zrm.config.Publications.split(values);
    }
}

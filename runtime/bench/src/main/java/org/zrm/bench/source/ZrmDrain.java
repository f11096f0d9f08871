package org.zrm.bench.source;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.pg.internal.PgChangeSource;
import org.zrm.changesource.pg.internal.PgSourceSettings;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.changesource.pg.internal.stream.StreamDrain;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The change source alone: {@link PgChangeSource#openStream} on a slot (no shard checks), then a
 * consumer that takes every message and discards it, acking each commit and each echo-requested
 * status at once. Per message that is: CopyData read and framing (pgjdbc), pgoutput parsing with
 * every column value converted to its protocol value, {@code ChangeMaker} building the protocol
 * message with its watermark, the Acker and the bounded hand-off to the consumer thread. With
 * {@code encode}, the consumer also encodes each message to its Zero JSON text with
 * {@link ProtocolCodec} (what the change streamer does next in the real pipeline, once per
 * message). The time runs from opening the stream (connecting included, as for
 * {@code pg_recvlogical}) until {@code confirmed_flush_lsn} ≥ the end LSN.
 */
final class ZrmDrain {

    /** One drain. */
    record Run(double seconds, double firstMessageSeconds, long messages, long dataChanges, long commits,
            long jsonChars, double walsenderCpu, double jvmCpu) {}

    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(60);
    private final PgCluster cluster;
    private final String db;
    private final String publication;

    ZrmDrain(PgCluster cluster, String db, String publication) {
        this.cluster = cluster;
        this.db = db;
        this.publication = publication;
    }

    Run drain(String slot, String startWatermark, String endLsn, long commits, boolean encode, WalSenders walSenders,
            ScheduledExecutorService scheduler, StageProfile profile) throws Exception {
        PgSourceSettings settings = PgSourceSettings.defaults(cluster.uri(db), new ShardId("bench", 0),
                List.of(publication)).withLagReportIntervalMs(0);
        PgChangeSource source = new PgChangeSource(settings, reset -> {
            throw new ChangeSourceException("initial sync is not part of this benchmark");
        });
        ExecutorService consumerThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "zrm-source-drain"));
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
        long cpu0 = os instanceof com.sun.management.OperatingSystemMXBean o ? o.getProcessCpuTime() : -1;
        if (profile != null) {
            profile.start();
        }
        try {
            long t0 = System.nanoTime();
            PgChangeStream stream = source.openStream(slot, List.of(publication), startWatermark);
            try (ProcCpu walsender = walSenders.await(slot, () -> true, scheduler)) {
                Future<long[]> consumer = consumerThread.submit(() -> encode ? encodeAll(stream, commits, t0)
                        : drainAll(stream, commits, t0));
                long[] counts = get(consumer);
                if (!walSenders.awaitConfirmed(slot, endLsn, 60_000)) {
                    throw new IllegalStateException("confirmed_flush_lsn of " + slot + " did not reach " + endLsn);
                }
                long t1 = System.nanoTime();
                double wsCpu = walsender == null ? -1 : walsender.stopSeconds();
                long cpu1 = os instanceof com.sun.management.OperatingSystemMXBean o ? o.getProcessCpuTime() : -1;
                return new Run((t1 - t0) / 1e9, (counts[4] - t0) / 1e9, counts[0], counts[1], counts[2], counts[3],
                        wsCpu, cpu0 < 0 ? -1 : (cpu1 - cpu0) / 1e9);
            } finally {
                stream.close();
            }
        } finally {
            if (profile != null) {
                profile.stop(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")));
            }
            source.stop();
            consumerThread.shutdownNow();
        }
    }

    private static long[] get(Future<long[]> f) throws Exception {
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    /** The author's hook: {@link StreamDrain}. @return messages, data, commits, 0, first-message time */
    private static long[] drainAll(ChangeStream stream, long commits, long t0) throws Exception {
        StreamDrain drain = new StreamDrain(stream);
        if (!drain.drainCommits(1, IDLE_TIMEOUT)) {
            throw new IllegalStateException("no commit within " + IDLE_TIMEOUT);
        }
        // The first commit's arrival stands in for "first message" (StreamDrain has no per-message hook).
        long first = System.nanoTime();
        if (!drain.drainCommits(commits - 1, IDLE_TIMEOUT)) {
            throw new IllegalStateException("stream idle for " + IDLE_TIMEOUT + " after " + drain.commits()
                    + " of " + commits + " commits");
        }
        return new long[] {drain.messages(), drain.dataChanges(), drain.commits(), 0, first};
    }

    /** Like {@link StreamDrain}, plus the JSON text of every message, as the change streamer makes it. */
    private static long[] encodeAll(ChangeStream stream, long commits, long t0) throws Exception {
        ProtocolCodec codec = new ProtocolCodec();
        long messages = 0;
        long data = 0;
        long done = 0;
        long chars = 0;
        long first = 0;
        while (done < commits) {
            ChangeStreamMessage m = stream.poll(IDLE_TIMEOUT);
            if (m == null) {
                throw new IllegalStateException("stream idle for " + IDLE_TIMEOUT + " after " + done + " commits");
            }
            if (first == 0) {
                first = System.nanoTime();
            }
            messages++;
            chars += codec.encode(m).length();
            if (m instanceof ChangeStreamMessage.DataMessage) {
                data++;
            } else if (m instanceof ChangeStreamMessage.CommitMessage c) {
                done++;
                stream.ack(new ChangeSourceUpstream(c.commit(), c.watermark()));
            } else if (m instanceof ChangeStreamMessage.StatusMessage s && s.status().ackRequested()) {
                stream.ack(new ChangeSourceUpstream(s.status(), s.watermark()));
            }
        }
        return new long[] {messages, data, done, chars, first};
    }
}

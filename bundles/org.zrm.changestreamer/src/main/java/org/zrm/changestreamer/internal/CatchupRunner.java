package org.zrm.changestreamer.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupFrames;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.CatchupRequest;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.WatermarkTooOldException;
import org.zrm.changelog.WrongReplicaVersionException;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.protocol.subscriber.ErrorType;

/**
 * Catches subscribers up from the snapshots the storer pins (spec §3.9, §4), on an executor so the
 * storer's writer never waits for a subscriber.
 *
 * <p><b>Pacing.</b> Rows arrive in cursor batches; before sending the next batch the runner waits
 * until the subscriber has consumed the last message of the previous one, and within a batch it
 * also waits whenever the subscriber holds more than half its byte bound, so catch-up alone never
 * trips the bound and at most about two batches per subscriber are in memory.
 *
 * <p>Requests of one snapshot are served one after another on the snapshot's connection.
 */
final class CatchupRunner implements CatchupHandler {

    private static final Logger LOG = LoggerFactory.getLogger(CatchupRunner.class);

    /** What to do when a backup-mode subscriber's watermark has been purged. */
    interface BackupBehindHandler {
        void backupBehind(Subscriber sub, WatermarkTooOldException e);
    }

    /**
     * A subscriber waiting in the storer queue for its snapshot.
     *
     * @param from the watermark to catch up from: the one it subscribed with, or where its last
     *     round ended
     */
    record Request(Subscriber subscriber, String replicaVersion, String from) implements CatchupRequest {
        @Override
        public void fail(Exception cause) {
            LOG.info("change-streamer: catch-up of subscriber {} cancelled: {}", subscriber.id, cause.getMessage());
            subscriber.fail(cause);
        }
    }

    private final Executor executor;
    private final long maxBufferedBytes;
    private final BackupBehindHandler backupBehind;
    private final Consumer<Subscriber> anotherRound;

    /**
     * @param anotherRound asks for another catch-up round of a subscriber whose backlog was dropped
     *     (see {@link Subscriber}); it must not block
     */
    CatchupRunner(Executor executor, long maxBufferedBytes, BackupBehindHandler backupBehind,
            Consumer<Subscriber> anotherRound) {
        this.executor = executor;
        this.maxBufferedBytes = maxBufferedBytes;
        this.backupBehind = backupBehind;
        this.anotherRound = anotherRound;
    }

    @Override
    public void startCatchup(CatchupSnapshot snapshot, List<CatchupRequest> requests) {
        try {
            executor.execute(() -> serve(snapshot, requests));
        } catch (RejectedExecutionException e) {
            snapshot.close();
            boolean stopping = executor instanceof ExecutorService es && es.isShutdown();
            ChangeLogException cause = new ChangeLogException(stopping ? "change streamer is shutting down"
                    : "too many catch-ups are waiting for a thread; reconnect later", e);
            if (!stopping) {
                LOG.warn("change-streamer: catch-up queue full; {} subscriber(s) refused, they will reconnect",
                        requests.size());
            }
            requests.forEach(r -> r.fail(cause));
        }
    }

    private void serve(CatchupSnapshot snapshot, List<CatchupRequest> requests) {
        try {
            for (CatchupRequest r : requests) {
                if (Thread.currentThread().isInterrupted()) {
                    r.fail(new ChangeLogException("change streamer is shutting down"));
                    continue;
                }
                catchup(snapshot, (Request) r);
            }
        } finally {
            snapshot.close();
        }
    }

    private void catchup(CatchupSnapshot snapshot, Request request) {
        Subscriber sub = request.subscriber();
        if (sub.isClosed()) {
            return;
        }
        long started = System.nanoTime();
        int sent = 0;
        try (CatchupCursor cursor = snapshot.catchup(request.replicaVersion(), request.from())) {
            // Paced by consumption with one batch of slack: before batch k+1 is sent, the subscriber
            // must have consumed batch k-1 (upstream waits for batch k, which leaves the socket idle
            // while the last batch's acks travel back). So at most the batch being sent, the one
            // before it and the one fetched ahead are in memory, and the byte check below holds
            // each subscriber to half its bound whatever the row size.
            CompletableFuture<Outbox.Result> older = null;
            CompletableFuture<Outbox.Result> last = null;
            while (true) {
                List<ChangeLogEntry> batch = cursor.nextBatch();
                if (batch.isEmpty()) {
                    break;
                }
                await(older);
                older = last;
                for (int i = 0, n = batch.size(); i < n; i++) {
                    if (sub.isClosed()) {
                        LOG.info("change-streamer: subscriber {} went away during catch-up after {} changes", sub.id, sent);
                        return;
                    }
                    ChangeLogEntry e = batch.get(i);
                    WatermarkedChange change = new WatermarkedChange(e.watermark(), e.tag(), CatchupFrames.rebuild(e));
                    // Only the batch's last change and a change that takes the subscriber above
                    // half its bound are waited on, so only they get a future; the others are
                    // sent untracked.
                    boolean aboveHalf = sub.bufferedBytes() + change.jsonLength() > maxBufferedBytes / 2;
                    if (aboveHalf || i == n - 1) {
                        last = sub.catchup(change);
                        if (aboveHalf) {
                            await(last);
                        }
                    } else {
                        sub.catchupUntracked(change);
                    }
                    sent++;
                }
            }
            boolean foundStart = cursor.foundStart();
            if (foundStart) {
                await(last);
            } else {
                // Changes are forwarded before they are stored, so a subscriber may be ahead of the
                // durable log (INC-783); live changes at or below its watermark are filtered.
                LOG.warn("change-streamer: subscriber {} at {} is ahead of the change log ({}); streaming live changes",
                        sub.id, request.from(), snapshot.lastWatermark());
            }
            long millis = (System.nanoTime() - started) / 1_000_000;
            if (sub.setCaughtUp()) {
                if (foundStart) {
                    LOG.info("change-streamer: caught up subscriber {} from {} to {} with {} changes in {} ms", sub.id,
                            request.from(), snapshot.lastWatermark(), sent, millis);
                }
            } else {
                LOG.info("change-streamer: subscriber {} fell more than its byte bound behind the live stream while"
                        + " catching up from {} to {} ({} changes in {} ms); catching it up again from {}", sub.id,
                        request.from(), snapshot.lastWatermark(), sent, millis, sub.watermark());
                anotherRound.accept(sub);
            }
        } catch (WatermarkTooOldException e) {
            if (sub.mode == ReplicatorMode.SERVING) {
                LOG.warn("change-streamer: subscriber {}: {}", sub.id, e.getMessage());
                sub.close(ErrorType.WATERMARK_TOO_OLD, e.getMessage());
            } else {
                backupBehind.backupBehind(sub, e);
            }
        } catch (WrongReplicaVersionException e) {
            sub.close(ErrorType.WRONG_REPLICA_VERSION, e.getMessage());
        } catch (ChangeLogException e) {
            LOG.error("change-streamer: catch-up of subscriber {} from {} failed: {}", sub.id, request.from(),
                    e.getMessage(), e);
            sub.fail(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sub.fail(new ChangeLogException("catch-up interrupted: change streamer is shutting down", e));
        } catch (RuntimeException e) {
            LOG.error("change-streamer: catch-up of subscriber {} failed", sub.id, e);
            sub.fail(e);
        }
    }

    private static void await(CompletableFuture<Outbox.Result> last) throws InterruptedException {
        if (last == null) {
            return;
        }
        try {
            last.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("unexpected failure of a message result", e.getCause());
        }
    }
}

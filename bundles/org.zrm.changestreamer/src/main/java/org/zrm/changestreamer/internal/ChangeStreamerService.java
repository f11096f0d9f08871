package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.StreamerStatus;

/**
 * The change streamer (upstream {@code ChangeStreamerImpl}, spec §1), assembled from its parts:
 * every change from the source is <b>stored</b> (enqueued to the storer) and <b>forwarded</b> to
 * caught-up subscribers in one critical section, and <b>acked</b> upstream once durable.
 *
 * <ul>
 *   <li>{@link StreamSupervisor}: the life cycle on the stream-loop thread (initialize, ownership,
 *       restarts with back-off, auto-reset, stop), deciding by {@link StreamFailure};</li>
 *   <li>{@link StreamSession}: one upstream stream, the per-message path, checked by a
 *       {@link TransactionSequencer};</li>
 *   <li>{@link SubscriberRegistry}: subscriptions, the lock-step hand-over to the session, detach
 *       and fail;</li>
 *   <li>{@link Forwarder}, {@link CatchupRunner}, {@link Purger}: fan-out, catch-up, purging;</li>
 *   <li>{@link StreamerCounters} and {@link StreamerSnapshot}: what {@code /status} and
 *       {@code /metrics} show.</li>
 * </ul>
 * This class owns the threads and executors they share and answers the component; it holds no
 * state of the pipeline itself.
 */
public final class ChangeStreamerService implements BackupCoordinator.CleanupTarget {

    /** Life-cycle states reported in the status section. */
    enum State { STARTING, STREAMING, BACKOFF, RESETTING, STOPPED }

    /** Supplies the current change source; may change over time (dynamic OSGi reference). */
    interface SourceProvider {
        /**
         * @return the current source, waiting up to {@code timeout} for one to appear
         * @throws InterruptedException if interrupted while waiting
         */
        Optional<ChangeSource> await(Duration timeout) throws InterruptedException;

        /** How long the stream loop waits quietly before it reports the source as missing. */
        default Duration grace() {
            return Duration.ofSeconds(10);
        }

        /** Why no source is available and what would provide one, for that single error line. */
        default String missingReason() {
            return "no change source is registered";
        }
    }

    private final StreamerSettings settings;
    private final ChangeLog changeLog;
    private final Forwarder forwarder = new Forwarder(ChangeStreamerService::nowMillis);
    private final StreamerCounters counters = new StreamerCounters();
    private final SubscriberRegistry registry;
    private final Purger purger;
    private final StreamSupervisor supervisor;
    private final ExecutorService catchupExecutor;
    private final ScheduledExecutorService timers;

    /** Catch-ups waiting for a thread; each holds a pinned change-log snapshot. */
    static final int CATCHUP_QUEUE = 64;

    /**
     * Creates the streamer; {@link #start()} starts it.
     *
     * @param settings settings
     * @param storerFactory starts storers over the change log
     * @param sources the change source(s)
     * @param cleanupTimer schedules purge cycles, or {@code null} for the streamer's own timer
     */
    ChangeStreamerService(StreamerSettings settings, StorerFactory storerFactory, SourceProvider sources,
            CleanupTimer cleanupTimer) {
        this(settings, storerFactory, sources, cleanupTimer, new Reservations());
    }

    /**
     * @param reservations the {@code /snapshot} reservations (held by the backup-monitor
     *     coordinator); purging pauses while any is open
     */
    ChangeStreamerService(StreamerSettings settings, StorerFactory storerFactory, SourceProvider sources,
            CleanupTimer cleanupTimer, Reservations reservations) {
        this(settings, storerFactory, sources, cleanupTimer, reservations, () -> true);
    }

    /**
     * @param replicaExists whether a local replica file exists at start, i.e. whether there is a
     *     lineage whose change-log rows the start-up purge lock should keep (see
     *     {@link StreamSupervisor})
     */
    ChangeStreamerService(StreamerSettings settings, StorerFactory storerFactory, SourceProvider sources,
            CleanupTimer cleanupTimer, Reservations reservations, java.util.function.BooleanSupplier replicaExists) {
        this.settings = settings;
        this.changeLog = storerFactory.changeLog();
        ProtocolCodec codec = new ProtocolCodec();
        this.registry = new SubscriberRegistry(forwarder, counters, codec, settings.subscriberMaxBufferedBytes(),
                SubscriberRegistry.DEFAULT_MAX_PENDING, codec.encode(new Downstream.StatusMessage(new StreamerStatus())));
        this.timers = new ScheduledThreadPoolExecutor(2, daemon("zrm-changestreamer-timer"));
        // Each queued task holds a pinned snapshot, i.e. a connection of the change log's bounded
        // pool. The queue is bounded too: past CATCHUP_QUEUE waiting catch-ups, CatchupRunner fails
        // the new requests at once (their subscribers reconnect) instead of holding their snapshots.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(settings.catchupThreads(), settings.catchupThreads(), 30,
                TimeUnit.SECONDS, new ArrayBlockingQueue<>(CATCHUP_QUEUE), daemon("zrm-changestreamer-catchup"));
        pool.allowCoreThreadTimeOut(true);
        this.catchupExecutor = pool;
        // The supervisor exists before any catch-up can run: catch-ups start only once it streams.
        CatchupRunner catchup = new CatchupRunner(catchupExecutor, settings.subscriberMaxBufferedBytes(),
                (sub, e) -> supervisor().backupBehind(sub, e), registry::catchUpAgain);
        CleanupTimer timer = cleanupTimer != null ? cleanupTimer : (task, delay) -> {
            ScheduledFuture<?> f = timers.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
            return () -> f.cancel(false);
        };
        this.purger = new Purger(changeLog, settings.taskID(), forwarder::acks, reservations, timer,
                settings.cleanupDelay());
        StreamSession.Parts parts = new StreamSession.Parts(settings, storerFactory, catchup, changeLog, registry,
                forwarder, codec, counters);
        this.supervisor = new StreamSupervisor(parts, sources, purger, replicaExists);
    }

    private StreamSupervisor supervisor() {
        return supervisor;
    }

    /** Sets the restore run before the source is first initialized; call before {@link #start()}. */
    void restoreStep(StreamSupervisor.RestoreStep step) {
        supervisor.restoreStep(step);
    }

    /** Starts the flow-control progress monitor and the stream loop thread. */
    void start() {
        long period = settings.progressInterval().toMillis();
        long paddingMillis = settings.flowControlConsensusPaddingSeconds() < 0 ? -1
                : (long) (settings.flowControlConsensusPaddingSeconds() * 1000);
        timers.scheduleAtFixedRate(() -> forwarder.checkProgress(paddingMillis), period, period, TimeUnit.MILLISECONDS);
        supervisor.start();
    }

    /**
     * Stops the streamer: ends the stream, rolls back an open transaction, stops the storer and
     * ends every subscription (clients reconnect). Idempotent.
     *
     * @param timeout how long to wait for the loop
     */
    void stop(Duration timeout) throws InterruptedException {
        supervisor.stop(timeout);
        timers.shutdownNow();
        catchupExecutor.shutdownNow();
    }

    boolean awaitStopped(Duration timeout) throws InterruptedException {
        return supervisor.awaitStopped(timeout);
    }

    /** See {@link org.zrm.changestreamer.ChangeStreamer#subscribe}. */
    public Subscription subscribe(SubscriberContext ctx) {
        return registry.subscribe(ctx, supervisor);
    }

    /** See {@link org.zrm.changestreamer.ChangeStreamer#getChangeLogState}. */
    @Override
    public ChangeLogState getChangeLogState() throws ChangeLogException {
        return changeLog.changeLogState();
    }

    /** Records a confirmed watermark for the purge cycle; only the backup coordinator calls this. */
    @Override
    public void scheduleCleanup(String watermark) {
        purger.schedule(watermark);
    }

    @Override
    public void clearPendingCleanups() {
        purger.clear();
    }

    /**
     * Stops the pipeline because a backup monitor reported a fatal condition: the stream ends
     * (nothing more is acknowledged upstream, the open transaction is rolled back), subscribers
     * are ended, and the state becomes {@code STOPPED} with the cause as the last error.
     */
    @Override
    public void stopForFatal(Throwable cause) {
        supervisor.requestStop(cause);
    }

    /**
     * Tells the streamer that {@code source} is being unregistered. If the current stream comes
     * from it, the stream ends (an open transaction is rolled back) and the loop waits for a
     * replacement; the removed source is not {@link ChangeSource#stop() stopped} by the streamer,
     * its own bundle does that.
     */
    void sourceRemoved(ChangeSource source) {
        supervisor.sourceRemoved(source);
    }

    /**
     * @return completes once the streamer has initialized its source and change log for the first
     *     time (after the initial sync or restore), when backup monitoring may begin
     */
    CompletableFuture<Void> initialized() {
        return supervisor.initialized();
    }

    // ------------------------------------------------------------------ status

    /**
     * Closes the subscriber {@code id} (an operator's request).
     *
     * @return whether a connected subscriber had that id
     */
    boolean closeSubscriber(String id, String reason) {
        for (Subscriber s : registry.subscribers()) {
            if (s.id.equals(id)) {
                org.slf4j.LoggerFactory.getLogger(ChangeStreamerService.class)
                        .info("change-streamer: closing subscriber {} on operator request: {}", id, reason);
                s.close(org.zrm.protocol.subscriber.ErrorType.UNKNOWN, "closed by operator: " + reason);
                return true;
            }
        }
        return false;
    }

    /** @return what the next purge would delete now */
    org.zrm.operator.PurgePreview previewPurge() throws ChangeLogException {
        return purger.preview();
    }

    /** @return what {@code /status} and {@code /metrics} show, read once */
    StreamerSnapshot snapshot() {
        long now = System.currentTimeMillis();
        String head = counters.lastForwardedCommit();
        List<StreamerSnapshot.SubscriberView> subs = registry.subscribers().stream()
                .map(s -> StreamerSnapshot.SubscriberView.of(s, now, head, counters.timeline())).toList();
        return new StreamerSnapshot(supervisor.state(), supervisor.lastError(), settings.taskID(),
                settings.ownerAddress(), registry.replicaVersion(), supervisor.streamStartWatermark(),
                counters.lastStoredWatermark(), counters.lastAckedWatermark(), counters.transactions(),
                counters.changes(), counters.restarts(), counters.resets(), counters.subscriptions(),
                counters.droppedSubscribers(), counters.repeatedCatchups(), settings.effectiveFlowControlWindow(),
                forwarder.broadcastsInFlight(),
                counters.flowControlWaits(), counters.flowControlWaitNanos(),
                StreamerSnapshot.StorerView.of(registry.storer()), subs, registry.pendingCount(), purger.pending(),
                purger.purgedRows(), head, counters.lag(now));
    }

    /** @return the status section */
    Map<String, Object> status() {
        return snapshot().toStatus();
    }

    /** @return completes when the stream loop has ended, with its stop cause ({@code null}: an orderly stop) */
    java.util.concurrent.CompletableFuture<Throwable> terminated() {
        return supervisor.terminated();
    }

    State state() {
        return supervisor.state();
    }

    String lastError() {
        return supervisor.lastError();
    }

    String replicaVersion() {
        return registry.replicaVersion();
    }

    long restarts() {
        return counters.restarts();
    }

    long resets() {
        return counters.resets();
    }

    List<Subscriber> subscribers() {
        return registry.subscribers();
    }

    private static long nowMillis() {
        return System.nanoTime() / 1_000_000;
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}

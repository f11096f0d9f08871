package org.zrm.changestreamer.internal;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.PurgeLock;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changelog.StorerListener;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changelog.WatermarkTooOldException;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Rollback;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.protocol.subscriber.StreamerStatus;

/**
 * The change streamer (upstream {@code ChangeStreamerImpl}, spec §1): one stream-loop thread pulls
 * from the change source, and for every message <b>stores</b> it (enqueues it to the storer) and
 * <b>forwards</b> it to caught-up subscribers in one critical section (CS-1); the storer
 * <b>acks</b> it upstream once durable.
 *
 * <h2>Lock-step (spec §1.5)</h2>
 * CS-1 (storer enqueue + forward) and CS-2 (forwarder add + storer catch-up enqueue) run under one
 * {@link ReentrantLock}. {@link #subscribe} never blocks on it: it queues the registration and
 * registers it only if the lock is free ({@code tryLock}); whoever holds the lock drains queued
 * registrations after releasing it, so a registration is never stranded, and subscribe does not
 * wait while the stream loop is held back by the storer's back-pressure. Registrations made while
 * no storer runs (start-up, back-off) wait until the next stream starts.
 *
 * <h2>Failures</h2>
 * A stream error rolls back an open transaction (a synthesized {@code rollback} to subscribers,
 * exactly once, and {@link Storer#abort()}), stops the storer, backs off (25 ms doubling to 10 s)
 * and restarts from the change log's last stored watermark. Ownership loss, a malformed stream,
 * non-retryable source errors and a missing change-log table (42P01) stop the streamer. Stopping
 * also rolls back an open transaction explicitly (BUG H6 fixed).
 *
 * <h2>Auto-reset (spec §3.14)</h2>
 * Upstream exits the process when the replica must be re-synced (a {@code reset-required} control
 * message with auto-reset on, a backup-mode subscriber behind the log, or an
 * {@link AutoResetException} from the source) and relies on the orchestrator to restart it into a
 * re-sync. A bundle cannot restart its JVM, so with {@code autoReset} the streamer re-syncs in
 * process instead: it ends the stream (rolling back an open transaction), fails every subscription
 * with a retryable failure, calls {@link ChangeSource#initialize(boolean) initialize(true)} and
 * {@link ChangeLog#ensureReplicationConfig} (which resets the log to the new replica version),
 * takes ownership again and resumes streaming. A second reset signal during that re-sync stops the
 * streamer, as upstream's second {@code AutoResetSignal} is fatal. Without {@code autoReset} a
 * backup behind the log or a source {@link AutoResetException} stops the streamer with a prominent
 * error; a {@code reset-required} control message only marks the log and streaming continues,
 * exactly as upstream.
 *
 * <h2>Source removal</h2>
 * {@link #sourceRemoved} ends a stream on a change source that is going away (an open transaction
 * is rolled back, nothing partial is stored); the loop then waits for a replacement and resumes
 * from the change log's last stored watermark.
 */
public final class ChangeStreamerService implements BackupCoordinator.CleanupTarget {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeStreamerService.class);

    /** Life-cycle states reported in the status section. */
    enum State { STARTING, STREAMING, BACKOFF, RESETTING, STOPPED }

    /** Supplies the current change source; may change over time (dynamic OSGi reference). */
    interface SourceProvider {
        /**
         * @return the current source, waiting up to {@code timeout} for one to appear
         * @throws InterruptedException if interrupted while waiting
         */
        Optional<ChangeSource> await(Duration timeout) throws InterruptedException;
    }

    private final StreamerSettings settings;
    private final StorerFactory storerFactory;
    private final ChangeLog changeLog;
    private final SourceProvider sources;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final Forwarder forwarder = new Forwarder(ChangeStreamerService::nowMillis);
    private final Reservations reservations;
    private final CompletableFuture<Void> initialized = new CompletableFuture<>();
    private final Purger purger;
    private final CatchupRunner catchup;
    private final ExecutorService catchupExecutor;
    private final ScheduledExecutorService timers;
    private final Thread loopThread;

    private final ReentrantLock streamLock = new ReentrantLock();
    private final ConcurrentLinkedQueue<Subscriber> pendingRegistrations = new ConcurrentLinkedQueue<>();
    /** The running storer; guarded by {@link #streamLock}. */
    private Storer storer;

    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private final CountDownLatch startSignal = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile ChangeStream currentStream;
    private volatile ChangeSource currentSource;
    private volatile Throwable stopCause;
    private volatile ChangeLogException storerFailure;
    /** Set (from any thread) when the replica must be re-synced; consumed by the stream loop. */
    private volatile ResetRequiredException pendingReset;
    /** Set when the source of the current stream was unregistered; consumed by the stream loop. */
    private volatile boolean sourceGone;

    // Status, written by the loop and storer threads.
    private volatile State state = State.STARTING;
    private volatile String lastError;
    private volatile String replicaVersion;
    private volatile String lastStoredWatermark;
    private volatile String lastAckedWatermark;
    private volatile String streamStartWatermark;
    private volatile String latestStatusJson;
    private final AtomicLong transactions = new AtomicLong();
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong subscriptions = new AtomicLong();
    private final AtomicLong droppedSubscribers = new AtomicLong();
    private final AtomicLong flowControlWaits = new AtomicLong();
    private final AtomicLong flowControlWaitNanos = new AtomicLong();
    private final int flowControlWindow;

    /**
     * Creates the streamer and starts its stream loop.
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
        this.settings = settings;
        this.reservations = reservations;
        this.flowControlWindow = settings.effectiveFlowControlWindow();
        this.storerFactory = storerFactory;
        this.changeLog = storerFactory.changeLog();
        this.sources = sources;
        this.latestStatusJson = encodeStatus(new StreamerStatus());
        this.timers = new ScheduledThreadPoolExecutor(2, daemon("zrm-changestreamer-timer"));
        // Each queued task holds a pinned snapshot, i.e. a connection of the change log's bounded
        // pool, so the queue is bounded by that pool in practice.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(settings.catchupThreads(), settings.catchupThreads(), 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), daemon("zrm-changestreamer-catchup"));
        pool.allowCoreThreadTimeOut(true);
        this.catchupExecutor = pool;
        this.catchup = new CatchupRunner(catchupExecutor, settings.subscriberMaxBufferedBytes(), this::backupBehind);
        CleanupTimer timer = cleanupTimer != null ? cleanupTimer : (task, delay) -> {
            ScheduledFuture<?> f = timers.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
            return () -> f.cancel(false);
        };
        this.purger = new Purger(changeLog, settings.taskID(), forwarder::acks, reservations, timer,
                settings.cleanupDelay());
        this.loopThread = new Thread(this::run, "zrm-changestreamer-" + settings.taskID());
        loopThread.setDaemon(true);
    }

    /** Starts the stream loop thread. */
    void start() {
        long period = settings.progressInterval().toMillis();
        long paddingMillis = settings.flowControlConsensusPaddingSeconds() < 0 ? -1
                : (long) (settings.flowControlConsensusPaddingSeconds() * 1000);
        timers.scheduleAtFixedRate(() -> forwarder.checkProgress(paddingMillis), period, period, TimeUnit.MILLISECONDS);
        loopThread.start();
    }

    // ------------------------------------------------------------------ ChangeStreamer

    public Subscription subscribe(SubscriberContext ctx) {
        subscriptions.incrementAndGet();
        Subscriber[] self = new Subscriber[1];
        Outbox outbox = new Outbox(ctx.id(), settings.subscriberMaxBufferedBytes(),
                () -> detach(self[0], null), cause -> detach(self[0], cause));
        Subscriber sub = new Subscriber(ctx.protocolVersion(), ctx.id(), ctx.mode(), ctx.replicaVersion(), ctx.watermark(), outbox,
                () -> latestStatusJson, codec, settings.subscriberMaxBufferedBytes());
        self[0] = sub;
        String ours = replicaVersion;
        if (ours != null && !ours.equals(ctx.replicaVersion())) {
            rejectReplicaVersion(sub, ours, ctx.replicaVersion());
            return outbox;
        }
        if (!running) {
            sub.fail(new IllegalStateException("change streamer is stopped" + describeStop()));
            return outbox;
        }
        if (ctx.mode() == ReplicatorMode.SERVING) {
            startSignal.countDown();
        }
        LOG.info("change-streamer: subscriber {} ({} v{}, task {}) connected at {}", ctx.id(), ctx.mode().wireName(),
                ctx.protocolVersion(), ctx.taskID(), ctx.watermark());
        pendingRegistrations.add(sub);
        registerPending();
        return outbox;
    }

    private void rejectReplicaVersion(Subscriber sub, String ours, String theirs) {
        String message = "current replica version is " + ours + " (requested " + theirs + ")";
        LOG.warn("change-streamer: subscriber {} rejected: {}", sub.id, message);
        sub.close(ErrorType.WRONG_REPLICA_VERSION, message);
    }

    private void detach(Subscriber sub, Throwable cause) {
        if (sub == null) {
            return;
        }
        forwarder.remove(sub);
        pendingRegistrations.remove(sub);
        if (cause != null) {
            droppedSubscribers.incrementAndGet();
            LOG.warn("change-streamer: subscriber {} disconnected: {}", sub.id, cause.getMessage());
        } else {
            LOG.info("change-streamer: subscriber {} unsubscribed at {} (acked {})", sub.id, sub.watermark(), sub.acked());
        }
    }

    /**
     * CS-2: registers queued subscribers with the forwarder and the storer, if the lock is free and
     * a storer runs. Loops because a registration queued while another thread held the lock is
     * drained by that thread after it unlocks (here).
     */
    private void registerPending() {
        while (!pendingRegistrations.isEmpty()) {
            if (!streamLock.tryLock()) {
                return; // the holder drains after unlocking
            }
            try {
                if (storer == null) {
                    return; // registered when the next stream starts
                }
                registerPendingLocked();
            } finally {
                streamLock.unlock();
            }
        }
    }

    private void registerPendingLocked() {
        Subscriber sub;
        while ((sub = pendingRegistrations.poll()) != null) {
            if (sub.isClosed()) {
                continue;
            }
            String ours = replicaVersion;
            if (!ours.equals(sub.replicaVersion)) {
                rejectReplicaVersion(sub, ours, sub.replicaVersion);
                continue;
            }
            forwarder.add(sub);
            storer.enqueueCatchup(new CatchupRunner.Request(sub, ours));
        }
    }

    @Override
    public ChangeLogState getChangeLogState() throws ChangeLogException {
        return changeLog.changeLogState();
    }

    @Override
    public void scheduleCleanup(String watermark) {
        purger.schedule(watermark);
    }

    @Override
    public void clearPendingCleanups() {
        purger.clear();
    }

    /**
     * @return completes once the streamer has initialized its source and change log for the first
     *     time (after the initial sync or restore), when backup monitoring may begin
     */
    CompletableFuture<Void> initialized() {
        return initialized;
    }

    /**
     * Stops the pipeline because a backup monitor reported a fatal condition: the stream ends
     * (nothing more is acknowledged upstream, the open transaction is rolled back), subscribers
     * are ended, and the state becomes {@code STOPPED} with the cause as the last error.
     */
    @Override
    public void stopForFatal(Throwable cause) {
        requestStop(cause);
    }

    /**
     * Tells the streamer that {@code source} is being unregistered. If the current stream comes
     * from it, the stream ends (an open transaction is rolled back) and the loop waits for a
     * replacement; the removed source is not {@link ChangeSource#stop() stopped} by the streamer,
     * its own bundle does that.
     *
     * @param source the source going away
     */
    void sourceRemoved(ChangeSource source) {
        if (source == null || source != currentSource) {
            return;
        }
        LOG.info("change-streamer: change source removed at stored watermark {}; ending the stream and waiting for"
                + " a replacement", lastStoredWatermark);
        sourceGone = true;
        currentSource = null;
        ChangeStream s = currentStream;
        if (s != null) {
            s.close();
        }
        forwarder.releaseBroadcast();
    }

    // ------------------------------------------------------------------ life cycle

    /**
     * Stops the streamer: ends the stream, rolls back an open transaction, stops the storer and
     * the source, and ends every subscription (clients reconnect). Idempotent.
     *
     * @param timeout how long to wait for the loop
     */
    void stop(Duration timeout) throws InterruptedException {
        requestStop(null);
        loopThread.join(Math.max(1, timeout.toMillis()));
        if (loopThread.isAlive()) {
            LOG.warn("change-streamer: stream loop did not stop within {} ms; interrupting it", timeout.toMillis());
            loopThread.interrupt();
            loopThread.join(5_000);
        }
        timers.shutdownNow();
        catchupExecutor.shutdownNow();
    }

    /** Makes the loop end; {@code cause} null for an orderly stop. */
    private void requestStop(Throwable cause) {
        if (cause != null && stopCause == null) {
            stopCause = cause;
        }
        running = false;
        stopSignal.countDown();
        startSignal.countDown();
        ChangeStream s = currentStream;
        if (s != null) {
            s.close();
        }
        forwarder.releaseBroadcast();
    }

    boolean awaitStopped(Duration timeout) throws InterruptedException {
        loopThread.join(Math.max(1, timeout.toMillis()));
        return !loopThread.isAlive();
    }

    private void run() {
        PurgeLock purgeLock = null;
        try {
            purgeLock = tryPurgeLock();
            SubscriptionState subscription = initialize(false, purgeLock);
            if (purgeLock != null && !purgeLock.replicaVersion().equals(subscription.replicaVersion())) {
                // The log will be reset to the new lineage; holding a lock on its rows would block that.
                purgeLock.close();
                purgeLock = null;
            }
            awaitStart();
            if (!running) {
                return;
            }
            assumeOwnership();
            if (purgeLock != null) {
                purgeLock.close();
                purgeLock = null;
            }
            streamLoop();
        } catch (InterruptedException e) {
            LOG.info("change-streamer: stream loop interrupted");
        } catch (Throwable t) {
            if (stopCause == null) {
                stopCause = t;
            }
            if (t instanceof Error) {
                LOG.error("change-streamer: stream loop died", t);
            }
        } finally {
            if (purgeLock != null) {
                purgeLock.close();
            }
            shutdown();
        }
    }

    private PurgeLock tryPurgeLock() {
        try {
            return changeLog.acquirePurgeLock().orElse(null);
        } catch (ChangeLogException e) {
            LOG.warn("change-streamer: could not take the purge lock (continuing without it): {}", e.getMessage());
            return null;
        }
    }

    /** Initialises the source and the change log, retrying retryable failures with back-off. */
    private SubscriptionState initialize(boolean reset, PurgeLock purgeLock) throws Exception {
        Backoff backoff = new Backoff();
        boolean resetReplica = reset;
        while (running) {
            state = State.STARTING;
            try {
                ChangeSource source = awaitSource();
                SubscriptionState s;
                try {
                    s = source.initialize(resetReplica);
                    changeLog.ensureReplicationConfig(s, settings.autoReset());
                } catch (AutoResetException | ResetRequiredException e) {
                    if (!settings.autoReset() || resetReplica) {
                        throw e;
                    }
                    LOG.warn("change-streamer: replica must be re-synced ({}); re-initializing the source with a"
                            + " replica reset (autoReset)", e.getMessage());
                    if (purgeLock != null) {
                        purgeLock.close(); // would deadlock against the reset's TRUNCATE
                    }
                    resetReplica = true;
                    continue;
                }
                currentSource = source;
                sourceGone = false;
                String previous = replicaVersion;
                replicaVersion = s.replicaVersion();
                if (previous != null && !previous.equals(s.replicaVersion())) {
                    int n = failSubscribers(new ResetRequiredException("replica version changed from " + previous
                            + " to " + s.replicaVersion() + "; reconnect"));
                    purger.clear();
                    LOG.warn("change-streamer: replica version changed from {} to {}; ended {} subscription(s)",
                            previous, s.replicaVersion(), n);
                }
                startLagReporter(source);
                LOG.info("change-streamer: initialized; replica version {} at {}, publications {}", s.replicaVersion(),
                        s.watermark(), s.publications());
                initialized.complete(null);
                return s;
            } catch (Exception e) {
                if (isFatal(e) || !running) {
                    throw e;
                }
                lastError = describe(e);
                state = State.BACKOFF;
                backoff.pause("initializing", e);
            }
        }
        throw new InterruptedException("stopped");
    }

    private ChangeSource awaitSource() throws InterruptedException {
        while (running) {
            Optional<ChangeSource> s = sources.await(Duration.ofSeconds(5));
            if (s.isPresent()) {
                return s.get();
            }
            LOG.info("change-streamer: waiting for a change source");
        }
        throw new InterruptedException("stopped");
    }

    private void startLagReporter(ChangeSource source) {
        try {
            OptionalLong next = source.startLagReporter();
            StreamerStatus status = next.isPresent()
                    ? new StreamerStatus(new LagReport(null, next.getAsLong(), Passthrough.NONE), Passthrough.NONE)
                    : new StreamerStatus();
            latestStatusJson = encodeStatus(status);
        } catch (ChangeSourceException e) {
            LOG.warn("change-streamer: lag reporting unavailable: {}", e.getMessage());
        }
    }

    private void awaitStart() throws InterruptedException {
        if (!startSignal.await(settings.startupDelay().toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.info("change-streamer: starting after the start-up delay of {} ms", settings.startupDelay().toMillis());
        }
    }

    private void assumeOwnership() throws Exception {
        Backoff backoff = new Backoff();
        while (true) {
            try {
                changeLog.assumeOwnership(settings.taskID(), settings.ownerAddress());
                LOG.info("change-streamer: task {} owns the change log (address {})", settings.taskID(),
                        settings.ownerAddress());
                return;
            } catch (ChangeLogException e) {
                if (isFatal(e) || !running) {
                    throw e;
                }
                lastError = describe(e);
                backoff.pause("taking ownership", e);
            }
        }
    }

    private void streamLoop() throws Exception {
        Backoff backoff = new Backoff();
        while (running) {
            Throwable error = runStream(backoff);
            if (!running) {
                return;
            }
            if (error != null && requiresReset(error)) {
                if (!settings.autoReset()) {
                    LOG.error("change-streamer: !!! the replica must be re-synced ({}) but autoReset is disabled;"
                            + " stopping. Enable autoReset or re-sync the replica manually !!!", describe(error));
                    throw asException(error);
                }
                autoReset(error);
                backoff.reset();
                continue;
            }
            if (error != null && isFatal(error)) {
                throw asException(error);
            }
            restarts.incrementAndGet();
            lastError = error == null ? null : describe(error);
            state = State.BACKOFF;
            backoff.pause("streaming", error);
        }
    }

    /** The replica cannot continue its lineage: a re-sync is needed (auto-reset) or the streamer stops. */
    static boolean requiresReset(Throwable t) {
        return t instanceof ResetRequiredException || t instanceof AutoResetException;
    }

    /**
     * In-process re-sync (see the class comment). The stream has already ended and its storer is
     * stopped. Failures of the re-sync itself follow {@link #initialize}: retryable ones back off,
     * a second reset signal or a fatal error stops the streamer.
     */
    private void autoReset(Throwable cause) throws Exception {
        long n = resets.incrementAndGet();
        state = State.RESETTING;
        lastError = describe(cause);
        String oldVersion = replicaVersion;
        LOG.warn("change-streamer: auto-reset #{} step 1/4: replica {} must be re-synced ({}); stream ended at stored"
                + " watermark {}", n, oldVersion, describe(cause), lastStoredWatermark);
        // Subscribers arriving during the re-sync are checked against the new version when they register.
        replicaVersion = null;
        int failed = failSubscribers(new ResetRequiredException("replica " + oldVersion
                + " is being re-synced (auto-reset); reconnect"));
        purger.clear(); // scheduled watermarks belong to the old lineage
        LOG.warn("change-streamer: auto-reset #{} step 2/4: ended {} subscription(s) for reconnection; re-syncing the"
                + " replica", n, failed);
        SubscriptionState s = initialize(true, null);
        LOG.warn("change-streamer: auto-reset #{} step 3/4: replica re-synced to version {} at {}; change log"
                + " reconfigured", n, s.replicaVersion(), s.watermark());
        assumeOwnership();
        // A catch-up still running for a subscriber of the old lineage may have asked for another
        // reset meanwhile; that request is answered by this one.
        pendingReset = null;
        LOG.warn("change-streamer: auto-reset #{} step 4/4: task {} owns the change log again; resuming streaming", n,
                settings.taskID());
    }

    /** Fails every connected and queued subscription (no error frame: clients reconnect). */
    private int failSubscribers(Throwable cause) {
        int n = 0;
        Subscriber sub;
        while ((sub = pendingRegistrations.poll()) != null) {
            sub.fail(cause);
            n++;
        }
        for (Subscriber s : forwarder.subscribers()) {
            s.failAfterQueued(cause); // a rollback of the interrupted transaction may still be queued
            forwarder.remove(s);
            n++;
        }
        return n;
    }

    /**
     * Asks the stream loop to re-sync (auto-reset) or, without auto-reset, to stop; callable from
     * any thread.
     */
    private void requestReset(ResetRequiredException reset) {
        if (!settings.autoReset()) {
            requestStop(reset);
            return;
        }
        pendingReset = reset;
        ChangeStream s = currentStream;
        if (s != null) {
            s.close();
        }
        forwarder.releaseBroadcast();
    }

    /** @return the error that ended the stream, or {@code null} if it ended because of a stop */
    private Throwable runStream(Backoff backoff) {
        ChangeStream stream = null;
        Storer s = null;
        String openTx = null;
        Throwable error = null;
        try {
            ChangeSource source = awaitSource();
            if (source != currentSource) {
                LOG.info("change-streamer: change source replaced; initializing the new one");
                initialize(false, null);
            }
            StreamStartParameters params = changeLog.streamStartParameters();
            streamStartWatermark = params.lastWatermark();
            stream = source.startStream(params.lastWatermark(), params.backfillRequests());
            currentStream = stream;
            if (!running) {
                return null;
            }
            if (source != currentSource) {
                throw new SourceRemovedException(); // removed while the stream was being opened
            }
            storerFailure = null;
            s = storerFactory.start(settings.taskID(), new Listener(stream), catchup);
            streamLock.lock();
            try {
                storer = s;
                lastStorer = s;
                registerPendingLocked();
            } finally {
                streamLock.unlock();
            }
            registerPending();
            backoff.reset();
            state = State.STREAMING;
            lastError = null;
            LOG.info("change-streamer: streaming from {} ({} backfill(s) to resume)", params.lastWatermark(),
                    params.backfillRequests().size());
            long unflushed = 0;
            String lastCommit = params.lastWatermark();
            // A reset requested before this stream was published in currentStream could not close it.
            while (running && pendingReset == null) {
                ChangeStreamMessage msg = stream.take();
                if (msg instanceof StatusMessage st) {
                    onStatus(s, st);
                    continue;
                }
                if (msg instanceof ControlMessage c) {
                    onControl(c);
                    continue;
                }
                ChangeStreamData data = (ChangeStreamData) msg;
                String watermark;
                if (data instanceof BeginMessage b) {
                    if (openTx != null) {
                        throw new UnrecoverableStreamException("'begin' " + b.commitWatermark()
                                + " received in the middle of transaction " + openTx);
                    }
                    if (b.commitWatermark().compareTo(lastCommit) <= 0) {
                        throw new UnrecoverableStreamException("commit watermark " + b.commitWatermark()
                                + " is not after the previous commit " + lastCommit);
                    }
                    watermark = b.commitWatermark();
                } else {
                    if (openTx == null) {
                        throw new UnrecoverableStreamException(data.type() + " change (" + data.change().tag()
                                + ") received before 'begin' message");
                    }
                    if (data instanceof CommitMessage c && !c.watermark().equals(openTx)) {
                        throw new UnrecoverableStreamException("commit watermark " + c.watermark()
                                + " does not match 'begin' watermark " + openTx);
                    }
                    watermark = openTx;
                }
                String json = codec.encode(data);
                String tag = data instanceof DataMessage d ? d.change().tag() : data.type();
                WatermarkedChange entry = new WatermarkedChange(watermark, tag, json);
                Broadcast broadcast = null;
                streamLock.lock();
                try {
                    // CS-1: the storer and the forwarder see the same stream position.
                    s.enqueue(data, json);
                    openTx = data instanceof BeginMessage ? watermark : openTx;
                    unflushed += json.length();
                    if (unflushed < settings.flushBytesThreshold()) {
                        forwarder.forward(entry);
                    } else {
                        broadcast = forwarder.forwardWithFlowControl(entry);
                        unflushed = 0;
                    }
                    if (entry.endsTransaction()) {
                        openTx = null;
                    }
                } finally {
                    streamLock.unlock();
                }
                registerPending();
                if (data instanceof CommitMessage) {
                    lastCommit = watermark;
                    transactions.incrementAndGet();
                } else if (data instanceof DataMessage) {
                    changes.incrementAndGet();
                }
                if (broadcast != null) {
                    // Wait for the oldest flush once the window is full, not for this one: the
                    // round trip to the subscribers then overlaps forwarding instead of pausing
                    // it at every flush (upstream waits for each, a window of 1).
                    long waited = forwarder.awaitWindow(flowControlWindow);
                    if (waited > 0) {
                        flowControlWaits.incrementAndGet();
                        flowControlWaitNanos.addAndGet(waited);
                    }
                }
            }
        } catch (ChangeStreamClosedException e) {
            error = storerFailure != null ? storerFailure : running ? (sourceGone ? new SourceRemovedException() : e) : null;
        } catch (ChangeLogException e) {
            error = storerFailure != null ? storerFailure : e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = running ? e : null;
        } catch (ExecutionException e) {
            error = e.getCause();
        } catch (Exception e) {
            error = e;
        } finally {
            if (stream != null) {
                stream.close();
            }
            currentStream = null;
            endStream(s, openTx);
        }
        ResetRequiredException reset = pendingReset;
        if (reset != null) {
            pendingReset = null;
            if (running) {
                error = reset; // whatever the closed stream reported, the cause is the reset request
            }
        }
        if (error != null && !(error instanceof InterruptedException)) {
            logStreamError(error);
        }
        return error;
    }

    /** Rolls back an interrupted transaction (once), stops the storer and detaches it. */
    private void endStream(Storer s, String openTx) {
        streamLock.lock();
        try {
            if (openTx != null) {
                LOG.info("change-streamer: aborting interrupted transaction {}", openTx);
                if (s != null) {
                    try {
                        s.abort();
                    } catch (ChangeLogException e) {
                        LOG.debug("change-streamer: storer already ended; transaction {} was not stored", openTx);
                    }
                }
                forwarder.forward(new WatermarkedChange(openTx, "rollback",
                        codec.encode(new RollbackMessage(new Rollback()))));
            }
            storer = null;
            lastStorer = null;
        } finally {
            streamLock.unlock();
        }
        if (s != null) {
            s.stop();
            try {
                if (!s.awaitTermination(Duration.ofSeconds(30))) {
                    s.close();
                }
            } catch (InterruptedException e) {
                s.close();
                Thread.currentThread().interrupt();
            }
        }
    }

    private void onStatus(Storer s, StatusMessage st) throws ChangeLogException, InterruptedException {
        if (st.status().ackRequested()) {
            s.enqueue(st, null);
        }
        if (st.status().lagReport() != null) {
            String json = encodeStatus(new StreamerStatus(st.status().lagReport(), Passthrough.NONE));
            latestStatusJson = json;
            forwarder.sendStatus(json);
        }
    }

    private void onControl(ControlMessage c) throws ChangeLogException {
        String message = c.control().message() == null ? "Resync required" : c.control().message();
        LOG.error("change-streamer: replication stream requires a reset: {}", message);
        changeLog.markResetRequired();
        if (settings.autoReset()) {
            // Ends this stream (open transaction rolled back); the loop re-syncs in process.
            throw new ResetRequiredException("reset required by replication stream: " + message);
        }
        LOG.error("change-streamer: !!! reset required ({}) but autoReset is disabled; the change log is marked"
                + " reset-required and streaming continues. Re-sync the replica manually !!!", message);
    }

    /** A backup-mode subscriber's watermark was purged: its replica (the backup) must be re-synced. */
    private void backupBehind(Subscriber sub, WatermarkTooOldException e) {
        ResetRequiredException reset = new ResetRequiredException("backup replica at watermark "
                + e.requested() + " is behind change db: " + e.earliest() + ")");
        LOG.error("change-streamer: {}; marking the change log reset-required and {}", reset.getMessage(),
                settings.autoReset() ? "re-syncing (autoReset)" : "stopping (autoReset disabled)");
        try {
            changeLog.markResetRequired();
        } catch (ChangeLogException ex) {
            LOG.error("change-streamer: could not mark the change log reset-required: {}", ex.getMessage(), ex);
        }
        sub.fail(reset);
        requestReset(reset);
    }

    private void shutdown() {
        running = false;
        stopSignal.countDown();
        state = State.STOPPED;
        Throwable cause = stopCause;
        if (cause != null && isMissingChangeLog(cause)) {
            // Upstream treats this as an abort and exits cleanly: another node reset or dropped the log.
            lastError = describe(cause);
            LOG.warn("change-streamer: stopped: the change log is gone: {}", describe(cause));
        } else if (cause != null) {
            lastError = describe(cause);
            LOG.error("change-streamer: stopped: {}", describe(cause));
        } else {
            LOG.info("change-streamer: stopped");
        }
        IllegalStateException ended = new IllegalStateException("change streamer stopped" + describeStop());
        Subscriber sub;
        while ((sub = pendingRegistrations.poll()) != null) {
            sub.fail(ended);
        }
        for (Subscriber s : forwarder.subscribers()) {
            s.failAfterQueued(ended);
        }
        purger.clear();
        // The source is a shared service with a life cycle of its own (its component stops it when
        // OSGi deactivates it): the stream this streamer opened is closed above, but stopping the
        // source here would leave a registered service that refuses every later streamer, e.g. the
        // one DS creates when the storer bundle is updated (upstream owns its source and stops it).
    }

    private String describeStop() {
        Throwable c = stopCause;
        return c == null ? "" : ": " + describe(c);
    }

    // ------------------------------------------------------------------ errors and back-off

    /** Errors that stop the streamer instead of a retry (upstream AbortError/UnrecoverableError/42P01). */
    static boolean isFatal(Throwable t) {
        if (t instanceof UnrecoverableStreamException || t instanceof OwnershipLostException
                || t instanceof ResetRequiredException) {
            return true;
        }
        if (t instanceof ChangeSourceException e && !e.isRetryable()) {
            return true;
        }
        return isMissingChangeLog(t);
    }

    /** PG 42P01 anywhere in the chain: the change-log schema is gone (dropped or reset by another node). */
    static boolean isMissingChangeLog(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException sql && "42P01".equals(sql.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    private static Exception asException(Throwable t) {
        return t instanceof Exception e ? e : new IllegalStateException(t);
    }

    private void logStreamError(Throwable e) {
        if (e instanceof SourceRemovedException) {
            LOG.info("change-streamer: stream ended: {}", e.getMessage());
        } else if (requiresReset(e)) {
            LOG.warn("change-streamer: stream ended, replica must be re-synced: {}", describe(e));
        } else if (isMissingChangeLog(e)) {
            LOG.warn("change-streamer: stream ended, the change-log schema is gone (dropped or reset by another node):"
                    + " {}", describe(e));
        } else if (isFatal(e)) {
            LOG.error("change-streamer: stream ended: {}", describe(e));
        } else {
            LOG.warn("change-streamer: stream ended, restarting from the last stored watermark: {}", describe(e), e);
        }
    }

    private static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /** Back-off 25 ms doubling to 10 s (upstream RunningState); waits on the stop signal, not a sleep. */
    private final class Backoff {
        private long delayMillis = settings.initialBackoff().toMillis();

        void reset() {
            delayMillis = settings.initialBackoff().toMillis();
        }

        void pause(String what, Throwable cause) throws InterruptedException {
            long delay = delayMillis;
            delayMillis = Math.min(delayMillis * 2, settings.maxBackoff().toMillis());
            String reason = cause == null ? "stream ended" : describe(cause);
            if (delay < 1000) {
                LOG.info("change-streamer: retrying {} in {} ms after {}", what, delay, reason);
            } else if (delay < 6500) {
                LOG.warn("change-streamer: retrying {} in {} ms after {}", what, delay, reason);
            } else {
                LOG.error("change-streamer: retrying {} in {} ms after {}", what, delay, reason);
            }
            stopSignal.await(delay, TimeUnit.MILLISECONDS);
        }
    }

    /** Receives durable transactions and status echoes from the storer and acks them upstream. */
    private final class Listener implements StorerListener {
        private final ChangeStream stream;

        Listener(ChangeStream stream) {
            this.stream = stream;
        }

        @Override
        public void stored(String commitWatermark, ChangeSourceUpstream ack) {
            lastStoredWatermark = commitWatermark;
            if (ack != null) {
                stream.ack(ack);
                lastAckedWatermark = ack.watermark();
            }
        }

        @Override
        public void statusAcked(ChangeSourceUpstream echo) {
            stream.ack(echo);
            lastAckedWatermark = echo.watermark();
        }

        @Override
        public void failed(ChangeLogException cause) {
            storerFailure = cause;
            stream.close(); // wakes the stream loop, which restarts or stops
        }
    }

    // ------------------------------------------------------------------ status

    private String encodeStatus(StreamerStatus status) {
        return codec.encode(new Downstream.StatusMessage(status));
    }

    /** @return a snapshot of the status section */
    Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", state.name().toLowerCase(java.util.Locale.ROOT));
        m.put("lastError", lastError);
        m.put("taskID", settings.taskID());
        m.put("ownerAddress", settings.ownerAddress());
        m.put("replicaVersion", replicaVersion);
        m.put("streamStartWatermark", streamStartWatermark);
        m.put("lastStoredWatermark", lastStoredWatermark);
        m.put("lastAckedWatermark", lastAckedWatermark);
        m.put("transactions", transactions.get());
        m.put("changes", changes.get());
        m.put("restarts", restarts.get());
        m.put("resets", resets.get());
        Map<String, Object> fc = new LinkedHashMap<>();
        fc.put("window", flowControlWindow);
        fc.put("inFlight", forwarder.broadcastsInFlight());
        fc.put("waits", flowControlWaits.get());
        fc.put("waitedMs", flowControlWaitNanos.get() / 1_000_000);
        m.put("flowControl", fc);
        Storer s = storerForStatus();
        Map<String, Object> st = new LinkedHashMap<>();
        st.put("queuedBytes", s == null ? 0L : s.queuedBytes());
        st.put("limitBytes", s == null ? 0L : s.limitBytes());
        st.put("backPressure", s != null && s.isApplyingBackPressure());
        st.put("backPressureEvents", s == null ? 0L : s.backPressureEvents());
        m.put("storer", st);
        long now = System.currentTimeMillis();
        List<Object> subs = new ArrayList<>();
        for (Subscriber sub : forwarder.subscribers()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("id", sub.id);
            e.put("mode", sub.mode.wireName());
            e.put("protocolVersion", sub.protocolVersion);
            e.put("watermark", sub.watermark());
            e.put("acked", sub.acked());
            e.put("catchingUp", sub.isCatchingUp());
            long last = sub.lastConsumedAtMillis();
            e.put("msSinceLastAck", last == 0 ? null : now - last);
            e.put("pendingMessages", sub.outbox().pendingMessages());
            e.put("bufferedBytes", sub.bufferedBytes());
            subs.add(e);
        }
        m.put("subscribers", subs);
        m.put("pendingSubscribers", pendingRegistrations.size());
        m.put("pendingCleanups", purger.pending());
        m.put("purgedRows", purger.purgedRows());
        return m;
    }

    private Storer storerForStatus() {
        // Status must not block behind the stream loop's lock; a stale reference is fine here.
        if (streamLock.tryLock()) {
            try {
                return storer;
            } finally {
                streamLock.unlock();
            }
        }
        return lastStorer;
    }

    private volatile Storer lastStorer;

    State state() {
        return state;
    }

    String lastError() {
        return lastError;
    }

    String lastStoredWatermark() {
        return lastStoredWatermark;
    }

    String lastAckedWatermark() {
        return lastAckedWatermark;
    }

    long transactions() {
        return transactions.get();
    }

    long changes() {
        return changes.get();
    }

    long restarts() {
        return restarts.get();
    }

    long flowControlWaits() {
        return flowControlWaits.get();
    }

    long flowControlWaitNanos() {
        return flowControlWaitNanos.get();
    }

    long resets() {
        return resets.get();
    }

    String replicaVersion() {
        return replicaVersion;
    }

    long subscriptions() {
        return subscriptions.get();
    }

    long droppedSubscribers() {
        return droppedSubscribers.get();
    }

    List<Subscriber> subscribers() {
        return forwarder.subscribers();
    }

    Storer currentStorer() {
        return storerForStatus();
    }

    Purger purger() {
        return purger;
    }

    Forwarder forwarder() {
        return forwarder;
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

    /** The current stream's source was unregistered; retryable once a replacement appears. */
    static final class SourceRemovedException extends Exception {
        private static final long serialVersionUID = 1L;

        SourceRemovedException() {
            super("change source removed; waiting for a replacement");
        }
    }

    /** The change source broke the stream's ordering contract; retrying would not help. */
    static final class UnrecoverableStreamException extends Exception {
        private static final long serialVersionUID = 1L;

        UnrecoverableStreamException(String message) {
            super(message);
        }
    }
}

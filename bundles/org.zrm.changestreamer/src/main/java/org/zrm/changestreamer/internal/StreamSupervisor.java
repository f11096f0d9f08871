package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.PurgeLock;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changelog.WatermarkTooOldException;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changestreamer.internal.ChangeStreamerService.SourceProvider;
import org.zrm.changestreamer.internal.ChangeStreamerService.State;
import org.zrm.changestreamer.internal.StreamFailure.SourceRemovedException;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.StreamerStatus;

/**
 * The change streamer's life cycle, on one thread of its own (upstream {@code RunningState} and
 * the outer loop of {@code ChangeStreamerImpl.run}): initialize the source and the change log,
 * wait for the start signal, take ownership of the log, then run one {@link StreamSession} after
 * another, backing off between them, until stopped.
 *
 * <h2>After a stream ends</h2>
 * What happens next is decided by the {@link StreamFailure} class of why it ended: a retryable
 * failure or a removed source backs off (25 ms doubling to 10 s) and restarts from the change
 * log's last stored watermark; ownership loss, a malformed stream, non-retryable source errors and
 * a missing change-log table (42P01) stop the streamer; a required reset re-syncs (below).
 *
 * <h2>Auto-reset (spec §3.14)</h2>
 * Upstream exits the process when the replica must be re-synced (a {@code reset-required} control
 * message with auto-reset on, a backup-mode subscriber behind the log, or an
 * {@link AutoResetException} from the source) and relies on the orchestrator to restart it into a
 * re-sync. A bundle cannot restart its JVM, so with {@code autoReset} the supervisor re-syncs in
 * process: the stream has ended (an open transaction rolled back), every subscription is failed
 * (clients reconnect), {@link ChangeSource#initialize(boolean) initialize(true)} and
 * {@link ChangeLog#ensureReplicationConfig} reset the log to the new replica version, ownership is
 * taken again and streaming resumes. A second reset signal during that re-sync stops the
 * streamer, as upstream's second {@code AutoResetSignal} is fatal. Without {@code autoReset} a
 * backup behind the log or a source {@link AutoResetException} stops the streamer with a prominent
 * error; a {@code reset-required} control message only marks the log and streaming continues,
 * exactly as upstream.
 *
 * <h2>Stopping</h2>
 * {@link #requestStop}, {@link #requestReset} and {@link #sourceRemoved} may be called from any
 * thread: they set a flag and close the current stream, which wakes the session. The loop itself
 * waits on signals (stop, start, a source appearing), never by polling with sleeps.
 */
final class StreamSupervisor implements StreamSession.Control, SubscriberRegistry.Gate {

    private static final Logger LOG = LoggerFactory.getLogger(StreamSupervisor.class);
    /**
     * Bound of one wait for a change source after the grace period: a registration wakes the
     * wait at once (signal); the bound only lets the loop notice {@link #stop} between waits.
     */
    private static final Duration SOURCE_RECHECK_INTERVAL = Duration.ofSeconds(5);

    private final StreamerSettings settings;
    private final ChangeLog changeLog;
    private final SourceProvider sources;
    private final java.util.function.BooleanSupplier replicaExists;
    private final StreamSession.Parts parts;
    private final SubscriberRegistry registry;
    private final StreamerCounters counters;
    private final Purger purger;
    private final CompletableFuture<Void> initialized = new CompletableFuture<>();
    /** Completes when the loop has ended: with why it stopped, or {@code null} for an orderly stop. */
    private final CompletableFuture<Throwable> terminated = new CompletableFuture<>();
    private final Thread loopThread;

    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private final CountDownLatch startSignal = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile ChangeStream currentStream;
    private volatile ChangeSource currentSource;
    private volatile Throwable stopCause;
    /** Set (from any thread) when the replica must be re-synced; consumed by the loop. */
    private volatile ResetRequiredException pendingReset;
    /** Set when the source of the current stream was unregistered; consumed by the loop. */
    private volatile boolean sourceGone;

    private volatile State state = State.STARTING;
    private volatile String lastError;
    private volatile String streamStartWatermark;
    /** Owned by the loop thread: the back-off of the current stream loop, reset once a stream is live. */
    private Backoff streamBackoff;

    /**
     * @param parts what every stream session works with; its registry and counters are shared
     * @param sources the change source(s)
     * @param purger cleared whenever the lineage changes and on stop
     */
    StreamSupervisor(StreamSession.Parts parts, SourceProvider sources, Purger purger) {
        this(parts, sources, purger, () -> true);
    }

    /**
     * @param replicaExists whether a local replica exists; without one after the restore step the
     *     start-up purge lock is released before the source initializes (see {@link #tryPurgeLock})
     */
    StreamSupervisor(StreamSession.Parts parts, SourceProvider sources, Purger purger,
            java.util.function.BooleanSupplier replicaExists) {
        this.replicaExists = replicaExists;
        this.settings = parts.settings();
        this.changeLog = parts.changeLog();
        this.parts = parts;
        this.registry = parts.registry();
        this.counters = parts.counters();
        this.sources = sources;
        this.purger = purger;
        this.loopThread = new Thread(this::run, "zrm-changestreamer-" + settings.taskID());
        loopThread.setDaemon(true);
    }

    /** Starts the loop thread. */
    void start() {
        loopThread.start();
    }

    // ------------------------------------------------------------------ called from any thread

    /** Makes the loop end; {@code cause} null for an orderly stop. */
    void requestStop(Throwable cause) {
        if (cause != null && stopCause == null) {
            stopCause = cause;
        }
        running = false;
        stopSignal.countDown();
        startSignal.countDown();
        closeCurrentStream();
    }

    /** Asks the loop to re-sync (auto-reset) or, without auto-reset, to stop. */
    void requestReset(ResetRequiredException reset) {
        if (!settings.autoReset()) {
            requestStop(reset);
            return;
        }
        pendingReset = reset;
        closeCurrentStream();
    }

    /**
     * Ends the current stream if it comes from {@code source}, which is going away; the loop then
     * waits for a replacement.
     */
    void sourceRemoved(ChangeSource source) {
        if (source == null || source != currentSource) {
            return;
        }
        LOG.info("change-streamer: change source removed at stored watermark {}; ending the stream and waiting for"
                + " a replacement", counters.lastStoredWatermark());
        sourceGone = true;
        currentSource = null;
        closeCurrentStream();
    }

    /** A backup-mode subscriber's watermark was purged: its replica (the backup) must be re-synced. */
    void backupBehind(Subscriber sub, WatermarkTooOldException e) {
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

    private void closeCurrentStream() {
        ChangeStream s = currentStream;
        if (s != null) {
            s.close();
        }
        // A session waiting for the flow-control window would not see the closed stream.
        parts.forwarder().releaseBroadcast();
    }

    /**
     * Stops and waits for the loop, interrupting it if it does not end in time. Idempotent.
     *
     * @param timeout how long to wait before interrupting
     */
    void stop(Duration timeout) throws InterruptedException {
        requestStop(null);
        loopThread.join(Math.max(1, timeout.toMillis()));
        if (loopThread.isAlive()) {
            LOG.warn("change-streamer: stream loop did not stop within {} ms; interrupting it", timeout.toMillis());
            loopThread.interrupt();
            loopThread.join(5_000);
        }
    }

    boolean awaitStopped(Duration timeout) throws InterruptedException {
        loopThread.join(Math.max(1, timeout.toMillis()));
        return !loopThread.isAlive();
    }

    /** @return completes when the loop has ended, with its stop cause ({@code null}: an orderly stop) */
    CompletableFuture<Throwable> terminated() {
        return terminated;
    }

    /** @return completes once the source and the change log were first initialized */
    CompletableFuture<Void> initialized() {
        return initialized;
    }

    // ------------------------------------------------------------------ StreamSession.Control, Gate

    @Override
    public boolean running() {
        return running;
    }

    @Override
    public boolean resetPending() {
        return pendingReset != null;
    }

    @Override
    public boolean sourceGone() {
        return sourceGone;
    }

    @Override
    public void streaming() {
        streamBackoff.reset();
        state = State.STREAMING;
        lastError = null;
    }

    @Override
    public String refusal() {
        return running ? null : "change streamer is stopped" + describeStop();
    }

    @Override
    public void servingSubscriberConnected() {
        startSignal.countDown();
    }

    // ------------------------------------------------------------------ status

    State state() {
        return state;
    }

    String lastError() {
        return lastError;
    }

    String streamStartWatermark() {
        return streamStartWatermark;
    }

    // ------------------------------------------------------------------ the loop thread

    private void run() {
        PurgeLock purgeLock = null;
        try {
            purgeLock = tryPurgeLock();
            restore(purgeLock);
            if (purgeLock != null && !replicaExists.getAsBoolean()) {
                // No replica after the restore step (no backup, or none usable): the source will
                // initial-sync a new lineage, so there is nothing left to protect, and the open lock
                // would block the slot creation of that sync (see tryPurgeLock).
                LOG.info("change-streamer: no local replica after the restore step; releasing the purge lock before"
                        + " the initial sync");
                purgeLock.close();
                purgeLock = null;
            }
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

    /**
     * Restores a missing replica from the backup before the source is initialized (which would
     * otherwise initial-sync it to a new replica version). As upstream, only when the change log
     * has entries: with nothing to catch a restored replica up from, the initial sync is the start.
     */
    private void restore(PurgeLock purgeLock) throws InterruptedException {
        RestoreStep step = restoreStep;
        if (step == null) {
            return;
        }
        if (purgeLock == null) {
            LOG.info("change-streamer: the change log is empty or new: no restore from the backup (a restored replica"
                    + " could not be caught up); the change source syncs the replica if it is missing");
            return;
        }
        step.restore(purgeLock.replicaVersion(), purgeLock.minWatermark());
    }

    /** The restore before initialization; see {@link #restoreStep(RestoreStep)}. */
    interface RestoreStep {
        /** Restores the replica if it is missing and the backup is usable; failures are logged, not thrown. */
        void restore(String replicaVersion, String minWatermark) throws InterruptedException;
    }

    private volatile RestoreStep restoreStep;

    /** Sets the restore step; must be called before {@link #start()}. */
    void restoreStep(RestoreStep step) {
        this.restoreStep = step;
    }

    /**
     * Keeps the oldest change-log rows from another node's purge until this node owns the log, so
     * that an existing (surviving or restored) replica can catch up from them. When no replica
     * exists after the restore step, the lock is released at once (see {@link #run}): the source
     * will initial-sync a new lineage, and holding the lock would deadlock that sync whenever the
     * change DB is the upstream database, because creating its replication slot waits for every
     * transaction that holds an xid, including the lock's ({@code SELECT … FOR SHARE});
     * zero-cache releases its lock in that case as well.
     */
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
                String previous = registry.replicaVersion();
                registry.replicaVersion(s.replicaVersion());
                if (previous != null && !previous.equals(s.replicaVersion())) {
                    int n = registry.failAll(new ResetRequiredException("replica version changed from " + previous
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
                if (StreamFailure.isFatal(e) || !running) {
                    throw e;
                }
                lastError = StreamFailure.describe(e);
                state = State.BACKOFF;
                backoff.pause("initializing", e);
            }
        }
        throw new InterruptedException("stopped");
    }

    /**
     * Waits for the selected change source. A short absence (a source bundle being updated) is
     * silent; past the provider's grace period the absence is a deployment error that an operator
     * must fix, so it is logged once, as an error naming what would satisfy it, and shown as the
     * last error. The wait itself goes on: deploying a matching source later starts the stream.
     */
    private ChangeSource awaitSource() throws InterruptedException {
        Optional<ChangeSource> s = sources.await(sources.grace());
        boolean reported = false;
        while (running) {
            if (s.isPresent()) {
                if (reported) {
                    LOG.info("change-streamer: a matching change source was registered; starting");
                }
                return s.get();
            }
            if (!reported) {
                String reason = sources.missingReason();
                LOG.error("change-streamer: {}", reason);
                lastError = reason;
                reported = true;
            }
            s = sources.await(SOURCE_RECHECK_INTERVAL);
        }
        throw new InterruptedException("stopped");
    }

    private void startLagReporter(ChangeSource source) {
        try {
            OptionalLong next = source.startLagReporter();
            next.ifPresent(counters::lagReporterStarted);
            StreamerStatus status = next.isPresent()
                    ? new StreamerStatus(new LagReport(null, next.getAsLong(), Passthrough.NONE), Passthrough.NONE)
                    : new StreamerStatus();
            registry.statusForNewSubscribers(parts.codec().encode(new Downstream.StatusMessage(status)));
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
                if (StreamFailure.isFatal(e) || !running) {
                    throw e;
                }
                lastError = StreamFailure.describe(e);
                backoff.pause("taking ownership", e);
            }
        }
    }

    private void streamLoop() throws Exception {
        streamBackoff = new Backoff();
        while (running) {
            Throwable error = runStream();
            if (!running) {
                return;
            }
            StreamFailure kind = error == null ? StreamFailure.RETRYABLE : StreamFailure.of(error);
            switch (kind) {
                case RESET_REQUIRED -> {
                    if (!settings.autoReset()) {
                        LOG.error("change-streamer: !!! the replica must be re-synced ({}) but autoReset is disabled;"
                                + " stopping. Enable autoReset or re-sync the replica manually !!!",
                                StreamFailure.describe(error));
                        throw StreamFailure.asException(error);
                    }
                    autoReset(error);
                    streamBackoff.reset();
                }
                case CHANGE_LOG_GONE, FATAL -> throw StreamFailure.asException(error);
                case SOURCE_REMOVED, RETRYABLE -> {
                    counters.restarted();
                    lastError = error == null ? null : StreamFailure.describe(error);
                    state = State.BACKOFF;
                    streamBackoff.pause("streaming", error);
                }
            }
        }
    }

    /** Opens the next stream and runs a session on it; @return why it ended, {@code null} on a stop */
    private Throwable runStream() {
        ChangeStream stream = null;
        Throwable error;
        try {
            ChangeSource source = awaitSource();
            if (source != currentSource) {
                LOG.info("change-streamer: change source replaced; initializing the new one");
                String before = registry.replicaVersion();
                initialize(false, null);
                if (before != null && !before.equals(registry.replicaVersion())) {
                    // The new source re-synced (auto-reset): resetting the change log to the new
                    // lineage cleared its owner, so take it again before storing anything.
                    assumeOwnership();
                }
            }
            StreamStartParameters params = changeLog.streamStartParameters();
            streamStartWatermark = params.lastWatermark();
            stream = source.startStream(params.lastWatermark(), params.backfillRequests());
            currentStream = stream;
            if (!running) {
                error = null;
            } else if (source != currentSource) {
                error = new SourceRemovedException(); // removed while the stream was being opened
            } else {
                LOG.info("change-streamer: streaming from {} ({} backfill(s) to resume)", params.lastWatermark(),
                        params.backfillRequests().size());
                error = new StreamSession(parts, stream, params.lastWatermark(), this).run();
            }
        } catch (Exception e) {
            error = StreamFailure.endCause(e, null, running, sourceGone);
        } finally {
            if (stream != null) {
                stream.close();
            }
            currentStream = null;
        }
        ResetRequiredException reset = pendingReset;
        if (reset != null) {
            pendingReset = null;
            if (running) {
                error = reset; // whatever the closed stream reported, the cause is the reset request
            }
        }
        if (error != null && !(error instanceof InterruptedException)) {
            StreamFailure.logStreamEnd(error);
        }
        return error;
    }

    /**
     * In-process re-sync (see the class comment). The stream has already ended and its storer is
     * stopped. Failures of the re-sync itself follow {@link #initialize}: retryable ones back off,
     * a second reset signal or a fatal error stops the streamer.
     */
    private void autoReset(Throwable cause) throws Exception {
        long n = counters.resetStarted();
        state = State.RESETTING;
        lastError = StreamFailure.describe(cause);
        String oldVersion = registry.replicaVersion();
        LOG.warn("change-streamer: auto-reset #{} step 1/4: replica {} must be re-synced ({}); stream ended at stored"
                + " watermark {}", n, oldVersion, StreamFailure.describe(cause), counters.lastStoredWatermark());
        // Subscribers arriving during the re-sync are checked against the new version when they register.
        registry.replicaVersion(null);
        int failed = registry.failAll(new ResetRequiredException("replica " + oldVersion
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

    private void shutdown() {
        running = false;
        stopSignal.countDown();
        state = State.STOPPED;
        Throwable cause = stopCause;
        if (cause != null && StreamFailure.isMissingChangeLog(cause)) {
            // Upstream treats this as an abort and exits cleanly: another node reset or dropped the log.
            lastError = StreamFailure.describe(cause);
            LOG.warn("change-streamer: stopped: the change log is gone: {}", StreamFailure.describe(cause));
        } else if (cause != null) {
            lastError = StreamFailure.describe(cause);
            LOG.error("change-streamer: stopped: {}", StreamFailure.describe(cause));
        } else {
            LOG.info("change-streamer: stopped");
        }
        registry.endAll(new IllegalStateException("change streamer stopped" + describeStop()));
        purger.clear();
        // The source is a shared service with a life cycle of its own (its component stops it when
        // OSGi deactivates it): the stream this streamer opened is closed, but stopping the source
        // here would leave a registered service that refuses every later streamer, e.g. the one DS
        // creates when the storer bundle is updated (upstream owns its source and stops it).
        terminated.complete(cause);
    }

    private String describeStop() {
        Throwable c = stopCause;
        return c == null ? "" : ": " + StreamFailure.describe(c);
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
            String reason = cause == null ? "stream ended" : StreamFailure.describe(cause);
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
}

package org.zrm.changesource.pg.internal.backfill;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.pg.internal.stream.ChangeStreamMultiplexer;
import org.zrm.changesource.pg.internal.stream.ChangeStreamMultiplexer.Reservation;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.DropColumn;
import org.zrm.protocol.DropTable;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.RenameTable;
import org.zrm.protocol.Rollback;
import org.zrm.protocol.TableMetadata;
import org.zrm.protocol.Update;
import org.zrm.protocol.UpdateColumn;
import org.zrm.protocol.UpdateTableMetadata;
import org.zrm.secret.Secrets;
import org.zrm.watermark.StateVersion;

/**
 * Runs the backfills a change stream needs, beside it and never in its way (upstream's
 * {@code BackfillManager}, spec Appendix B).
 *
 * <p><b>What is required.</b> A map of requests keyed by table, seeded with the change streamer's
 * unfinished requests ({@link #run}) and kept up to date from the change stream, which this
 * manager listens to: {@code create-table}/{@code add-column} with {@code backfill} add columns,
 * {@code update-table-metadata}, {@code rename-table}, {@code update-column} (a rename) and
 * {@code drop-column} rewrite them, {@code drop-table} removes them, {@code backfill-completed}
 * removes the completed columns. A change that invalidates the running backfill cancels it; an
 * {@code update} that changes a row key makes the running backfill's data too old if its snapshot
 * precedes that transaction, so it is retried at a newer snapshot.
 *
 * <p><b>Scheduling.</b> When no backfill runs and no retry is pending, a random required request
 * is started (a random pick, as upstream, so that one request that keeps failing cannot block the
 * others); every commit of the stream checks again. A failed run, including
 * {@link MissingRowKeyException} and {@link SchemaIncompatibilityException}, is retried after an
 * exponential back-off from {@link #MIN_BACKOFF} to {@link #MAX_BACKOFF}; a run that ends normally
 * resets it.
 *
 * <p><b>Streaming.</b> A run's messages are written as transactions of their own,
 * {@code ["begin",{"json":"s","skipAck":true},{"commitWatermark":"<major>.<minor+1>"}]}, where
 * {@code <major>.<minor>} is the watermark the stream was released with: between two replication
 * transactions, never acked upstream. The run yields the stream (commits its transaction and
 * releases the reservation) at the next message boundary when the replication pump waits for it,
 * and in any case after {@link #YIELD_BYTES} or {@link #YIELD_AFTER} of backfill data, so a live
 * transaction waits at most for one backfill message to be read and pushed. {@code
 * backfill-completed} is only sent once the stream has reached the run's snapshot watermark, in a
 * transaction whose watermark is at least that watermark (so the replica's state version never
 * precedes a backfilled row).
 *
 * <p><b>Threads and bounds.</b> One thread per manager (hence per change stream) runs the backfill
 * and the retry timer; its queue holds at most one start and one retry task. The change stream's
 * threads only call {@link #onChange} (cheap, never blocking). {@link #cancel()} (the stream ended)
 * cancels the timer, closes the running {@link BackfillRun} and interrupts the thread. A run holds
 * at most one message's rows; the consumer's buffer bounds what is queued (see
 * {@link ChangeStreamMultiplexer}).
 */
public final class BackfillManager implements ChangeStreamMultiplexer.Listener, ChangeStreamMultiplexer.Cancelable {

    private static final Logger LOG = LoggerFactory.getLogger(BackfillManager.class);

    /** Upstream's MIN_BACKOFF_INTERVAL_MS. */
    public static final Duration MIN_BACKOFF = Duration.ofSeconds(2);
    /** Upstream's MAX_BACKOFF_INTERVAL_MS. */
    public static final Duration MAX_BACKOFF = Duration.ofSeconds(60);
    /**
     * Most backfill data (estimated in-memory size) in one backfill transaction. Four of the
     * snapshot reader's 64 KiB COPY messages: enough that the per-transaction cost of storing and
     * applying (a change-log commit, a SQLite commit) is spread over many rows, small enough that a
     * transaction is pushed in a few milliseconds.
     */
    public static final long YIELD_BYTES = 256 * 1024;
    /**
     * Longest a backfill transaction stays open. The pump does not wait for this (it is served at
     * the next message boundary); the bound keeps the reservation free between short transactions
     * so that the pump usually finds it free and never waits at all. 10 ms is half the issue's
     * 20 ms live-latency budget.
     */
    public static final Duration YIELD_AFTER = Duration.ofMillis(10);
    /** How often a running backfill logs its progress (as initial sync does). */
    public static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(5);
    /** Accounting cost of a begin or commit message. */
    static final int CONTROL_COST = 64;
    static final String PRODUCER = "backfill";

    private record TableKey(String schema, String name) {
        @Override
        public String toString() {
            return schema + "." + name;
        }
    }

    /** The running backfill's state; fields other than the request are shared with the listener. */
    private static final class Running {
        final BackfillRequest request;
        final TableKey key;
        final BackfillProgress progress;
        volatile String canceledReason;
        volatile boolean stopped;
        volatile String minWatermark = "";
        volatile BackfillRun run;

        Running(BackfillRequest request, long nowNanos) {
            this.request = request;
            this.key = keyOf(request);
            this.progress = new BackfillProgress(key.toString(), List.copyOf(request.columns().keySet()), nowNanos);
        }
    }

    /** Per-table counters that outlive single runs, for status. */
    private static final class TableStats {
        int retries;
        String lastError;
    }

    private final String name;
    private final ChangeStreamMultiplexer stream;
    private final BackfillStreamer streamer;
    private final JsonFormat jsonFormat;
    private final long minBackoffMs;
    private final long maxBackoffMs;
    private final Random random;
    private final LongSupplier nanoClock;
    private final ScheduledThreadPoolExecutor executor;

    // Guarded by this.
    private final Map<TableKey, BackfillRequest> required = new LinkedHashMap<>();
    private final Map<TableKey, TableStats> stats = new LinkedHashMap<>();
    private String lastStatusWatermark;
    private ScheduledFuture<?> retryTimer;
    private long retryDelayMs;
    private boolean cancelled;
    private boolean started;
    // Read without the lock on the listener's fast path.
    private volatile Running running;
    // Written by whichever producer holds the reservation, read by the listener of its messages.
    private volatile String currentTxWatermark;

    /**
     * A manager with upstream's settings: stringified JSON values and a 2 s → 60 s back-off.
     *
     * @param name for the thread's name and logs (the slot)
     */
    public BackfillManager(String name, ChangeStreamMultiplexer stream, BackfillStreamer streamer) {
        this(name, stream, streamer, JsonFormat.STRINGIFIED, MIN_BACKOFF, MAX_BACKOFF, new Random(), System::nanoTime);
    }

    BackfillManager(String name, ChangeStreamMultiplexer stream, BackfillStreamer streamer, JsonFormat jsonFormat,
            Duration minBackoff, Duration maxBackoff, Random random, LongSupplier nanoClock) {
        this.name = Objects.requireNonNull(name, "name");
        this.stream = Objects.requireNonNull(stream, "stream");
        this.streamer = Objects.requireNonNull(streamer, "streamer");
        this.jsonFormat = Objects.requireNonNull(jsonFormat, "jsonFormat");
        this.minBackoffMs = minBackoff.toMillis();
        this.maxBackoffMs = maxBackoff.toMillis();
        this.retryDelayMs = minBackoffMs;
        this.random = Objects.requireNonNull(random, "random");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "zrm-pg-backfill-" + name);
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.DiscardPolicy()); // after cancel() nothing more is wanted
        ex.setRemoveOnCancelPolicy(true);
        ex.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.executor = ex;
    }

    /**
     * Starts managing: records the stream's start watermark and the change streamer's unfinished
     * requests, and starts one if any.
     *
     * @param lastWatermark the watermark the stream starts after
     * @param initialRequests the requests recorded in the change log
     */
    public void run(String lastWatermark, List<BackfillRequest> initialRequests) {
        LOG.info("backfill manager of {} starting with {} request(s) from the change log", name,
                initialRequests.size());
        synchronized (this) {
            Objects.requireNonNull(lastWatermark, "lastWatermark");
            // The stream may already have moved on (the listener is attached before it starts).
            if (lastStatusWatermark == null || lastStatusWatermark.compareTo(lastWatermark) < 0) {
                lastStatusWatermark = lastWatermark;
            }
            started = true;
            for (BackfillRequest r : initialRequests) {
                setRequired("initial-request", r);
            }
            checkAndStart();
        }
    }

    // ------------------------------------------------------------------ scheduling

    /** Starts a random required backfill if none runs and no retry is pending. Holds the lock. */
    private void checkAndStart() {
        if (!started || cancelled || retryTimer != null || running != null || required.isEmpty()) {
            return;
        }
        List<BackfillRequest> candidates = new ArrayList<>(required.values());
        BackfillRequest request = candidates.get(random.nextInt(candidates.size()));
        Running state = new Running(request, nanoClock.getAsLong());
        running = state;
        executor.execute(() -> runTask(state));
    }

    private void runTask(Running state) {
        try {
            runBackfill(state);
            synchronized (this) {
                stopRunning("backfill exited", state);
                retryDelayMs = minBackoffMs;
            }
        } catch (InterruptedException e) {
            synchronized (this) {
                stopRunning("backfill interrupted", state);
            }
            Thread.currentThread().interrupt();
        } catch (Exception | Error e) {
            synchronized (this) {
                stopRunning(String.valueOf(e), state);
                if (cancelled) {
                    LOG.debug("backfill of {} ended with the stream: {}", state.key, e.toString());
                    return;
                }
                TableStats s = stats.computeIfAbsent(state.key, k -> new TableStats());
                s.retries++;
                s.lastError = Secrets.maskUrls(String.valueOf(e.getMessage() == null ? e : e.getMessage()));
                retryWithBackoff(state, e);
            }
            if (e instanceof Error err) {
                throw err;
            }
        }
    }

    private void retryWithBackoff(Running state, Throwable e) {
        String msg = "Error running backfill of " + state.key + ". Retrying in " + retryDelayMs + " ms: " + e;
        if (retryDelayMs >= maxBackoffMs) {
            LOG.error(msg, e);
        } else {
            LOG.warn(msg);
        }
        retryTimer = executor.schedule(() -> {
            synchronized (this) {
                retryTimer = null;
                checkAndStart();
            }
        }, retryDelayMs, TimeUnit.MILLISECONDS);
        retryDelayMs = Math.min(retryDelayMs * 2, maxBackoffMs);
    }

    /**
     * Stops the running backfill for {@code reason}; with {@code instance}, only if that instance
     * still runs (so a finishing run cannot stop its successor). Holds the lock.
     */
    private void stopRunning(String reason, Running instance) {
        Running r = running;
        if (r != null && (instance == null || r == instance)) {
            r.canceledReason = reason;
            r.stopped = true;
            running = null;
            if (reason != null) {
                LOG.info("stopping backfill of {}: {}", r.key, reason);
            }
        }
    }

    // ------------------------------------------------------------------ streaming (backfill thread)

    /** What {@link Session#begin} did. */
    private enum Began { BEGAN, CANCELED, YIELDED }

    /** The stream-side state of one run: its reservation and open transaction. */
    private final class Session {
        final Running state;
        Reservation reservation;
        String tx;
        long txBytes;
        long txStartNanos;
        long nextLogNanos;

        Session(Running state) {
            this.state = state;
            this.nextLogNanos = nanoClock.getAsLong() + PROGRESS_INTERVAL.toNanos();
        }

        /**
         * Reserves the stream and begins a transaction.
         *
         * @return {@link Began#BEGAN}; {@link Began#CANCELED} if the run is cancelled; or
         *     {@link Began#YIELDED} if the stream was handed on untouched, to be asked for again
         */
        Began begin(DataOrSchemaChange msg) throws ChangeSourceException, InterruptedException {
            Reservation r = stream.reserve(PRODUCER);
            String last = r.watermark();
            boolean cancel;
            synchronized (BackfillManager.this) {
                cancel = state.stopped;
                if (!cancel && msg instanceof Backfill b && b.watermark().compareTo(state.minWatermark) < 0) {
                    stopRunning("row key change at " + state.minWatermark + " postdates backfill watermark at "
                            + b.watermark(), state);
                    cancel = true;
                }
            }
            if (cancel) {
                stream.release(r, last);
                return Began.CANCELED;
            }
            // The room found before asking for the stream may be gone: a live transaction that held
            // the stream meanwhile can have filled the consumer's buffer. Begun now, the first push
            // would wait for the consumer while holding the stream, and so would a live
            // transaction that asks meanwhile; so hand the stream on untouched and ask again.
            if (!stream.awaitRoom(r)) {
                stream.release(r, last);
                return Began.YIELDED;
            }
            StateVersion v = StateVersion.parse(last);
            String watermark = StateVersion.of(v.major(), v.minor().orElse(BigInteger.ZERO).add(BigInteger.ONE))
                    .toString();
            if (msg instanceof BackfillCompleted c && watermark.compareTo(c.watermark()) < 0) {
                // The stream has reached the snapshot (checked before): the transaction carrying
                // the completion must not be older than any row it completes.
                watermark = c.watermark();
            }
            reservation = r;
            stream.push(r, new BeginMessage(new Begin(jsonFormat, Boolean.TRUE, Passthrough.NONE), watermark),
                    CONTROL_COST);
            tx = watermark;
            txBytes = 0;
            txStartNanos = nanoClock.getAsLong();
            return Began.BEGAN;
        }

        void commit() throws ChangeSourceException, InterruptedException {
            if (tx != null) {
                String watermark = tx;
                stream.push(reservation, new CommitMessage(new Commit(Passthrough.NONE), watermark), CONTROL_COST);
                tx = null;
                Reservation r = reservation;
                reservation = null;
                stream.release(r, watermark);
                state.progress.committed();
            }
        }

        /** Ends an open transaction without committing it, after a failure. */
        void abort() {
            if (tx == null) {
                return;
            }
            Reservation r = reservation;
            tx = null;
            reservation = null;
            try {
                stream.push(r, new RollbackMessage(new Rollback()), CONTROL_COST);
            } catch (ChangeSourceException | InterruptedException | RuntimeException e) {
                // The stream has ended: nobody will read the rollback, nor wait for the release.
                LOG.debug("could not roll back the backfill transaction of {}: {}", state.key, e.toString());
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
            }
            stream.release(r, r.watermark());
        }

        boolean overBudget() {
            return tx != null && (txBytes >= YIELD_BYTES || nanoClock.getAsLong() - txStartNanos >= YIELD_AFTER.toNanos());
        }
    }

    private void runBackfill(Running state) throws Exception {
        if (state.stopped) {
            return;
        }
        LOG.info("starting backfill of {} columns {}", state.key, state.request.columns().keySet());
        BackfillRun run = streamer.open(state.request);
        state.run = run;
        Session s = new Session(state);
        try {
            while (true) {
                if (s.overBudget()) {
                    s.commit();
                }
                DataOrSchemaChange msg = run.next();
                if (msg == null) {
                    break;
                }
                String msgWatermark;
                if (msg instanceof Backfill b) {
                    msgWatermark = b.watermark();
                } else if (msg instanceof BackfillCompleted c) {
                    msgWatermark = c.watermark();
                } else {
                    throw new ChangeSourceException("backfill stream of " + state.key + " produced a " + msg.tag()
                            + " message; only backfill and backfill-completed are valid");
                }
                boolean completed = msg instanceof BackfillCompleted;
                boolean mustWait = completed && (!streamReached(msgWatermark)
                        || s.tx != null && s.tx.compareTo(msgWatermark) < 0);
                if (s.tx != null && (stream.hasWaiters() || mustWait)) {
                    s.commit(); // yield to the main stream
                }
                // Wait for the consumer before pushing, not inside the push: blocked there while
                // holding the stream, the backfill made a live transaction that asked meanwhile
                // wait for the consumer too (tens of ms on a busy machine). A request that comes
                // while this waits makes the backfill commit and yield first.
                if (s.tx != null && !stream.awaitRoom(s.reservation)) {
                    s.commit();
                }
                if (completed) {
                    awaitStreamReached(state, msgWatermark);
                }
                if (msg instanceof Backfill b && !b.rowValues().isEmpty() && b.relation().rowKey().columns().isEmpty()) {
                    throw new MissingRowKeyException(state.request);
                }
                while (s.tx == null) {
                    stream.awaitRoom(null);
                    if (s.begin(msg) == Began.CANCELED) {
                        LOG.info("backfill of {} canceled: {}", state.key, state.canceledReason);
                        synchronized (this) {
                            checkAndStart(); // the next one, if any
                        }
                        return;
                    }
                }
                int cost = run.estimatedSize(msg);
                stream.push(s.reservation, new DataMessage(msg), cost);
                s.txBytes += cost;
                if (msg instanceof Backfill b) {
                    state.progress.sent(b.rowValues().size(), cost, b.status());
                } else {
                    state.progress.sent(0, 0, ((BackfillCompleted) msg).status());
                }
                long now = nanoClock.getAsLong();
                if (now >= s.nextLogNanos) {
                    s.nextLogNanos = now + PROGRESS_INTERVAL.toNanos();
                    LOG.info("backfill of {} progress: {}", state.key, state.progress.snapshot(now).describe());
                }
            }
            s.commit();
            LOG.info("backfill of {} finished: {}", state.key,
                    state.progress.snapshot(nanoClock.getAsLong()).describe());
        } catch (Exception | Error e) {
            s.abort();
            throw e;
        } finally {
            state.run = null;
            run.close();
        }
    }

    private synchronized boolean streamReached(String watermark) {
        return lastStatusWatermark.compareTo(watermark) >= 0;
    }

    /** Waits until the change stream has passed {@code watermark}; a commit or status wakes it. */
    private synchronized void awaitStreamReached(Running state, String watermark) throws InterruptedException {
        if (lastStatusWatermark.compareTo(watermark) < 0) {
            LOG.info("backfill of {}: waiting for the change stream (at {}) to reach {}", state.key,
                    lastStatusWatermark, watermark);
        }
        while (lastStatusWatermark.compareTo(watermark) < 0) {
            if (cancelled) {
                throw new InterruptedException("change stream canceled");
            }
            wait();
        }
    }

    /** Estimated in-memory size of a backfill message, for the consumer's byte bound. */
    static int cost(DataOrSchemaChange msg) {
        if (!(msg instanceof Backfill b)) {
            return CONTROL_COST;
        }
        long c = CONTROL_COST;
        for (List<Object> row : b.rowValues()) {
            c += 24;
            for (Object v : row) {
                c += valueCost(v);
            }
        }
        return (int) Math.min(Integer.MAX_VALUE, c);
    }

    private static long valueCost(Object v) {
        if (v instanceof String s) {
            return 40 + s.length();
        } else if (v instanceof byte[] bytes) {
            return 16 + bytes.length;
        } else if (v instanceof List<?> list) {
            long c = 24;
            for (Object e : list) {
                c += valueCost(e);
            }
            return c;
        } else if (v instanceof Map<?, ?> map) {
            long c = 48;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                c += valueCost(e.getKey()) + valueCost(e.getValue());
            }
            return c;
        }
        return 16;
    }

    // ------------------------------------------------------------------ the listener

    @Override
    public void onChange(ChangeStreamMessage message) {
        if (message instanceof BeginMessage b) {
            currentTxWatermark = b.commitWatermark();
        } else if (message instanceof CommitMessage c) {
            synchronized (this) {
                currentTxWatermark = null;
                setLastStatusWatermark(c.watermark());
                // Every commit is a chance to start the next backfill.
                checkAndStart();
            }
        } else if (message instanceof StatusMessage s) {
            synchronized (this) {
                setLastStatusWatermark(s.watermark());
            }
        } else if (message instanceof DataMessage d) {
            onData(d.change());
        }
    }

    private void onData(DataOrSchemaChange change) {
        if (change instanceof Update u) {
            Running r = running;
            if (r != null && u.key() != null) {
                checkKeyChange(r, u);
            }
            return;
        }
        if (!(change instanceof org.zrm.protocol.SchemaChange)) {
            return; // inserts, deletes, truncates and backfill rows change no request
        }
        synchronized (this) {
            onSchemaChange(change);
        }
    }

    private void checkKeyChange(Running r, Update u) {
        if (!keyOf(r.request).equals(new TableKey(u.relation().schema(), u.relation().name()))) {
            return;
        }
        TableMetadata metadata = r.request.table().metadata();
        if (metadata == null) {
            return;
        }
        for (String col : metadata.rowKey().keySet()) {
            if (!Objects.equals(u.key().get(col), u.newRow().get(col))) {
                String tx = currentTxWatermark;
                if (tx == null) {
                    LOG.error("update of {} outside a transaction; ignored for backfill", r.key);
                    return;
                }
                r.minWatermark = tx;
                LOG.info("backfill of {}: the key of a row changed (column {}); backfill data must not predate {}",
                        r.key, col, tx);
                return;
            }
        }
    }

    private boolean runningFor(TableKey key) {
        Running r = running;
        return r != null && r.key.equals(key);
    }

    private void onSchemaChange(DataOrSchemaChange change) {
        if (change instanceof UpdateTableMetadata m) {
            TableKey key = new TableKey(m.table().schema(), m.table().name());
            BackfillRequest req = required.get(key);
            if (req != null) {
                setRequired("update-table-metadata", new BackfillRequest(withMetadata(req.table(), m.newMetadata()),
                        req.columns(), req.extra()));
                if (runningFor(key)) {
                    stopRunning("TableMetadata updated", null);
                }
            }
        } else if (change instanceof CreateTable c) {
            if (c.backfill() != null) {
                setRequired("create-table", new BackfillRequest(new BackfillRequest.Table(c.spec().schema(),
                        c.spec().name(), c.metadata()), c.backfill()));
            }
        } else if (change instanceof RenameTable rt) {
            TableKey old = new TableKey(rt.oldId().schema(), rt.oldId().name());
            BackfillRequest req = required.get(old);
            if (req != null) {
                deleteRequired("rename-table", old);
                BackfillRequest.Table t = req.table();
                setRequired("rename-table", new BackfillRequest(new BackfillRequest.Table(rt.newId().schema(),
                        rt.newId().name(), t.metadata(), t.extra()), req.columns(), req.extra()));
                if (runningFor(old)) {
                    stopRunning("table renamed", null);
                }
            }
        } else if (change instanceof DropTable dt) {
            TableKey key = new TableKey(dt.id().schema(), dt.id().name());
            if (required.containsKey(key)) {
                deleteRequired("drop-table", key);
                if (runningFor(key)) {
                    stopRunning("table dropped", null);
                }
            }
        } else if (change instanceof AddColumn ac) {
            if (ac.backfill() != null) {
                TableKey key = new TableKey(ac.table().schema(), ac.table().name());
                BackfillRequest req = required.get(key);
                if (req == null) {
                    setRequired("add-column", new BackfillRequest(new BackfillRequest.Table(ac.table().schema(),
                            ac.table().name(), ac.tableMetadata()), Map.of(ac.column().name(), ac.backfill())));
                } else {
                    Map<String, BackfillId> cols = new LinkedHashMap<>(req.columns());
                    cols.put(ac.column().name(), ac.backfill());
                    // A running backfill goes on: the new column gets a run of its own afterwards.
                    setRequired("add-column", new BackfillRequest(withMetadata(req.table(), ac.tableMetadata()), cols,
                            req.extra()));
                }
            }
        } else if (change instanceof UpdateColumn uc) {
            String oldName = uc.oldColumn().name();
            String newName = uc.newColumn().name();
            if (!oldName.equals(newName)) {
                TableKey key = new TableKey(uc.table().schema(), uc.table().name());
                BackfillRequest req = required.get(key);
                if (req != null && req.columns().containsKey(oldName)) {
                    Map<String, BackfillId> cols = new LinkedHashMap<>();
                    BackfillId id = null;
                    for (Map.Entry<String, BackfillId> e : req.columns().entrySet()) {
                        if (e.getKey().equals(oldName)) {
                            id = e.getValue();
                        } else {
                            cols.put(e.getKey(), e.getValue());
                        }
                    }
                    cols.put(newName, id); // upstream moves the renamed column to the end
                    setRequired("update-column", new BackfillRequest(req.table(), cols, req.extra()));
                    Running r = running;
                    if (r != null && r.key.equals(key) && r.request.columns().containsKey(oldName)) {
                        stopRunning("column renamed", null);
                    }
                }
            }
        } else if (change instanceof DropColumn dc) {
            TableKey key = new TableKey(dc.table().schema(), dc.table().name());
            BackfillRequest req = required.get(key);
            if (req != null && req.columns().containsKey(dc.column())) {
                Map<String, BackfillId> remaining = new LinkedHashMap<>(req.columns());
                remaining.remove(dc.column());
                if (remaining.isEmpty()) {
                    deleteRequired("drop-column", key);
                } else {
                    setRequired("drop-column", new BackfillRequest(req.table(), remaining, req.extra()));
                }
                Running r = running;
                if (r != null && r.key.equals(key) && r.request.columns().containsKey(dc.column())) {
                    stopRunning("column dropped", null);
                }
            }
        } else if (change instanceof BackfillCompleted bc) {
            TableKey key = new TableKey(bc.relation().schema(), bc.relation().name());
            BackfillRequest req = required.get(key);
            if (req == null) {
                // Cannot happen: a run is cancelled (checked under the reservation) before its table's
                // request goes. Logged rather than thrown, so the stream is never corrupted.
                LOG.error("backfill-completed for {} without a backfill request; ignored", key);
            } else {
                Map<String, BackfillId> remaining = new LinkedHashMap<>();
                for (Map.Entry<String, BackfillId> e : req.columns().entrySet()) {
                    if (!bc.columns().contains(e.getKey()) && !bc.relation().rowKey().columns().contains(e.getKey())) {
                        remaining.put(e.getKey(), e.getValue());
                    }
                }
                if (remaining.isEmpty()) {
                    deleteRequired("backfill-completed", key);
                } else {
                    setRequired("backfill-completed", new BackfillRequest(req.table(), remaining, req.extra()));
                }
            }
            // The run is finishing anyway; this clears the state that tracks it.
            stopRunning(null, null);
        }
    }

    private static BackfillRequest.Table withMetadata(BackfillRequest.Table t, TableMetadata metadata) {
        return new BackfillRequest.Table(t.schema(), t.name(), metadata, t.extra());
    }

    /** Moves the stream position forward only: a backfill's own watermarks may be older. Holds the lock. */
    private void setLastStatusWatermark(String watermark) {
        if (lastStatusWatermark == null || lastStatusWatermark.compareTo(watermark) < 0) {
            lastStatusWatermark = watermark;
            notifyAll();
        }
    }

    private void setRequired(String source, BackfillRequest req) {
        TableKey key = keyOf(req);
        String action = required.containsKey(key) ? "updated" : "added";
        LOG.info("Backfill {}: {} {} columns {}", action, source, key, req.columns().keySet());
        required.put(key, req);
    }

    private void deleteRequired(String source, TableKey key) {
        BackfillRequest req = required.remove(key);
        if (req != null) {
            LOG.info("Backfill {}: {} {} columns {}", "backfill-completed".equals(source) ? "completed" : "dropped",
                    source, key, req.columns().keySet());
            stats.remove(key);
        }
    }

    private static TableKey keyOf(BackfillRequest req) {
        return new TableKey(req.table().schema(), req.table().name());
    }

    // ------------------------------------------------------------------ end and status

    /**
     * The change stream ended: cancels the retry timer and the running backfill, closes its run
     * (cancelling a COPY in progress) and stops the thread. Never blocks; idempotent.
     */
    @Override
    public void cancel() {
        Running r;
        synchronized (this) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            r = running;
            stopRunning("change stream canceled", null);
            if (retryTimer != null) {
                retryTimer.cancel(false);
                retryTimer = null;
            }
            notifyAll();
        }
        executor.shutdownNow();
        if (r != null) {
            BackfillRun run = r.run;
            if (run != null) {
                run.close();
            }
        }
    }

    /**
     * Waits until the manager's thread has ended after {@link #cancel()} (tests, shutdown).
     *
     * @return whether it ended in time
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return executor.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The required and running backfills for {@code /status} and {@code /metrics}: one entry per
     * required table, in the order they became required. Cheap; never blocks on I/O.
     */
    public List<Map<String, Object>> status() {
        long now = nanoClock.getAsLong();
        List<Map<String, Object>> out = new ArrayList<>();
        synchronized (this) {
            Running r = running;
            for (Map.Entry<TableKey, BackfillRequest> e : required.entrySet()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("table", e.getKey().toString());
                m.put("columns", List.copyOf(e.getValue().columns().keySet()));
                boolean isRunning = r != null && r.key.equals(e.getKey());
                m.put("state", isRunning ? "running" : retryTimer != null ? "retrying" : "waiting");
                if (isRunning) {
                    BackfillProgress.Snapshot p = r.progress.snapshot(now);
                    m.put("runningColumns", p.columns());
                    m.put("rows", p.rows());
                    m.put("totalRows", p.totalRows());
                    m.put("mb", round(p.bytes() / 1048576.0));
                    m.put("totalMb", p.totalBytes() < 0 ? null : round(p.totalBytes() / 1048576.0));
                    m.put("transactions", p.transactions());
                    m.put("rowsPerSecond", Math.round(p.rowsPerSecond()));
                    m.put("elapsedSeconds", p.elapsed().toSeconds());
                    m.put("etaSeconds", p.eta() == null ? null : p.eta().toSeconds());
                }
                TableStats s = stats.get(e.getKey());
                m.put("retries", s == null ? 0 : s.retries);
                m.put("lastError", s == null ? null : s.lastError);
                out.add(m);
            }
        }
        return out;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }

    /** @return the number of required backfills (tables) */
    public synchronized int requiredCount() {
        return required.size();
    }
}

package org.zrm.changesource.pg.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changesource.pg.internal.backfill.BackfillManager;
import org.zrm.changesource.pg.internal.backfill.BackfillStreamOptions;
import org.zrm.changesource.pg.internal.backfill.BackfillStreamer;
import org.zrm.changesource.pg.internal.backfill.PgBackfillStreamer;
import org.zrm.changesource.pg.internal.replication.CatalogColumnParsers;
import org.zrm.changesource.pg.internal.replication.ColumnParsers;
import org.zrm.changesource.pg.internal.replication.PgErrors;
import org.zrm.changesource.pg.internal.replication.ReplicationStream;
import org.zrm.changesource.pg.internal.setup.PublicationInfo;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.changesource.pg.internal.setup.ShardSchema;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.stream.ChangeMaker;
import org.zrm.changesource.pg.internal.stream.DegradedModeRelationHandler;
import org.zrm.changesource.pg.internal.stream.LagReporter;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.changesource.pg.internal.stream.RelationHandler;
import org.zrm.changesource.pg.internal.stream.SchemaChangeHandler;
import org.zrm.changesource.pg.internal.sync.ReplicationSlots;
import org.zrm.changesource.pg.internal.sync.SlotCleanup;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.secret.Secrets;
import org.zrm.watermark.Watermarks;

/**
 * The Postgres change source: initialisation through the setup/sync code, then logical
 * replication streams of the replica's slot (upstream's {@code PostgresChangeSource}).
 *
 * <p>Threads: the caller's thread for {@link #initialize}/{@link #startStream}; per stream one
 * pump thread (see {@link ReplicationStream}); one scheduler thread for liveness watchdogs and lag
 * reports; one cleanup thread for the slot cleanup and the replica-identity fix after DDL events
 * (both may wait on locks upstream).
 */
public final class PgChangeSource implements ChangeSource {

    private static final Logger LOG = LoggerFactory.getLogger(PgChangeSource.class);
    static final String REPLICATION_APP_NAME = "zero-replicator";
    static final String CONTROL_APP_NAME = "zero-change-source";

    private final PgSourceSettings settings;
    private final ShardId shard;
    /** Upstream's REPLICA_SLOT_CLEANUP_INTERVAL_MS. */
    static final Duration CLEANUP_RETRY = Duration.ofSeconds(30);

    private final UpstreamDb db;
    private final ReplicaInitializer initializer;
    private final ScheduledExecutorService scheduler;
    /**
     * Runs the older-replica/slot cleanup (spec §5.3) off the watchdog thread, so a slow catalog
     * query can never delay the inbound-liveness timer.
     */
    private final ScheduledExecutorService cleanup;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final TableValidator validator;

    private volatile SubscriptionState state;
    private volatile LagReporter lagReporter;
    private volatile PgChangeStream current;
    private volatile BackfillManager backfills;
    private volatile boolean stopped;
    /**
     * Written into the replica row's {@code subscriberContext} when this source takes the slot, so
     * that a lost stream can tell "another manager took over" (the context names someone else)
     * from a lost connection (wal_sender_timeout, an upstream restart: the context is still ours).
     */
    private final String subscriberToken = java.util.UUID.randomUUID().toString();
    private volatile String subscribedReplicaId;
    private final BackfillStreamer.Factory backfillStreamers;

    /**
     * @param settings validated settings
     * @param initializer shard setup, slot creation and initial sync
     */
    public PgChangeSource(PgSourceSettings settings, ReplicaInitializer initializer) {
        this(settings, initializer, TableValidator.strict());
    }

    /**
     * @param settings validated settings
     * @param initializer shard setup, slot creation and initial sync
     * @param validator validates the tables of every schema a DDL event announces; must be
     *     configured as the initial sync's, so that a table is accepted by a DDL event exactly when
     *     a resync would accept it
     */
    public PgChangeSource(PgSourceSettings settings, ReplicaInitializer initializer, TableValidator validator) {
        this(settings, initializer, validator, unavailableBackfills());
    }

    /**
     * @param settings validated settings
     * @param initializer shard setup, slot creation and initial sync
     * @param validator see {@link #PgChangeSource(PgSourceSettings, ReplicaInitializer, TableValidator)}
     * @param backfillStreamers makes each stream's reader of backfill requests from snapshots;
     *     the stream's {@link BackfillManager} runs them beside the stream
     */
    public PgChangeSource(PgSourceSettings settings, ReplicaInitializer initializer, TableValidator validator,
            BackfillStreamer.Factory backfillStreamers) {
        this.backfillStreamers = Objects.requireNonNull(backfillStreamers, "backfillStreamers");
        this.validator = Objects.requireNonNull(validator, "validator");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.shard = settings.shard();
        this.db = new UpstreamDb(settings.upstreamUri());
        this.initializer = Objects.requireNonNull(initializer, "initializer");
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "zrm-pg-source-timer-" + shard.schema());
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.scheduler = timer;
        ScheduledThreadPoolExecutor cleaner = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "zrm-pg-source-cleanup-" + shard.schema());
            t.setDaemon(true);
            return t;
        });
        cleaner.setRemoveOnCancelPolicy(true);
        this.cleanup = cleaner;
    }

    /**
     * A streamer for sources built without a snapshot reader (tests of other parts): every run fails
     * with a clear error, so requests stay required, are retried with back-off and show their error
     * in {@code /status}; nothing is dropped.
     */
    public static BackfillStreamer.Factory unavailableBackfills() {
        return (slot, publications) -> request -> {
            throw new ChangeSourceException("cannot backfill " + request.table().schema() + "."
                    + request.table().name() + ": this change source has no backfill snapshot reader");
        };
    }

    /** The Postgres snapshot reader on {@code db} (binary or text COPY as configured). */
    public static BackfillStreamer.Factory snapshotBackfills(UpstreamDb db, BackfillStreamOptions options) {
        return new BackfillStreamer.Factory() {
            @Override
            public BackfillStreamer forStream(String slot, List<String> publications) {
                return new PgBackfillStreamer(db.connector(), slot, publications, options);
            }

            @Override
            public List<String> dropOrphans(String slot) throws ChangeSourceException {
                return new PgBackfillStreamer(db.connector(), slot, List.of(), options).dropOrphanedSlots();
            }
        };
    }

    /**
     * The required and running backfills of the current stream, for {@code /status} and
     * {@code /metrics} (see {@link BackfillManager#status()}); empty without a stream.
     */
    public List<Map<String, Object>> backfillStatus() {
        BackfillManager m = backfills;
        return m == null ? List.of() : m.status();
    }

    /**
     * How often, and how long at most, the current stream's live transactions waited for a backfill
     * to hand the stream back ({@code liveWaits}, {@code maxLiveWaitMs}); {@code null} without a
     * stream. What an operator checks against the backfill's yield bound.
     */
    public Map<String, Object> streamSharing() {
        PgChangeStream s = current;
        if (s == null) {
            return null;
        }
        return Map.of("liveWaits", s.multiplexer().replicationWaits(),
                "maxLiveWaitMs", Math.round(s.multiplexer().maxReplicationWaitNanos() / 1e4) / 100.0);
    }

    /**
     * @return the open stream's replication-connection activity, or {@code null} when no stream is
     *     open (for {@code /status} and {@code /metrics}; reads volatile fields only)
     */
    public org.zrm.changesource.pg.internal.metrics.StreamActivity activity() {
        PgChangeStream s = current;
        org.zrm.changesource.pg.internal.replication.ReplicationStream r = s == null ? null : s.replication();
        if (r == null) {
            return null;
        }
        long acked = r.lastAckedLsn();
        return new org.zrm.changesource.pg.internal.metrics.StreamActivity(s.slot(), r.lastReceivedAtMillis(),
                r.lastAckSentAtMillis(), acked == 0 ? null : org.zrm.watermark.Lsn.of(acked).toString());
    }

    /** @return the upstream database (connections for tests, benchmarks and the setup code) */
    public UpstreamDb db() {
        return db;
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        checkNotStopped();
        preflight();
        SubscriptionState s = initializer.initialize(resetReplica);
        state = s;
        LOG.info("pg change source {} initialized: replicaVersion={} watermark={} publications={}", shard.schema(),
                s.replicaVersion(), s.watermark(), s.publications());
        return s;
    }

    /**
     * Connects once and checks {@code wal_level}, so that the two most common misconfigurations
     * produce one clear line instead of a failure deep inside initial sync.
     */
    void preflight() throws ChangeSourceException {
        try (Connection c = db.open(CONTROL_APP_NAME); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW wal_level")) {
            rs.next();
            String level = rs.getString(1);
            if (!"logical".equals(level)) {
                String msg = "upstream " + db + " has wal_level = " + level
                        + "; logical replication needs wal_level = logical (set it in postgresql.conf and restart"
                        + " Postgres)";
                LOG.error(msg);
                throw new ChangeSourceException(msg);
            }
        } catch (SQLException e) {
            ChangeSourceException t = PgErrors.translate("connecting to upstream " + db, e);
            LOG.error(t.getMessage());
            throw t;
        }
    }

    @Override
    public OptionalLong startLagReporter() {
        if (settings.lagReportIntervalMs() <= 0) {
            LOG.info("replication lag reports disabled (replicationLag.reportIntervalMs <= 0)");
            return OptionalLong.empty();
        }
        LagReporter r = new LagReporter(shard.appId(), shard.shardNum(), settings.lagReportIntervalMs(),
                () -> db.open(CONTROL_APP_NAME), scheduler, System::currentTimeMillis, codec);
        lagReporter = r;
        return OptionalLong.of(r.start());
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        checkNotStopped();
        SubscriptionState s = state;
        if (s == null) {
            throw new ChangeSourceException("startStream called before initialize");
        }
        Objects.requireNonNull(backfillRequests, "backfillRequests");
        String slot;
        ShardSchema.InternalShardConfig config;
        RelationHandler relations;
        try (Connection c = db.open(CONTROL_APP_NAME)) {
            String[] replica = replicaAtVersion(c, s.replicaVersion());
            slot = replica[1];
            checkSlot(c, slot);
            takeOver(c, slot, replica[0]);
            // Read per stream, as upstream does: a later setup run may have installed the triggers.
            config = shardConfig(c);
            relations = relationHandler(config, replica[3]);
            scheduleCleanup(Long.parseLong(replica[2]), Duration.ZERO);
        } catch (SQLException e) {
            throw PgErrors.translate("preparing the replication stream of " + shard.schema(), e);
        }
        return openStream(slot, config.publications(), afterWatermark, relations, backfillRequests);
    }

    /**
     * With event triggers, schema changes arrive as DDL messages and Relation messages need no
     * check; without them (degraded mode) each Relation message is compared with the schema the
     * replica was synced with, read from its {@code replicas} row.
     */
    private RelationHandler relationHandler(ShardSchema.InternalShardConfig config, String initialSchemaJson)
            throws AutoResetException {
        if (config.ddlDetection()) {
            return RelationHandler.IGNORE;
        }
        PublishedSchema initial = null;
        if (initialSchemaJson != null) {
            try {
                @SuppressWarnings("unchecked")
                Map<String, Object> raw = (Map<String, Object>) codec.decodeValue(initialSchemaJson);
                initial = PublishedSchema.parse(raw);
            } catch (RuntimeException e) {
                // Without it no schema change could be detected; a re-sync records a new one.
                throw new AutoResetException("the initialSchema of the replica of shard " + shard.schema()
                        + " cannot be read (" + e + "); the replica must be re-synced", e);
            }
        }
        List<String> publications = config.publications();
        LOG.info("shard {} has no event triggers (ddlDetection = false): each Relation message is checked against"
                + " the initial schema, and a schema change halts replication", shard.schema());
        return new DegradedModeRelationHandler(initial, () -> {
            try (Connection c = db.open(CONTROL_APP_NAME)) {
                return PublicationInfo.read(c, publications).schema();
            }
        });
    }

    /**
     * Opens a replication stream of {@code slot} without the shard checks of {@link #startStream}:
     * what the stream tests and the {@code source-W1}/{@code source-W2} benchmarks use (the latter
     * then take and discard messages, acking each commit).
     *
     * @param slot an existing logical slot
     * @param publications the publications to stream
     * @param afterWatermark the last stored watermark; streaming starts at {@code major + 1}
     */
    public PgChangeStream openStream(String slot, List<String> publications, String afterWatermark)
            throws ChangeSourceException, InterruptedException {
        return openStream(slot, publications, afterWatermark, RelationHandler.IGNORE);
    }

    /**
     * {@link #openStream(String, List, String)} with the given handling of Relation messages
     * ({@link RelationHandler#IGNORE} for shards with event triggers).
     */
    public PgChangeStream openStream(String slot, List<String> publications, String afterWatermark,
            RelationHandler relations) throws ChangeSourceException, InterruptedException {
        return openStream(slot, publications, afterWatermark, relations, null);
    }

    /**
     * @param backfillRequests the change log's unfinished backfills; {@code null} runs the stream
     *     without a backfill manager (the stream tests and benchmarks)
     */
    private PgChangeStream openStream(String slot, List<String> publications, String afterWatermark,
            RelationHandler relations, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        checkNotStopped();
        long startLsn = Watermarks.restartLsn(afterWatermark).asLong();
        ColumnParsers parsers;
        try (Connection c = db.open(CONTROL_APP_NAME)) {
            parsers = new CatalogColumnParsers(PgTypeCatalog.load(c), this::reloadCatalog);
        } catch (SQLException e) {
            throw PgErrors.translate("reading pg_type for slot " + slot, e);
        }
        // The replica-identity fix is I/O that may wait on table locks: it runs on the cleanup
        // thread, never on the watchdog thread.
        ChangeMaker maker = new ChangeMaker(shard.appId(), shard.shardNum(),
                new SchemaChangeHandler(codec, validator, cleanup, () -> db.open(CONTROL_APP_NAME)), relations);
        AtomicReference<ReplicationStream> running = new AtomicReference<>();
        PgChangeStream stream = new PgChangeStream(slot, afterWatermark, maker, lagReporter, settings.bufferMessages(),
                settings.bufferBytes(), failure -> classifyStreamFailure(slot, running.get(), failure));
        Connection repl;
        try {
            repl = db.openReplication(REPLICATION_APP_NAME);
        } catch (SQLException e) {
            ChangeSourceException t = PgErrors.translate("opening a replication connection to " + db, e);
            LOG.error(t.getMessage());
            throw t;
        }
        BackfillManager manager = null;
        if (backfillRequests != null) {
            // Listening from the stream's first message on: the manager must see every schema change.
            try {
                List<String> dropped = backfillStreamers.dropOrphans(slot);
                if (!dropped.isEmpty()) {
                    LOG.info("slot={}: dropped {} backfill snapshot slot(s) left behind: {}", slot, dropped.size(), dropped);
                }
            } catch (ChangeSourceException e) {
                // Inactive temporary slots hold no WAL once their session is gone; a later start retries.
                LOG.warn("slot={}: could not look for backfill snapshot slots left behind: {}", slot, e.getMessage());
            }
            manager = new BackfillManager(slot, stream.multiplexer(), backfillStreamers.forStream(slot, publications));
            stream.multiplexer().addListener(manager).addProducer(manager);
            backfills = manager;
        }
        ReplicationStream rs;
        try {
            rs = ReplicationStream.start(repl, settings.streamSettings(slot, publications), startLsn, parsers, stream,
                    scheduler);
        } catch (ChangeSourceException | InterruptedException | RuntimeException e) {
            stream.close(); // ends the backfill manager, if any
            throw e;
        }
        running.set(rs);
        stream.attach(rs);
        if (manager != null) {
            // Backfills start once the main stream is established, as upstream's do.
            manager.run(afterWatermark, backfillRequests);
        }
        PgChangeStream previous = current;
        current = stream;
        if (previous != null && previous != stream) {
            previous.close();
        }
        if (stopped) {
            stream.close();
        }
        return stream;
    }

    private PgTypeCatalog reloadCatalog() {
        try (Connection c = db.open(CONTROL_APP_NAME)) {
            return PgTypeCatalog.load(c);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * Deletes replica rows older than ours and drops the slots nobody claims any more (another
     * manager's, after it handed over to us). Slots still streamed by their old subscriber are
     * "draining"; the pass repeats every {@link #CLEANUP_RETRY} until none is left, and after
     * failures, so an abandoned slot never holds WAL forever.
     */
    private void scheduleCleanup(long myRank, Duration delay) {
        if (stopped) {
            return;
        }
        cleanup.schedule(() -> {
            try (Connection c = db.open(CONTROL_APP_NAME)) {
                SlotCleanup result = ReplicationSlots.dropOldReplicasAndSlots(c, shard, myRank);
                if (result.draining() > 0) {
                    LOG.info("shard={}: {} old replication slot(s) still in use; retrying cleanup in {}s",
                            shard.schema(), result.draining(), CLEANUP_RETRY.toSeconds());
                    scheduleCleanup(myRank, CLEANUP_RETRY);
                }
            } catch (SQLException | RuntimeException e) {
                LOG.warn("shard={}: cleaning up older replicas and slots failed ({}); retrying in {}s",
                        shard.schema(), Secrets.maskUrls(e.toString()), CLEANUP_RETRY.toSeconds(), e);
                scheduleCleanup(myRank, CLEANUP_RETRY);
            }
        }, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return {id, slot, rank, initialSchema} of the newest replica row at {@code replicaVersion} */
    private String[] replicaAtVersion(Connection c, String replicaVersion) throws SQLException, AutoResetException {
        try (PreparedStatement ps = c.prepareStatement("SELECT id, slot, rank, \"initialSchema\" FROM "
                + ShardSql.quoteId(shard.schema()) + ".replicas WHERE version = ? AND \"initialSyncContext\" IS NOT NULL ORDER BY rank DESC LIMIT 1")) {
            ps.setString(1, replicaVersion);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new AutoResetException("No replication slot for replica at version " + replicaVersion);
                }
                return new String[] {rs.getString(1), rs.getString(2), Long.toString(rs.getLong(3)), rs.getString(4)};
            }
        }
    }

    /** Upstream checks the slot at startup; checking before every stream also catches WAL loss while we were down. */
    private void checkSlot(Connection c, String slot) throws SQLException, ChangeSourceException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT restart_lsn, wal_status FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new ChangeSourceAbortedException("replication slot " + slot + " is missing. A different"
                            + " replication-manager should now be running on a new replication slot.");
                }
                if (rs.getString(1) == null || "lost".equals(rs.getString(2))) {
                    String msg = "replication slot " + slot + " has been invalidated for exceeding the"
                            + " max_slot_wal_keep_size; the replica must be re-synced";
                    LOG.error(msg);
                    throw new AutoResetException(msg);
                }
            }
        }
    }

    /**
     * Records us as the slot's subscriber, then terminates its current walsender (an older stream,
     * possibly of another manager). In that order: the manager we terminate sees our context as
     * soon as its stream breaks, and knows it was taken over (see {@link #classifyStreamFailure}).
     */
    private void takeOver(Connection c, String slot, String replicaId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + ShardSql.quoteId(shard.schema())
                + ".replicas SET \"subscriberContext\" = json_build_object('appID', ?::text, 'hostname', ?::text,"
                + " 'timestamp', (extract(epoch from now()) * 1000)::int8, 'zrmSubscriber', ?::text) WHERE id = ?")) {
            ps.setString(1, shard.appId());
            ps.setString(2, ReplicaInitializers.hostname());
            ps.setString(3, subscriberToken);
            ps.setString(4, replicaId);
            ps.executeUpdate();
        }
        subscribedReplicaId = replicaId;
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(active_pid) AS terminated,"
                + " active_pid AS pid FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next() && rs.getObject(2) != null) {
                    LOG.info("terminated walsender {} of replication slot {}", rs.getLong(2), slot);
                }
            }
        }
    }

    /** Whether the replica row's subscriber context still names this source (false if another manager wrote it). */
    private boolean stillSubscriber(Connection c) throws SQLException {
        String replicaId = subscribedReplicaId;
        if (replicaId == null) {
            return true;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT \"subscriberContext\"->>'zrmSubscriber' FROM "
                + ShardSql.quoteId(shard.schema()) + ".replicas WHERE id = ?")) {
            ps.setString(1, replicaId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && subscriberToken.equals(rs.getString(1));
            }
        }
    }

    private ShardSchema.InternalShardConfig shardConfig(Connection c) throws SQLException, ChangeSourceException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT publications, \"ddlDetection\""
                + " FROM " + ShardSql.quoteId(shard.schema()) + ".\"shardConfig\"")) {
            if (!rs.next()) {
                throw new AutoResetException("upstream shard " + shard.schema() + " has no shardConfig row");
            }
            return new ShardSchema.InternalShardConfig(List.copyOf(Arrays.asList((String[]) rs.getArray(1).getArray())),
                    rs.getBoolean(2));
        }
    }

    /**
     * Refines why a stream ended, by asking the server.
     * <ul>
     *   <li>An invalidated slot (Postgres terminates the walsender of a slot it invalidates) must
     *       lead to a re-sync, not a stop or a retry loop.</li>
     *   <li>pgjdbc reports a terminated walsender as a plain connection failure (it drops the
     *       server's 57P01 error while reading to the end of the socket). If the server is
     *       reachable and our walsender is gone, it was terminated, normally by another
     *       replication manager taking over the slot: that is upstream's {@code ShutdownSignal},
     *       an abort, if the replica row's subscriber context (written before the termination)
     *       names another subscriber; a walsender that ended for wal_sender_timeout or a server
     *       restart leaves our context in place, and the stream is retried.</li>
     * </ul>
     */
    private ChangeSourceException classifyStreamFailure(String slot, ReplicationStream stream,
            ChangeSourceException failure) {
        if (!failure.isRetryable()) {
            return failure;
        }
        try (Connection c = db.open(CONTROL_APP_NAME)) {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT restart_lsn, wal_status FROM pg_replication_slots WHERE slot_name = ?")) {
                ps.setString(1, slot);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && (rs.getString(1) == null || "lost".equals(rs.getString(2)))) {
                        LOG.error("replication slot {} was invalidated (max_slot_wal_keep_size exceeded); the"
                                + " replica must be re-synced", slot);
                        return new AutoResetException("replication slot " + slot + " has been invalidated for"
                                + " exceeding the max_slot_wal_keep_size", failure);
                    }
                }
            }
            boolean connectionLost = failure.getCause() instanceof SQLException se
                    && se.getSQLState() != null && se.getSQLState().startsWith("08");
            // Our walsender gone while the server answers: terminated, by another manager taking
            // over only if the subscriber context now names someone else. Otherwise it was
            // wal_sender_timeout (this process was stalled) or a restart: retry from the change log.
            if (connectionLost && stream != null && stream.backendPid() != 0 && backendGone(c, stream.backendPid())
                    && !stillSubscriber(c)) {
                return new ChangeSourceAbortedException("replication stream on slot " + slot + ": shutdown signal"
                        + " received (e.g. another replication manager taking over the replication stream)", failure);
            }
        } catch (SQLException e) {
            LOG.debug("server check after stream failure of {}: {}", slot, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return failure;
    }

    private static boolean backendGone(Connection c, int pid) throws SQLException, InterruptedException {
        // A terminated backend leaves pg_stat_activity a moment after its socket closes; there is
        // no signal for another process's exit, so poll briefly.
        for (int i = 0; i < 20; i++) {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_stat_activity WHERE pid = ?")) {
                ps.setInt(1, pid);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return true;
                    }
                }
            }
            Thread.sleep(50);
        }
        return false;
    }

    @Override
    public void stop() {
        stopped = true;
        PgChangeStream s = current;
        if (s != null) {
            s.close();
        }
        LagReporter r = lagReporter;
        if (r != null) {
            r.stop();
        }
        scheduler.shutdownNow();
        cleanup.shutdownNow();
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
            cleanup.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void checkNotStopped() throws ChangeSourceException {
        if (stopped) {
            throw new ChangeSourceException("pg change source " + shard.schema() + " is stopped");
        }
    }

}

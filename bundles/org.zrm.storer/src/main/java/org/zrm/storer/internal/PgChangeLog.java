package org.zrm.storer.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogSize;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.PurgeLock;
import org.zrm.changelog.ReplicationState;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.secret.Secrets;

/**
 * The change log in a Postgres change database, schema {@code "<app>_<shard>/cdc"} version 6,
 * compatible with zero-cache 1.8 in both directions.
 *
 * <p>The database is touched lazily: the constructor only validates settings; the first call that
 * needs the database connects and migrates the schema ({@link #initialize()}), and a failure is
 * reported to that caller and retried by the next one. Connections come from a bounded
 * {@link ConnectionPool} of {@code maxConns}; write transactions use a small writer executor for
 * their flush pipeline (at most one task per open transaction, so at most {@code maxConns}).
 */
public final class PgChangeLog implements ChangeLog, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PgChangeLog.class);
    private static final long ACQUIRE_TIMEOUT_MS = 60_000;

    private final StorerSettings settings;
    private final CdcSchema schema;
    private final ConnectionPool pool;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final SchemaChangeTracker tracker;
    private final ThreadPoolExecutor writer;
    /** Encoded COPY batches, recycled across the write transactions of this log. */
    private final CopyBuffers copyBuffers = new CopyBuffers();
    private final ScheduledThreadPoolExecutor timer;
    private final Object initLock = new Object();
    private volatile boolean initialized;

    /**
     * @param settings validated settings
     */
    public PgChangeLog(StorerSettings settings) {
        this.settings = settings;
        this.schema = new CdcSchema(settings.schemaName());
        this.pool = new ConnectionPool(settings.changeDb(), settings.maxConns(), ACQUIRE_TIMEOUT_MS);
        this.tracker = new SchemaChangeTracker(schema, codec);
        // One task per open write transaction at most, and each holds a pooled connection, so
        // maxConns threads and a queue of maxConns always suffice; a rejection would be a bug and
        // fails that transaction.
        // The threads are started now and kept: a pool below its core size starts a new thread for
        // each task even when others are idle, so a lazily filled pool paid a thread start (measured
        // at 5-18 ms on 2 busy cores) on each of a bulk transaction's first maxConns batches, stalling
        // the pipeline exactly when it fills; maxConns idle threads cost next to nothing.
        this.writer = new ThreadPoolExecutor(settings.maxConns(), settings.maxConns(), 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(settings.maxConns()), daemon("zrm-changelog-writer"));
        this.writer.prestartAllCoreThreads();
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("zrm-changelog-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
    }

    public StorerSettings settings() {
        return settings;
    }

    public CdcSchema schema() {
        return schema;
    }

    /**
     * Connects and migrates the schema unless that already succeeded. Thread-safe; called by every
     * operation, and eagerly (in the background) by the DS component to surface problems early.
     *
     * @throws ChangeLogException if the database is unreachable or the schema cannot be migrated
     */
    public void initialize() throws ChangeLogException {
        if (initialized) {
            return;
        }
        synchronized (initLock) {
            if (initialized) {
                return;
            }
            try (ConnectionPool.Lease lease = pool.lease()) {
                try {
                    new SchemaMigrator(schema, settings.appId()).migrate(lease.connection());
                } catch (ChangeLogException e) {
                    lease.discard();
                    throw e;
                }
            }
            initialized = true;
            LOG.info("changelog: schema {} ready on {}", schema, Secrets.maskUrls(settings.changeDb()));
        }
    }

    // ------------------------------------------------------------------ configuration

    @Override
    public void ensureReplicationConfig(SubscriptionState state, boolean autoReset) throws ChangeLogException {
        initialize();
        inTransaction("ensureReplicationConfig", c -> {
            String dbVersion = null;
            List<String> dbPublications = null;
            boolean resetRequired = false;
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT \"replicaVersion\", \"publications\", \"resetRequired\" FROM " + table("replicationConfig"))) {
                if (rs.next()) {
                    dbVersion = rs.getString(1);
                    dbPublications = Arrays.asList((String[]) rs.getArray(2).getArray());
                    resetRequired = rs.getBoolean(3);
                }
            }
            boolean truncate = false;
            if (dbVersion != null && (!dbVersion.equals(state.replicaVersion())
                    || !new HashSet<>(dbPublications).equals(new HashSet<>(state.publications())))) {
                if (!state.replicaVersion().equals(state.watermark())) {
                    throw new ResetRequiredException("Cannot reset change db@" + dbVersion + " to service replica@"
                            + state.replicaVersion() + " from watermark " + state.watermark());
                }
                LOG.info("changelog: data in {} @{} is incompatible with replica @{}; clearing tables", schema,
                        dbVersion, state.replicaVersion());
                truncate = true;
            }
            if (dbVersion == null || truncate) {
                ScheduledFuture<?> terminator = null;
                if (truncate) {
                    // TRUNCATE needs ACCESS EXCLUSIVE locks, which old catch-up readers may block.
                    terminator = timer.schedule(this::terminateLockHoldersLogged, settings.lockHolderTerminateMs(),
                            TimeUnit.MILLISECONDS);
                }
                try {
                    if (truncate) {
                        // Same lock order as the storer (replicationState first), so no deadlock.
                        for (String t : List.of("replicationState", "changeLog", "replicationConfig", "tableMetadata",
                                "backfilling")) {
                            execute(c, "TRUNCATE TABLE " + table(t));
                        }
                    }
                    initializeTables(c, state);
                } finally {
                    if (terminator != null) {
                        terminator.cancel(false);
                    }
                }
                return null;
            }
            if (resetRequired) {
                if (autoReset) {
                    throw new ResetRequiredException("reset required by replication stream");
                }
                LOG.error("\n\n\nReset required but --auto-reset is not enabled.\n"
                        + "This can happen for upstream databases that do not support event triggers.\n"
                        + "To correct this, see https://zero.rocicorp.dev/docs/connecting-to-postgres#schema-changes\n\n\n");
            }
            return null;
        });
    }

    private void initializeTables(Connection c, SubscriptionState state) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table("replicationConfig")
                + " (\"replicaVersion\", \"publications\") VALUES (?, ?)")) {
            ps.setString(1, state.replicaVersion());
            ps.setArray(2, c.createArrayOf("text", state.publications().toArray(String[]::new)));
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table("replicationState")
                + " (\"lastWatermark\", \"owner\", \"ownerAddress\") VALUES (?, NULL, NULL) ON CONFLICT (lock)"
                + " DO UPDATE SET \"lastWatermark\" = EXCLUDED.\"lastWatermark\", \"owner\" = NULL, \"ownerAddress\" = NULL")) {
            ps.setString(1, state.replicaVersion());
            ps.executeUpdate();
        }
        // Two initial rows make min(watermark) = replicaVersion, so a fresh replica is found.
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table("changeLog")
                + " (watermark, pos, change, precommit) VALUES (?, 0, '{\"tag\":\"begin\"}', NULL),"
                + " (?, 1, '{\"tag\":\"commit\"}', NULL)")) {
            ps.setString(1, state.replicaVersion());
            ps.setString(2, state.replicaVersion());
            ps.executeUpdate();
        }
    }

    @Override
    public void markResetRequired() throws ChangeLogException {
        initialize();
        autoCommit("markResetRequired", c -> {
            execute(c, "UPDATE " + table("replicationConfig") + " SET \"resetRequired\" = true");
            return null;
        });
    }

    // ------------------------------------------------------------------ ownership

    /**
     * The address stored as {@code ownerAddress}: {@code host:port} for {@code ws} (old view-syncers
     * expect no scheme), otherwise {@code <protocol>://host:port}.
     */
    public static String discoveryAddress(String protocol, String hostPort) {
        return "ws".equals(protocol) ? hostPort : protocol + "://" + hostPort;
    }

    @Override
    public void assumeOwnership(String taskID, String ownerAddress) throws ChangeLogException {
        initialize();
        LOG.info("changelog: task {} assuming ownership of {} at {}", taskID, schema, ownerAddress);
        long start = System.nanoTime();
        autoCommit("assumeOwnership", c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE " + table("replicationState") + " SET \"owner\" = ?, \"ownerAddress\" = ?")) {
                ps.setString(1, taskID);
                ps.setString(2, ownerAddress);
                ps.executeUpdate();
            }
            return null;
        });
        LOG.info("changelog: task {} owns {} at {} ({} ms)", taskID, schema, ownerAddress,
                (System.nanoTime() - start) / 1_000_000);
    }

    /** Zero's {@code discoverChangeStreamerAddress}. */
    public Optional<String> discoverOwnerAddress() throws ChangeLogException {
        return Optional.ofNullable(replicationState().ownerAddress());
    }

    @Override
    public ReplicationState replicationState() throws ChangeLogException {
        initialize();
        return autoCommit("replicationState", c -> {
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT \"lastWatermark\", \"owner\", \"ownerAddress\" FROM " + table("replicationState"))) {
                if (!rs.next()) {
                    throw new SQLException("replicationState of " + schema + " has no row"
                            + " (ensureReplicationConfig has not run)");
                }
                return new ReplicationState(rs.getString(1), rs.getString(2), rs.getString(3));
            }
        });
    }

    @Override
    public StreamStartParameters streamStartParameters() throws ChangeLogException {
        initialize();
        return inTransaction("streamStartParameters", c -> {
            execute(c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
            String last;
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT \"lastWatermark\" FROM " + table("replicationState"))) {
                if (!rs.next()) {
                    throw new SQLException("replicationState of " + schema + " has no row");
                }
                last = rs.getString(1);
            }
            List<BackfillRequest> requests = new ArrayList<>();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT json_build_object("
                    + "'table', json_build_object('schema', b.\"schema\", 'name', b.\"table\", 'metadata', t.\"metadata\"),"
                    + " 'columns', json_object_agg(b.\"column\", b.\"backfill\"))::text"
                    + " FROM " + table("backfilling") + " AS b LEFT JOIN " + table("tableMetadata") + " AS t"
                    + " ON (b.\"schema\" = t.\"schema\" AND b.\"table\" = t.\"table\")"
                    + " GROUP BY b.\"schema\", b.\"table\", t.\"metadata\" ORDER BY b.\"schema\", b.\"table\"")) {
                while (rs.next()) {
                    requests.add(codec.decodeBackfillRequest(rs.getString(1)));
                }
            }
            return new StreamStartParameters(last, requests);
        });
    }

    // ------------------------------------------------------------------ writing

    @Override
    public PgChangeLogTransaction beginTransaction(String taskID) throws ChangeLogException {
        initialize();
        ConnectionPool.Lease lease = pool.lease();
        Connection c = lease.connection();
        try {
            c.setAutoCommit(false);
            String owner;
            // One round trip: the session settings of upstream's runTx, plus the owner row lock that
            // serialises this writer against assumeOwnership until it commits.
            try (PreparedStatement ps = c.prepareStatement("SELECT set_config('statement_timeout', '0', true),"
                    + " set_config('idle_in_transaction_session_timeout', '60000', true), \"owner\" FROM "
                    + table("replicationState") + " FOR UPDATE")) {
                ps.setQueryTimeout(Math.max(1, settings.statementTimeoutMs() / 1000));
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("replicationState of " + schema + " has no row");
                    }
                    owner = rs.getString(3);
                }
            }
            return new PgChangeLogTransaction(schema, lease, writer, tracker, settings.changeLogBatchSize(),
                    settings.statementTimeoutMs(), taskID, owner, settings.insertMode(), copyBuffers);
        } catch (SQLException e) {
            rollbackAndRelease(lease);
            throw failure("beginTransaction", e);
        }
    }

    // ------------------------------------------------------------------ reading

    @Override
    public CatchupSnapshot openCatchupSnapshot() throws ChangeLogException {
        initialize();
        ConnectionPool.Lease lease = pool.lease();
        Connection c = lease.connection();
        try {
            c.setAutoCommit(false);
            execute(c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
            // The catch-up reads the log in primary-key order, so the index gives that order for
            // free. Without these, a log that grew since its last ANALYZE (the common case: a
            // subscriber reconnecting after a large transaction) is planned from a tiny row
            // estimate as a bitmap scan plus a sort, which for a million rows spilled 300 MB to
            // disk and took 2.5 times the index scan's server time; and a large estimate turns on
            // JIT compilation, which a streamed read never earns back. Both are LOCAL to this
            // read-only transaction, and sent together: one round trip per catch-up, not two.
            execute(c, "SET LOCAL enable_sort = off; SET LOCAL jit = off");
            // This first read fixes the snapshot: it holds exactly the transactions committed so far.
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT s.\"lastWatermark\","
                    + " c.\"replicaVersion\" FROM " + table("replicationState") + " s, " + table("replicationConfig") + " c")) {
                if (!rs.next()) {
                    throw new SQLException("replicationState/replicationConfig of " + schema + " has no row");
                }
                return new PgCatchupSnapshot(schema, lease, rs.getString(1), rs.getString(2), codec);
            }
        } catch (SQLException e) {
            rollbackAndRelease(lease);
            throw failure("openCatchupSnapshot", e);
        }
    }

    @Override
    public ChangeLogState changeLogState() throws ChangeLogException {
        initialize();
        return autoCommit("changeLogState", c -> {
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT (SELECT \"replicaVersion\" FROM "
                    + table("replicationConfig") + "), (SELECT min(watermark) FROM " + table("changeLog") + ")")) {
                rs.next();
                String replicaVersion = rs.getString(1);
                if (replicaVersion == null) {
                    throw new SQLException("replicationConfig of " + schema + " has no row");
                }
                String min = rs.getString(2);
                if (min == null) {
                    LOG.warn("changelog: Unexpected empty changeLog. Resync if \"Local replica watermark\" errors arise");
                    min = replicaVersion;
                }
                return new ChangeLogState(replicaVersion, min);
            }
        });
    }

    @Override
    public ChangeLogSize size() throws ChangeLogException {
        initialize();
        return autoCommit("size", c -> {
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*), min(watermark),"
                    + " max(watermark) FROM " + table("changeLog"))) {
                rs.next();
                return new ChangeLogSize(rs.getLong(1), rs.getString(2), rs.getString(3));
            }
        });
    }

    /** The same rows {@link #purgeBefore} selects, counted instead of deleted. */
    @Override
    public long countPurgeable(String watermark) throws ChangeLogException {
        initialize();
        return autoCommit("countPurgeable", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table("changeLog")
                    + " WHERE watermark < ? AND watermark < (SELECT max(watermark) FROM " + table("changeLog") + ")")) {
                ps.setString(1, watermark);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    // ------------------------------------------------------------------ purge and takeover

    /**
     * Deletes in chunks of {@code purgeChunkRows} rows, oldest first, one transaction per chunk: a
     * long purge never holds locks (the owner row's share lock, the deleted rows) for more than one
     * chunk, so the storer's next {@code begin} waits at most one chunk. Each chunk repeats the
     * whole upstream protocol (NOWAIT pre-check on the oldest row, delete below the bound but never
     * the newest transaction, ownership check after the delete); a chunk that finds ownership lost
     * rolls back. Earlier chunks stay deleted: they were deleted while this task owned the log, and
     * a successor's {@link PurgeLock} sits on the oldest row, which every chunk must lock first.
     * A purge may end between two rows of one transaction; the rest of that transaction is still
     * a valid catch-up start (rows at a subscriber's own watermark are skipped anyway).
     */
    @Override
    public long purgeBefore(String watermark, String taskID) throws ChangeLogException {
        initialize();
        long total = 0;
        int chunk = settings.purgeChunkRows();
        while (true) {
            long deleted = purgeChunk(watermark, taskID, chunk);
            total += deleted;
            if (deleted < chunk) {
                break;
            }
        }
        if (total > 0) {
            LOG.info("changelog: purged {} rows of {} below {}", total, schema, watermark);
        }
        return total;
    }

    private long purgeChunk(String watermark, String taskID, int limit) throws ChangeLogException {
        return inTransaction("purge", c -> {
            // Fails fast (55P03) if a successor's purge lock holds the oldest row.
            execute(c, "SELECT watermark FROM " + table("changeLog") + " ORDER BY watermark, pos LIMIT 1 FOR UPDATE NOWAIT");
            long deleted;
            try (PreparedStatement ps = c.prepareStatement("WITH keep AS (SELECT max(watermark) AS watermark FROM "
                    + table("changeLog") + "), victims AS (SELECT watermark, pos FROM " + table("changeLog")
                    + " WHERE watermark < ? AND watermark < (SELECT watermark FROM keep) ORDER BY watermark, pos LIMIT ?),"
                    + " purged AS (DELETE FROM " + table("changeLog") + " AS l USING victims v"
                    + " WHERE l.watermark = v.watermark AND l.pos = v.pos RETURNING 1)"
                    + " SELECT count(*) FROM purged")) {
                ps.setString(1, watermark);
                ps.setInt(2, limit);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    deleted = rs.getLong(1);
                }
            }
            String owner;
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT \"owner\" FROM " + table("replicationState") + " FOR SHARE")) {
                owner = rs.next() ? rs.getString(1) : null;
            }
            if (!taskID.equals(owner)) {
                throw new OwnershipLostException("aborting changeLog purge to " + watermark
                        + " because ownership has been taken by " + owner, owner);
            }
            return deleted;
        });
    }

    @Override
    public Optional<PurgeLock> acquirePurgeLock() throws ChangeLogException {
        initialize();
        ConnectionPool.Lease lease = pool.lease();
        Connection c = lease.connection();
        try {
            c.setAutoCommit(false);
            String min;
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT watermark FROM " + table("changeLog") + " ORDER BY watermark, pos LIMIT 1 FOR SHARE")) {
                min = rs.next() ? rs.getString(1) : null;
            }
            if (min == null) {
                LOG.info("changelog: {} is empty; no rows to purge-lock", schema);
                c.commit();
                c.setAutoCommit(true);
                lease.close();
                return Optional.empty();
            }
            String replicaVersion;
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT \"replicaVersion\" FROM " + table("replicationConfig"))) {
                if (!rs.next()) {
                    throw new SQLException("replicationConfig of " + schema + " has no row");
                }
                replicaVersion = rs.getString(1);
            }
            LOG.info("changelog: locked watermark {} of {} from being purged (replica@{})", min, schema, replicaVersion);
            return Optional.of(new PgPurgeLock(lease, replicaVersion, min));
        } catch (SQLException e) {
            rollbackAndRelease(lease);
            throw failure("acquirePurgeLock", e);
        }
    }

    /**
     * Zero's {@code terminateChangeDBLockHolders}: terminates change-streamer backends (of any
     * node) that block a TRUNCATE of this schema. Runs on its own connection, outside the pool,
     * because the blocked TRUNCATE holds a pooled one and readers may hold the rest.
     *
     * @return the number of terminated backends
     */
    public int terminateLockHolders() throws ChangeLogException {
        try (Connection c = pool.openUnpooled()) {
            List<Integer> blocked = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT pid FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND application_name = ? AND query LIKE ?")) {
                ps.setString(1, ConnectionPool.APPLICATION_NAME);
                ps.setString(2, "%TRUNCATE%" + schema.name() + "%");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        blocked.add(rs.getInt(1));
                    }
                }
            }
            if (blocked.isEmpty()) {
                LOG.info("changelog: no blocked TRUNCATE backends found for {}", schema);
                return 0;
            }
            LOG.info("changelog: found blocked TRUNCATE backends {} for {}", blocked, schema);
            int count = 0;
            try (PreparedStatement ps = c.prepareStatement("SELECT pid, application_name, query,"
                    + " pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY("
                    + "SELECT unnest(pg_blocking_pids(b.pid)) FROM unnest(?::int[]) AS b(pid))"
                    + " AND application_name = ? AND pid != ALL(?::int[])")) {
                java.sql.Array pids = c.createArrayOf("int4", blocked.toArray());
                ps.setArray(1, pids);
                ps.setString(2, ConnectionPool.APPLICATION_NAME);
                ps.setArray(3, pids);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        count++;
                        String q = rs.getString(3);
                        LOG.info("changelog: terminated blocking backend pid={} app={} ok={} query={}", rs.getInt(1),
                                rs.getString(2), rs.getBoolean(4), q == null ? "" : q.substring(0, Math.min(200, q.length())));
                    }
                }
            }
            return count;
        } catch (SQLException e) {
            throw failure("terminateLockHolders", e);
        }
    }

    private void terminateLockHoldersLogged() {
        LOG.info("changelog: ensureReplicationConfig blocked for {} ms, terminating lock holders",
                settings.lockHolderTerminateMs());
        try {
            terminateLockHolders();
        } catch (ChangeLogException e) {
            LOG.warn("changelog: terminating lock holders of {} failed: {}", schema, e.getMessage());
        }
    }

    /** Stops the executors and closes idle connections; open handles fail or close on their own. */
    @Override
    public void close() {
        timer.shutdownNow();
        writer.shutdown();
        pool.close();
    }

    // ------------------------------------------------------------------ helpers

    @FunctionalInterface
    interface Work<T> {
        T run(Connection c) throws SQLException, ChangeLogException;
    }

    private <T> T autoCommit(String what, Work<T> work) throws ChangeLogException {
        try (ConnectionPool.Lease lease = pool.lease()) {
            try {
                return work.run(lease.connection());
            } catch (SQLException e) {
                lease.discard();
                throw failure(what, e);
            }
        }
    }

    private <T> T inTransaction(String what, Work<T> work) throws ChangeLogException {
        ConnectionPool.Lease lease = pool.lease();
        Connection c = lease.connection();
        try {
            c.setAutoCommit(false);
            T result = work.run(c);
            c.commit();
            c.setAutoCommit(true);
            lease.close();
            return result;
        } catch (SQLException e) {
            rollbackAndRelease(lease);
            throw failure(what, e);
        } catch (ChangeLogException | RuntimeException e) {
            rollbackAndRelease(lease);
            throw e;
        }
    }

    private static void rollbackAndRelease(ConnectionPool.Lease lease) {
        try {
            lease.connection().rollback();
            lease.connection().setAutoCommit(true);
        } catch (SQLException e) {
            LOG.debug("changelog: rollback failed, discarding connection: {}", e.getMessage());
            lease.discard();
        }
        lease.close();
    }

    private ChangeLogException failure(String what, SQLException e) {
        return new ChangeLogException(what + " on change-db schema " + schema + " failed: "
                + Secrets.maskUrls(String.valueOf(e.getMessage())), e);
    }

    private String table(String name) {
        return schema.table(name);
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
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

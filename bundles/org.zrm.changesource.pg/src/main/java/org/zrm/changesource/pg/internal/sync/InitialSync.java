package org.zrm.changesource.pg.internal.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.setup.PublicationInfo;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.setup.ShardSchema;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.TableSpec;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.ReplicaLayout;
import org.zrm.replica.ReplicaMetadataStore;

/**
 * Initial sync (spec §6.1): sets up the upstream shard, creates a replica row and slot with an
 * exported snapshot, copies every published table inside that snapshot into a new SQLite replica,
 * then marks the replica row usable.
 *
 * <p>The replica is built in {@code <file>.initial-sync} and moved over {@code <file>} atomically
 * only after everything succeeded, so a failed or interrupted sync never leaves a file a later start
 * would trust. On failure the new slot and replica row are dropped (best effort) and the temporary
 * file deleted.
 *
 * <p>Threads: up to {@code tableCopyWorkers} copy threads (one upstream connection each, all in the
 * same snapshot) feed a bounded queue; the calling thread is the only SQLite writer.
 */
public final class InitialSync {

    private static final Logger LOG = LoggerFactory.getLogger(InitialSync.class);
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private final ShardConfig shard;
    private final PgConnector connector;
    private final InitialSyncOptions options;
    private final Map<String, Object> context;
    private final SyncProgress progress = new SyncProgress();

    /**
     * @param context the server context recorded as {@code initialSyncContext} (free-form JSON
     *     object; {@link org.zrm.protocol.JsonValues} representation)
     */
    public InitialSync(ShardConfig shard, PgConnector connector, InitialSyncOptions options, Map<String, Object> context) {
        this.shard = shard;
        this.connector = connector;
        this.options = options;
        this.context = Map.copyOf(context);
    }

    /** Live progress of this sync (callable from any thread). */
    public SyncProgress progress() {
        return progress;
    }

    /** The temporary file a sync into {@code replicaFile} writes before the final rename. */
    public static Path tempFile(Path replicaFile) {
        return replicaFile.resolveSibling(replicaFile.getFileName() + ".initial-sync");
    }

    /**
     * Runs the sync into {@code replicaFile}, replacing any existing file on success.
     *
     * @throws SQLException on upstream or SQLite errors (the upstream slot is dropped)
     * @throws org.zrm.changesource.pg.internal.setup.UnsupportedTableSchemaException on invalid tables
     * @throws InterruptedException if interrupted (cleanup is done before it propagates)
     */
    public InitialSyncResult run(Path replicaFile) throws SQLException, IOException, InterruptedException {
        Path temp = tempFile(replicaFile);
        Files.deleteIfExists(temp);
        String slotName = null;
        String replicaId = null;
        Connection conn = connector.connect("zero-initial-sync");
        Connection repl = null;
        List<Connection> workers = new ArrayList<>();
        try {
            checkUpstreamConfig(conn);
            List<String> publications = ensurePublishedTables(conn);
            repl = connector.connectForReplication("zero-initial-sync-replication-session");
            replicaId = Long.toString(System.currentTimeMillis());
            ReplicationSlot slot = ReplicationSlots.createReplicaAndSlot(conn, repl, shard.id(), replicaId,
                    options.failover(), options.slotCreateTimeout());
            slotName = slot.slotName();
            String version = slot.replicaVersion();
            progress.replicaVersion(version);
            LOG.info("shard={} slot={}: initial sync at replicaVersion {} (consistent point {})", shard.id().schema(),
                    slotName, version, slot.consistentPoint());

            Connection first = importSnapshot(connector.connect("zero-initial-sync-copy-worker"), slot.snapshotName());
            workers.add(first);
            PublicationInfo info = PublicationInfo.read(first, publications);
            new TableValidator(options.requireRowKey()).validate(info);
            PgTypeCatalog catalog = PgTypeCatalog.load(first);
            List<PublishedTable> tables = info.schema().tables();
            int numWorkers = Math.max(1, Math.min(options.tableCopyWorkers(), tables.size()));
            for (int i = 1; i < numWorkers; i++) {
                workers.add(importSnapshot(connector.connect("zero-initial-sync-copy-worker"), slot.snapshotName()));
            }

            long rows;
            String phases;
            try (Connection lite = openLite(temp)) {
                try (Statement st = lite.createStatement()) {
                    st.execute("BEGIN EXCLUSIVE");
                }
                ReplicaLayout.createVersionHistoryTable(lite);
                ReplicaLayout.initReplicationState(lite, publications, version, CODEC.encodeValue(context));
                // The initial sync's tables give _0_version the replica version as default (see
                // ReplicaLayout.createTableStatement); the replicator's create-table gives none.
                ReplicaMetadataStore metadata = new ReplicaMetadataStore(lite);
                for (TableSpec t : info.schema().tableSpecs()) {
                    ReplicaLayout.createTable(lite, metadata, t, version, Map.of());
                }
                progress.tables(tables.size());
                progress.phase(SyncProgress.Phase.COPYING);
                LOG.info("slot={}: copying {} upstream tables at version {} with {} worker(s), {} COPY", slotName,
                        tables.size(), version, numWorkers, options.textCopy() ? "text" : "binary");
                long copyStart = System.nanoTime();
                rows = copyTables(lite, tables, workers, catalog, slotName);
                progress.phase(SyncProgress.Phase.INDEXING);
                LOG.info("slot={}: creating {} indexes", slotName, info.schema().indexes().size());
                long indexStart = System.nanoTime();
                for (IndexSpec idx : info.schema().indexSpecs()) {
                    ReplicaLayout.createIndex(lite, idx);
                }
                long finishStart = System.nanoTime();
                ReplicaLayout.writeVersionHistory(lite);

                try (PreparedStatement ps = conn.prepareStatement("UPDATE " + ShardSql.quoteId(shard.id().schema())
                        + ".replicas SET \"initialSchema\" = ?::json, \"initialSyncContext\" = ?::json WHERE id = ?")) {
                    ps.setString(1, CODEC.encodeValue(info.schema().json()));
                    ps.setString(2, CODEC.encodeValue(context));
                    ps.setString(3, replicaId);
                    ps.execute();
                }
                try (Statement st = lite.createStatement()) {
                    st.execute("COMMIT");
                    st.execute("ANALYZE main");
                    st.execute("PRAGMA synchronous = NORMAL");
                }
                // Where a long sync went, as upstream's "Synced … (flush, index, total)" line says.
                phases = String.format(java.util.Locale.ROOT, "copy %d ms, indexes %d ms, commit and ANALYZE %d ms",
                        (indexStart - copyStart) / 1_000_000, (finishStart - indexStart) / 1_000_000,
                        (System.nanoTime() - finishStart) / 1_000_000);
            }
            deleteWalOf(replicaFile);
            Files.move(temp, replicaFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            progress.phase(SyncProgress.Phase.DONE);
            LOG.info("slot={}: initial sync done: {} ({})", slotName, progress.snapshot().describe(), phases);
            return new InitialSyncResult(version, publications, replicaId, slotName, rows, tables.size());
        } catch (SQLException | IOException | InterruptedException | RuntimeException e) {
            progress.phase(SyncProgress.Phase.FAILED);
            LOG.error("shard={} slot={}: initial sync failed: {}", shard.id().schema(), slotName, e.toString());
            for (Connection w : workers) {
                closeQuietly(w, e);
            }
            workers.clear();
            if (repl != null) {
                closeQuietly(repl, e);
                repl = null;
            }
            if (slotName != null) {
                cleanUpFailedReplica(conn, replicaId, slotName);
            }
            try {
                Files.deleteIfExists(temp);
            } catch (IOException io) {
                e.addSuppressed(io);
            }
            throw e;
        } finally {
            for (Connection w : workers) {
                closeQuietly(w, null);
            }
            if (repl != null) {
                closeQuietly(repl, null);
            }
            closeQuietly(conn, null);
        }
    }

    /**
     * Deletes {@code <replica>-wal}, {@code <replica>-shm} and {@code <replica>-journal} of the file
     * about to be replaced (a hot rollback journal would likewise be "rolled back" onto the new
     * file by the first connection).
     *
     * <p>Why: the replicator writes the replica in WAL mode, and a writer that was killed, or that
     * cannot checkpoint into a file renamed away from under it, leaves committed frames in
     * {@code -wal}. The rename replaces only the database file. SQLite pairs a WAL with a database by
     * path alone, so the first connection to the new file would replay the old file's frames onto it
     * (the old stateVersion and rows reappear in a fresh replica, or the file reads as malformed).
     * The new file never was in WAL mode and owns no WAL, so anything at those paths is stale. It
     * runs only after the new file is complete: a failed sync keeps the old replica with its WAL.
     * A move that then fails leaves the old file without its uncheckpointed tail, which does not
     * matter because the replica was being replaced and the next start syncs again.
     */
    private static void deleteWalOf(Path replicaFile) throws IOException {
        for (String suffix : new String[] {"-wal", "-shm", "-journal"}) {
            Path sidecar = replicaFile.resolveSibling(replicaFile.getFileName() + suffix);
            if (Files.deleteIfExists(sidecar)) {
                LOG.info("replica={}: deleted {} of the replaced replica", replicaFile, sidecar.getFileName());
            }
        }
    }

    private void cleanUpFailedReplica(Connection conn, String replicaId, String slotName) {
        try (PreparedStatement ps = conn.prepareStatement(
                "DELETE FROM " + ShardSql.quoteId(shard.id().schema()) + ".replicas WHERE id = ?")) {
            ps.setString(1, replicaId);
            ps.execute();
        } catch (SQLException e) {
            LOG.warn("slot={}: could not delete replica row {}: {}", slotName, replicaId, e.getMessage());
        }
        ReplicationSlots.dropSlotQuietly(conn, slotName);
    }

    private static void closeQuietly(Connection c, Exception primary) {
        try {
            c.close();
        } catch (SQLException e) {
            if (primary != null) {
                primary.addSuppressed(e);
            } else {
                LOG.debug("error closing connection: {}", e.toString());
            }
        }
    }

    /** Requires {@code wal_level = logical} and PG ≥ 15. */
    static void checkUpstreamConfig(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT current_setting('wal_level'), current_setting('server_version_num')::int")) {
            rs.next();
            if (!"logical".equals(rs.getString(1))) {
                throw new UpstreamConfigException("Postgres must be configured with \"wal_level = logical\" (currently: "
                        + rs.getString(1) + "). Set it in postgresql.conf and restart the server.");
            }
            if (rs.getInt(2) < 150000) {
                throw new UpstreamConfigException(
                        "Must be running Postgres 15 or higher (server_version_num = " + rs.getInt(2) + ")");
            }
        }
    }

    /** The upstream is not usable for replication (wal_level, version). */
    public static final class UpstreamConfigException extends SQLException {
        private static final long serialVersionUID = 1L;

        public UpstreamConfigException(String message) {
            super(message, "55000");
        }
    }

    /**
     * Ensures the shard and returns all its publications, sorted. A shard whose stored publications
     * don't exist or differ from the configured ones is dropped and set up again (once).
     */
    private List<String> ensurePublishedTables(Connection conn) throws SQLException {
        for (int attempt = 0;; attempt++) {
            ShardSchema.ensureShardSchema(conn, shard);
            List<String> stored = ShardSchema.readInternalConfig(conn, shard.id()).publications();
            List<String> existing = new ArrayList<>();
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT pubname FROM pg_publication WHERE pubname IN (" + ShardSql.literalList(stored) + ")")) {
                while (rs.next()) {
                    existing.add(rs.getString(1));
                }
            }
            List<String> configured = shard.publications().stream().sorted().toList();
            List<String> storedUser = stored.stream().filter(p -> !p.startsWith(shard.id().internalPublicationPrefix()))
                    .sorted().toList();
            boolean missing = !new HashSet<>(existing).containsAll(stored);
            if ((missing || !configured.equals(storedUser)) && attempt == 0) {
                LOG.warn("shard={}: re-creating shard (stored publications {}, existing {}, configured {})",
                        shard.id().schema(), stored, existing, configured);
                ShardSchema.dropShard(conn, shard.id());
                continue;
            }
            return stored.stream().sorted().toList();
        }
    }

    private static Connection importSnapshot(Connection c, String snapshot) throws SQLException {
        try {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            c.setReadOnly(true);
            try (Statement st = c.createStatement()) {
                st.execute("SET TRANSACTION SNAPSHOT " + ShardSql.quoteLiteral(snapshot));
            }
            return c;
        } catch (SQLException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    private static Connection openLite(Path file) throws SQLException {
        Connection lite = DriverManagerless.open(file);
        try (Statement st = lite.createStatement()) {
            // Upstream's unsafe mode for initial sync: no journal, no fsync. Safe here because the
            // file is temporary and only renamed into place after COMMIT.
            st.execute("PRAGMA locking_mode = EXCLUSIVE");
            st.execute("PRAGMA foreign_keys = OFF");
            st.execute("PRAGMA journal_mode = OFF");
            st.execute("PRAGMA synchronous = OFF");
        }
        return lite;
    }

    private long copyTables(Connection lite, List<PublishedTable> tables, List<Connection> workers,
            PgTypeCatalog catalog, String slotName) throws SQLException, InterruptedException {
        BlockingQueue<CopyBatch> queue = new ArrayBlockingQueue<>(options.writerQueueBatches());
        ConcurrentLinkedQueue<PublishedTable> pending = new ConcurrentLinkedQueue<>(tables);
        AtomicReference<Exception> failure = new AtomicReference<>();
        CountDownLatch finished = new CountDownLatch(workers.size());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            Connection wc = workers.get(i);
            Thread t = new Thread(() -> {
                try {
                    PublishedTable table;
                    while (failure.get() == null && (table = pending.poll()) != null) {
                        TableCopier copier = new TableCopier(table, catalog, options.textCopy());
                        long[] est = copier.estimate(wc);
                        progress.estimate(est[0], est[1]);
                        long n = copier.copy(wc, options, batch -> {
                            // Bound hit: wait for the writer, but give up once another thread failed.
                            while (!queue.offer(batch, 100, TimeUnit.MILLISECONDS)) {
                                if (failure.get() != null) {
                                    throw new InterruptedException("initial sync aborted");
                                }
                            }
                        });
                        LOG.debug("slot={}: copied {} rows of {}", slotName, n, table.liteTableName());
                    }
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                } finally {
                    finished.countDown();
                }
            }, "zrm-initial-sync-copy-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        long rows = 0;
        LiteInserter inserter = new LiteInserter(lite, options.insertBatchSize());
        try (inserter) {
            long nextLog = System.nanoTime() + options.progressInterval().toNanos();
            try {
                while (true) {
                    if (failure.get() != null) {
                        break;
                    }
                    // Timed poll: the writer must also notice worker failure/completion and emit
                    // progress lines while no batch arrives (e.g. a worker waiting on a large table).
                    CopyBatch batch = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (batch != null) {
                        inserter.insert(batch);
                        rows += batch.rows().size();
                        progress.copied(batch.rows().size(), batch.bytes());
                        if (batch.last()) {
                            progress.tableDone();
                        }
                    } else if (finished.getCount() == 0 && queue.isEmpty()) {
                        break;
                    }
                    if (System.nanoTime() >= nextLog) {
                        LOG.info("slot={}: initial sync progress: {}", slotName, progress.snapshot().describe());
                        nextLog = System.nanoTime() + options.progressInterval().toNanos();
                    }
                }
            } catch (SQLException | RuntimeException | InterruptedException e) {
                failure.compareAndSet(null, e);
            }
        }
        if (failure.get() != null) {
            // Unblock copy threads stuck in a COPY read by closing their connections.
            for (Connection w : workers) {
                try {
                    w.abort(Runnable::run);
                } catch (SQLException e) {
                    failure.get().addSuppressed(e);
                }
            }
            for (Thread t : threads) {
                t.join(10_000);
            }
            Exception e = failure.get();
            if (e instanceof SQLException se) {
                throw se;
            }
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            if (e instanceof RuntimeException re) {
                throw re;
            }
            throw new SQLException(e.getMessage(), e);
        }
        for (Thread t : threads) {
            t.join();
        }
        return rows;
    }

    /** Opens sqlite-jdbc directly (DriverManager does not see drivers of other OSGi bundles). */
    static final class DriverManagerless {
        private DriverManagerless() {}

        static Connection open(Path file) throws SQLException {
            Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + file.toAbsolutePath(), new java.util.Properties());
            if (c == null) {
                throw new SQLException("sqlite-jdbc did not accept " + file);
            }
            return c;
        }
    }
}

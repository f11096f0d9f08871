package org.zrm.replica.apply;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.Delete;
import org.zrm.protocol.Insert;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Relation;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.SchemaChange;
import org.zrm.protocol.Truncate;
import org.zrm.protocol.Update;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteNames;
import org.zrm.replica.LiteValues;
import org.zrm.replica.ReplicaMetadataStore;

/**
 * Applies change-stream transactions to the replica (upstream {@code ChangeProcessor}), in one of
 * two of upstream's modes:
 * <ul>
 *   <li>{@link Mode#BACKUP}: each upstream transaction is one {@code BEGIN IMMEDIATE … COMMIT}
 *       SQLite transaction that also advances {@code _zero.replicationState.stateVersion}, so
 *       readers and backups only ever see whole transactions with a matching watermark;</li>
 *   <li>{@link Mode#INITIAL_SYNC}: the caller owns the one SQLite transaction around the whole
 *       sync, so {@code begin}/{@code commit} only track the version and advance the watermark.</li>
 * </ul>
 *
 * <p>This is a copy of {@code org.zrm.replicator.internal.ChangeProcessor} (plus the mode), moved
 * here so that the stream-fed initial sync builds tables exactly as the replicator does; the
 * replicator is meant to switch to this copy and drop its own.
 *
 * <p>Not thread-safe: one replicator thread owns the processor and its connection. Any failure
 * rolls back the open transaction and fails the processor for good (later messages are refused),
 * because the stream position is then unknown; the owner discards it and resubscribes from the
 * replica's watermark.
 */
public final class ChangeProcessor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeProcessor.class);

    private final Connection db;
    private final ChangeLogWriter changeLog;
    private final ReplicaMetadataStore metadata;
    private final SchemaChangeApplier schema;
    private final ProtocolCodec codec;
    private final StatementCache statements;
    private Map<String, LiteTableSpec> tableSpecs;

    private String version; // non-null while a transaction is open
    private JsonFormat jsonFormat;
    private long pos;
    private boolean schemaChanged;
    private int changeLogEntries;
    private Throwable failure;
    private final int beginAttempts;
    private final Mode mode;

    /** Who owns the SQLite transaction (upstream's {@code ChangeProcessorMode}, minus serving). */
    enum Mode {
        /** One SQLite transaction per upstream transaction, begun and committed here. */
        BACKUP,
        /** The caller's transaction spans the whole sync; no BEGIN or COMMIT here. */
        INITIAL_SYNC
    }

    /**
     * Busy timeouts (the writer connection's {@code busy_timeout}, 30 s) a transaction waits for the
     * replica's write lock before it fails: 10 minutes.
     */
    static final int BEGIN_ATTEMPTS = 20;

    /**
     * A processor for the backup replicator: one SQLite transaction per upstream transaction, begun
     * and committed here.
     *
     * @param db the replica's writer connection (WAL mode, autocommit)
     * @param codec the protocol codec
     * @throws SQLException if the replica's metadata cannot be read
     */
    public ChangeProcessor(Connection db, ProtocolCodec codec) throws SQLException {
        this(db, codec, BEGIN_ATTEMPTS, Mode.BACKUP);
    }

    /**
     * {@link #ChangeProcessor(Connection, ProtocolCodec)} with another bound on the wait for the
     * replica's write lock.
     *
     * @param beginAttempts busy timeouts to wait for the write lock before a transaction fails
     */
    public ChangeProcessor(Connection db, ProtocolCodec codec, int beginAttempts) throws SQLException {
        this(db, codec, beginAttempts, Mode.BACKUP);
    }

    ChangeProcessor(Connection db, ProtocolCodec codec, Mode mode) throws SQLException {
        this(db, codec, BEGIN_ATTEMPTS, mode);
    }

    /** @param beginAttempts busy timeouts to wait for the write lock before a transaction fails */
    ChangeProcessor(Connection db, ProtocolCodec codec, int beginAttempts, Mode mode) throws SQLException {
        this.beginAttempts = beginAttempts;
        this.mode = mode;
        this.db = db;
        this.codec = codec;
        this.statements = new StatementCache(db);
        this.changeLog = new ChangeLogWriter(db, codec);
        this.metadata = new ReplicaMetadataStore(db);
        this.schema = new SchemaChangeApplier(this, db, metadata);
        this.tableSpecs = ReplicaSchema.listTables(db);
    }

    /** Whether a transaction is open. */
    /** Whether an upstream transaction is open (begun, not yet committed or rolled back). */
    public boolean inTransaction() {
        return version != null;
    }

    /**
     * Applies one message.
     *
     * @return the commit's result for a {@code commit}, otherwise {@code null}
     * @throws ChangeProcessingException if the message could not be applied; the transaction has
     *     been rolled back and the processor is failed
     * @throws InterruptedException if interrupted while waiting for the write lock
     */
    public CommitResult process(ChangeStreamData message) throws ChangeProcessingException, InterruptedException {
        if (failure != null) {
            throw new ChangeProcessingException("processor failed earlier; message dropped: " + message.type(), failure);
        }
        try {
            if (message instanceof BeginMessage begin) {
                begin(begin);
                return null;
            }
            requireTransaction(message);
            if (message instanceof DataMessage data) {
                apply(data.change());
                return null;
            }
            if (message instanceof CommitMessage commit) {
                return commit(commit.watermark());
            }
            rollback(); // the only other ChangeStreamData is RollbackMessage
            return null;
        } catch (ChangeProcessingException | SQLException | RuntimeException e) {
            throw fail(message, e);
        }
    }

    private void requireTransaction(ChangeStreamData message) throws ChangeProcessingException {
        if (version == null) {
            throw new ChangeProcessingException("Received message outside of transaction: " + message.type());
        }
    }

    private void begin(BeginMessage begin) throws SQLException, ChangeProcessingException, InterruptedException {
        if (version != null) {
            throw new ChangeProcessingException("Already in a transaction at " + version + " when begin "
                    + begin.commitWatermark() + " arrived");
        }
        // A plain BEGIN IMMEDIATE (not CONCURRENT): it takes the write lock now. SQLITE_BUSY after the
        // busy timeout means another connection (litestream checkpointing) holds it for long. Upstream
        // waits forever; we wait a bounded number of busy timeouts and then fail the transaction with
        // a clear error, so a replica held by a stuck or foreign writer shows up in /status and the
        // log instead of a replicator that silently stops; the replicator then resubscribes from the
        // replica's watermark, so nothing is lost.
        for (int attempt = 1; mode == Mode.BACKUP; attempt++) {
            try (Statement st = db.createStatement()) {
                st.execute("BEGIN IMMEDIATE");
                break;
            } catch (SQLException e) {
                if (!isBusy(e)) {
                    throw e;
                }
                if (attempt >= beginAttempts) {
                    throw new ChangeProcessingException("the replica is locked by another connection (e.g. litestream,"
                            + " or a second process writing the file): gave up beginning " + begin.commitWatermark()
                            + " after " + attempt + " busy timeouts", e);
                }
                LOG.warn("replica: replica is locked by another connection; still waiting to begin {} (attempt {}"
                        + " of {})", begin.commitWatermark(), attempt, beginAttempts);
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for the replica's write lock");
                }
            }
        }
        version = begin.commitWatermark();
        jsonFormat = begin.begin().effectiveJsonFormat();
        pos = 0;
        schemaChanged = false;
        changeLogEntries = 0;
    }

    private static boolean isBusy(SQLException e) {
        String msg = String.valueOf(e.getMessage());
        return msg.contains("SQLITE_BUSY") || msg.contains("database is locked");
    }

    private CommitResult commit(String watermark) throws SQLException, ChangeProcessingException {
        if (!watermark.equals(version)) {
            throw new ChangeProcessingException("'commit' version " + watermark + " does not match 'begin' version "
                    + version);
        }
        metadata.updateWatermark(watermark);
        try (Statement st = db.createStatement()) {
            if (schemaChanged) {
                st.execute("PRAGMA optimize");
            }
            if (mode == Mode.BACKUP) {
                st.execute("COMMIT");
            }
        }
        CommitResult result = new CommitResult(watermark, schemaChanged, changeLogEntries > 0);
        version = null;
        return result;
    }

    private void rollback() throws SQLException, ChangeProcessingException {
        if (mode == Mode.INITIAL_SYNC) {
            // Only the caller can undo its transaction; it must treat this as a failed sync.
            throw new ChangeProcessingException("rollback of transaction " + version + " during initial sync");
        }
        String v = version;
        version = null;
        try (Statement st = db.createStatement()) {
            st.execute("ROLLBACK");
        }
        if (schemaChanged) {
            reloadTableSpecs(); // the rolled-back DDL is gone again
        }
        LOG.info("replica: rolled back transaction {}", v);
    }

    private ChangeProcessingException fail(ChangeStreamData message, Exception e) {
        String where = version == null ? "" : " in transaction " + version;
        ChangeProcessingException err = e instanceof ChangeProcessingException cpe ? cpe
                : new ChangeProcessingException("failed to apply " + describe(message) + where + ": " + e.getMessage(), e);
        failure = err;
        if (version != null && mode == Mode.BACKUP) {
            version = null;
            try (Statement st = db.createStatement()) {
                st.execute("ROLLBACK");
            } catch (SQLException rb) {
                // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL); keep both.
                err.addSuppressed(rb);
            }
        }
        return err;
    }

    private static String describe(ChangeStreamData message) {
        return message instanceof DataMessage d ? d.change().tag() : message.type();
    }

    @Override
    public void close() throws SQLException {
        // The connection belongs to whoever made it; in initial-sync mode the caller also rolls back.
        try (statements) {
            if (mode == Mode.BACKUP && version != null) {
                LOG.info("replica: aborting transaction {}", version);
                version = null;
                try (Statement st = db.createStatement()) {
                    st.execute("ROLLBACK");
                }
            }
        }
    }

    // ---- data changes ----

    private void apply(DataOrSchemaChange change) throws SQLException, ChangeProcessingException {
        if (change instanceof Insert insert) {
            insert(insert);
        } else if (change instanceof Update update) {
            update(update);
        } else if (change instanceof Delete delete) {
            delete(delete);
        } else if (change instanceof Truncate truncate) {
            truncate(truncate);
        } else if (change instanceof Backfill backfill) {
            backfill(backfill);
        } else if (change instanceof SchemaChange schemaChange) {
            statements.clear(); // no cached statement may refer to a table the DDL alters or drops
            schema.apply(schemaChange);
        } else {
            throw new ChangeProcessingException("unsupported change " + change.tag());
        }
    }

    String version() {
        return version;
    }

    LiteTableSpec tableSpec(String name) throws ChangeProcessingException {
        LiteTableSpec spec = tableSpecs.get(name);
        if (spec == null) {
            throw new ChangeProcessingException("Unknown table " + name);
        }
        return spec;
    }

    LiteTableSpec tableSpecOrNull(String name) {
        return tableSpecs.get(name);
    }

    void reloadTableSpecs() throws SQLException {
        statements.clear();
        tableSpecs = ReplicaSchema.listTables(db);
    }

    /** A schema change that makes the table's rows new to clients (upstream {@code logResetOp}). */
    void resetTable() throws SQLException {
        schemaChanged = true;
        reloadTableSpecs(); // backup mode writes no reset entry into the change log
    }

    /** Raises the table's {@code minRowVersion} to this transaction (upstream {@code bumpVersions}). */
    void bumpVersions(String schemaName, String tableName) throws SQLException {
        metadata.setMinRowVersion(schemaName, tableName, version);
        resetTable();
    }

    private Map<String, Object> liteRow(Map<String, Object> row, LiteTableSpec spec) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : row.entrySet()) {
            out.put(e.getKey(), LiteValues.liteValue(e.getValue(), spec.columnType(e.getKey()), jsonFormat));
        }
        return out;
    }

    /** Upstream {@code getKey}: the relation's key columns, or the table's key for REPLICA IDENTITY FULL. */
    Map<String, Object> key(Map<String, Object> row, Relation relation) throws ChangeProcessingException {
        RowKey rowKey = relation.effectiveRowKey();
        List<String> keyColumns = rowKey.type() != ReplicaIdentity.FULL ? rowKey.columns()
                : tableSpec(LiteNames.tableName(relation.schema(), relation.name())).primaryKey();
        if (keyColumns.isEmpty()) {
            throw new ChangeProcessingException("Cannot replicate table \"" + relation.name()
                    + "\" without a PRIMARY KEY or UNIQUE INDEX");
        }
        Map<String, Object> key = new LinkedHashMap<>();
        for (String col : keyColumns) {
            if (!row.containsKey(col)) {
                throw new ChangeProcessingException("row of \"" + relation.name() + "\" lacks key column " + col);
            }
            key.put(col, row.get(col));
        }
        return key;
    }

    private void insert(Insert insert) throws SQLException, ChangeProcessingException {
        String table = LiteNames.tableName(insert.relation().schema(), insert.relation().name());
        LiteTableSpec spec = tableSpec(table);
        Map<String, Object> row = liteRow(insert.newRow(), spec);
        Map<String, Object> withVersion = new LinkedHashMap<>(row);
        withVersion.put(LiteNames.ZERO_VERSION_COLUMN, version);
        upsert(table, withVersion);
        if (insert.relation().effectiveRowKey().columns().isEmpty()) {
            // Rows of keyless tables are replicated but cannot be logged (no key); a later schema
            // change that adds a key resets the table anyway.
            return;
        }
        logSetOp(table, key(row, insert.relation()), spec, row);
    }

    private void upsert(String table, Map<String, Object> row) throws SQLException {
        List<String> cols = List.copyOf(row.keySet());
        String sql = "INSERT OR REPLACE INTO " + LiteNames.quote(table) + " (" + quoteAll(cols) + ") VALUES ("
                + "?,".repeat(cols.size() - 1) + "?)";
        PreparedStatement ps = statements.get(sql);
        int i = 1;
        for (Object v : row.values()) {
            SqlBinding.bind(ps, i++, v);
        }
        ps.executeUpdate();
    }

    /**
     * Applies an update as an UPDATE (the new row may omit TOAST-unchanged columns), falling back
     * to an upsert when no row matched (resumptive replication, e.g. a table newly added to the
     * publication).
     */
    private void update(Update update) throws SQLException, ChangeProcessingException {
        String table = LiteNames.tableName(update.relation().schema(), update.relation().name());
        LiteTableSpec spec = tableSpec(table);
        Map<String, Object> row = liteRow(update.newRow(), spec);
        Map<String, Object> withVersion = new LinkedHashMap<>(row);
        withVersion.put(LiteNames.ZERO_VERSION_COLUMN, version);
        Map<String, Object> oldKey = update.key() == null ? null : key(liteRow(update.key(), spec), update.relation());
        Map<String, Object> newKey = key(row, update.relation());
        if (oldKey != null && !spec.backfilling().isEmpty()) {
            logDeleteOp(table, oldKey);
        }
        logSetOp(table, newKey, spec, row);

        Map<String, Object> where = oldKey != null ? oldKey : newKey;
        StringBuilder sql = new StringBuilder("UPDATE ").append(LiteNames.quote(table)).append(" SET ");
        appendAssignments(sql, withVersion.keySet(), ",");
        sql.append(" WHERE ");
        appendAssignments(sql, where.keySet(), " AND ");
        PreparedStatement ps = statements.get(sql.toString());
        int i = 1;
        for (Object v : withVersion.values()) {
            SqlBinding.bind(ps, i++, v);
        }
        for (Object v : where.values()) {
            SqlBinding.bind(ps, i++, v);
        }
        int changed = ps.executeUpdate();
        if (changed == 0) {
            upsert(table, withVersion);
        }
    }

    private static void appendAssignments(StringBuilder sql, Iterable<String> cols, String sep) {
        boolean first = true;
        for (String c : cols) {
            if (!first) {
                sql.append(sep);
            }
            first = false;
            sql.append(LiteNames.quote(c)).append("=?");
        }
    }

    private void delete(Delete delete) throws SQLException, ChangeProcessingException {
        String table = LiteNames.tableName(delete.relation().schema(), delete.relation().name());
        LiteTableSpec spec = tableSpec(table);
        Map<String, Object> key = key(liteRow(delete.key(), spec), delete.relation());
        StringBuilder sql = new StringBuilder("DELETE FROM ").append(LiteNames.quote(table)).append(" WHERE ");
        appendAssignments(sql, key.keySet(), " AND ");
        PreparedStatement ps = statements.get(sql.toString());
        int i = 1;
        for (Object v : key.values()) {
            SqlBinding.bind(ps, i++, v);
        }
        ps.executeUpdate();
        if (!spec.backfilling().isEmpty()) {
            logDeleteOp(table, key);
        }
    }

    private void truncate(Truncate truncate) throws SQLException, ChangeProcessingException {
        for (Relation relation : truncate.relations()) {
            String table = LiteNames.tableName(relation.schema(), relation.name());
            tableSpec(table);
            try (Statement st = db.createStatement()) {
                st.execute("DELETE FROM " + LiteNames.quote(table));
            }
        }
    }

    /** Logs a set op only while some of the table's columns are being backfilled (backup mode). */
    private void logSetOp(String table, Map<String, Object> key, LiteTableSpec spec, Map<String, Object> row)
            throws SQLException {
        if (spec.backfilling().isEmpty()) {
            return;
        }
        List<String> backfilled = new ArrayList<>();
        for (String col : spec.backfilling()) {
            if (row.containsKey(col)) {
                backfilled.add(col);
            }
        }
        changeLog.logSetOp(version, pos++, table, key, backfilled);
        changeLogEntries++;
    }

    private void logDeleteOp(String table, Map<String, Object> key) throws SQLException {
        changeLog.logDeleteOp(version, pos++, table, key);
        changeLogEntries++;
    }

    /**
     * Writes a batch of backfilled values, skipping rows deleted after the backfill snapshot and
     * columns that replication has already set to newer values.
     */
    private void backfill(Backfill backfill) throws SQLException, ChangeProcessingException {
        String table = LiteNames.tableName(backfill.relation().schema(), backfill.relation().name());
        LiteTableSpec spec = tableSpec(table);
        List<String> keyCols = backfill.relation().rowKey().columns();
        List<String> cols = new ArrayList<>(keyCols);
        cols.addAll(backfill.columns());
        List<String> insertCols = new ArrayList<>(cols);
        insertCols.add(LiteNames.ZERO_VERSION_COLUMN);
        String watermark = backfill.watermark();
        int written = 0;
        int skipped = 0;
        for (List<Object> values : backfill.rowValues()) {
            if (values.size() != cols.size()) {
                throw new ChangeProcessingException("backfill row of " + table + " has " + values.size()
                        + " values for " + cols.size() + " columns");
            }
            Map<String, Object> raw = new LinkedHashMap<>();
            for (int i = 0; i < cols.size(); i++) {
                raw.put(cols.get(i), values.get(i));
            }
            Map<String, Object> row = liteRow(raw, spec);
            ChangeLogWriter.RowOp op = changeLog.latestRowOp(table, key(row, backfill.relation()));
            if (op != null && ChangeLogWriter.DEL_OP.equals(op.op()) && op.stateVersion().compareTo(watermark) > 0) {
                skipped++; // deleted after the backfill's snapshot
                continue;
            }
            List<String> updates = new ArrayList<>();
            for (String c : cols) {
                if (op == null || !ChangeLogWriter.SET_OP.equals(op.op())
                        || op.backfillingColumnVersions().getOrDefault(c, "").compareTo(watermark) <= 0) {
                    updates.add(c);
                }
            }
            if (updates.isEmpty()) {
                skipped++; // replication already wrote newer values for every backfilled column
                continue;
            }
            StringBuilder sql = new StringBuilder("INSERT INTO ").append(LiteNames.quote(table)).append(" (")
                    .append(quoteAll(insertCols)).append(") VALUES (").append("?,".repeat(cols.size()))
                    .append("?) ON CONFLICT (").append(quoteAll(keyCols)).append(") DO UPDATE SET ");
            for (int i = 0; i < updates.size(); i++) {
                String c = LiteNames.quote(updates.get(i));
                sql.append(i == 0 ? "" : ",").append(c).append("=excluded.").append(c);
            }
            try (PreparedStatement ps = db.prepareStatement(sql.toString())) {
                int i = 1;
                for (Object v : row.values()) {
                    SqlBinding.bind(ps, i++, v);
                }
                ps.setString(i, watermark); // _0_version of rows the backfill creates
                ps.executeUpdate();
            }
            written++;
        }
        LOG.debug("replica: backfilled {} rows (skipped {}) into {}", written, skipped, table);
    }

    ProtocolCodec codec() {
        return codec;
    }

    /** Quotes each identifier and joins them with {@code ,}. */
    private static String quoteAll(List<String> names) {
        StringBuilder sb = new StringBuilder();
        for (String n : names) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(LiteNames.quote(n));
        }
        return sb.toString();
    }
}

package org.zrm.replica.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.ReplicaLayout;
import org.zrm.replica.ReplicaState;
import org.zrm.replica.ReplicaStateReader;
import org.zrm.replica.ZqlType;
import org.zrm.replica.apply.ChangeProcessingException;
import org.zrm.replica.apply.InitialSyncApplier;

/**
 * Builds a new replica from the first transaction of a change stream (upstream's initial sync of
 * custom change sources), and hands an existing one back as a {@link SubscriptionState}.
 *
 * <p><b>What a sync does.</b> The first transaction of a fresh stream is the snapshot. Its
 * {@code begin}'s commit watermark becomes the replica version ({@code _zero.replicationConfig},
 * {@code _zero.replicationState}); every change in it ({@code create-table},
 * {@code create-index}, {@code insert}, …) is applied by the replicator's change processor, so
 * the file ends up as the replicator would build it; after the {@code commit} the tables Zero
 * requires are checked ({@link #requiredTables}). {@code status} messages are ignored, a
 * {@code reset-required} control message fails the sync with {@link AutoResetException}, and a
 * {@code rollback}, the end of the stream or any message that cannot be applied fails it with a
 * {@link ChangeSourceException}.
 *
 * <p><b>No half-built replica.</b> The replica is written in {@code <file>.initial-sync}, in one
 * SQLite transaction, and renamed over {@code <file>} only after the commit was applied and
 * validated. A temporary file rather than only one transaction in the real file, because the
 * replica path is watched by others (backup monitors, litestream, a zero-cache reading the same
 * file): with the rename they see either no replica or a complete one, and a process killed
 * mid-sync leaves only a temporary file that the next sync deletes. A failed sync deletes its
 * temporary file and leaves an existing replica file as it was.
 *
 * <p>Not thread-safe; the change source's initialising thread uses it. A {@link Session} holds an
 * open SQLite connection until it completes or is closed.
 */
public final class StreamFedInitialSync {

    private static final Logger LOG = LoggerFactory.getLogger(StreamFedInitialSync.class);
    private static final ProtocolCodec CODEC = new ProtocolCodec();

    /** Opens the stream a sync reads: a stream from the very start, without a watermark. */
    @FunctionalInterface
    public interface StreamOpener {
        /**
         * @return a new stream whose first transaction is the snapshot
         * @throws ChangeSourceException if the stream cannot be opened
         * @throws InterruptedException if interrupted
         */
        ChangeStream open() throws ChangeSourceException, InterruptedException;
    }

    private final String sourceName;
    private final Path replicaFile;
    private final String appId;
    private final int shardNum;
    private final List<String> publications;
    private final Map<String, Object> serverContext;

    /**
     * @param sourceName names the source in errors and logs, e.g. its URL without secrets
     * @param replicaFile the replica file ({@code ZERO_REPLICA_FILE})
     * @param appId the app id ({@code ZERO_APP_ID}), which names the required tables
     * @param shardNum the shard number ({@code ZERO_SHARD_NUM})
     * @param publications the configured publications; stored sorted as the replica's, and compared
     *     with an existing replica's when not empty
     * @param serverContext stored as {@code _zero.replicationConfig.initialSyncContext}; values of
     *     the {@link org.zrm.protocol.JsonValues} model
     */
    public StreamFedInitialSync(String sourceName, Path replicaFile, String appId, int shardNum,
            List<String> publications, Map<String, Object> serverContext) {
        this.sourceName = Objects.requireNonNull(sourceName, "sourceName");
        this.replicaFile = Objects.requireNonNull(replicaFile, "replicaFile");
        this.appId = Objects.requireNonNull(appId, "appId");
        this.shardNum = shardNum;
        List<String> sorted = new ArrayList<>(publications);
        sorted.sort(null);
        this.publications = List.copyOf(sorted);
        this.serverContext = new LinkedHashMap<>(serverContext);
    }

    /**
     * The temporary file a sync into {@code replicaFile} writes before the final rename.
     *
     * @param replicaFile the replica file
     * @return {@code <replicaFile>.initial-sync}
     */
    public static Path tempFile(Path replicaFile) {
        return replicaFile.resolveSibling(replicaFile.getFileName() + ".initial-sync");
    }

    /**
     * The tables a replica of Zero must hold after initial sync, with the ZQL type of each required
     * column: {@code {app}_{n}.clients}, {@code {app}_{n}.mutations} and {@code {app}.permissions}.
     *
     * <p>QUIRK (kept): the custom-source check requires {@code mutations.mutation} (json), whereas
     * the Postgres shard schema's table has a {@code result} column instead; a custom source must
     * therefore send a {@code mutation} column.
     *
     * @param appId the app id
     * @param shardNum the shard number
     * @return table name (replica name, {@code schema.table}) to column to type, in check order
     */
    public static Map<String, Map<String, ZqlType>> requiredTables(String appId, int shardNum) {
        Map<String, Map<String, ZqlType>> t = new LinkedHashMap<>();
        Map<String, ZqlType> clients = new LinkedHashMap<>();
        clients.put("clientGroupID", ZqlType.STRING);
        clients.put("clientID", ZqlType.STRING);
        clients.put("lastMutationID", ZqlType.NUMBER);
        clients.put("userID", ZqlType.STRING);
        t.put(appId + "_" + shardNum + ".clients", clients);
        Map<String, ZqlType> mutations = new LinkedHashMap<>();
        mutations.put("clientGroupID", ZqlType.STRING);
        mutations.put("clientID", ZqlType.STRING);
        mutations.put("mutationID", ZqlType.NUMBER);
        mutations.put("mutation", ZqlType.JSON);
        t.put(appId + "_" + shardNum + ".mutations", mutations);
        Map<String, ZqlType> permissions = new LinkedHashMap<>();
        permissions.put("permissions", ZqlType.JSON);
        permissions.put("hash", ZqlType.STRING);
        t.put(appId + ".permissions", permissions);
        return t;
    }

    /**
     * What {@link org.zrm.changesource.ChangeSource#initialize(boolean)} does for a stream-fed
     * source: optionally discard the replica, sync one if there is none (opening a stream with
     * {@code opener} and closing it afterwards), then check that the configured publications, if
     * any, are the replica's.
     *
     * @param resetReplica discard the local replica first
     * @param opener opens the stream for a sync; not called when a replica exists
     * @return the replica's subscription state
     * @throws AutoResetException if the replica file is unreadable or of another layout version, or
     *     the source sent {@code reset-required} during the sync
     * @throws ChangeSourceAbortedException if the configured publications differ from the
     *     replica's, or the snapshot lacks a table Zero requires
     * @throws ChangeSourceException if the sync failed otherwise (retryable)
     * @throws InterruptedException if interrupted
     */
    public SubscriptionState initialize(boolean resetReplica, StreamOpener opener)
            throws ChangeSourceException, InterruptedException {
        if (resetReplica) {
            LOG.info("replica={}: resetting replica as requested", replicaFile);
            deleteReplica();
        }
        Optional<SubscriptionState> state = existing();
        if (state.isEmpty()) {
            try (ChangeStream stream = opener.open()) {
                state = Optional.of(sync(stream));
            }
        }
        SubscriptionState s = state.get();
        if (!publications.isEmpty()) {
            List<String> replicated = new ArrayList<>(s.publications());
            replicated.sort(null);
            if (!publications.equals(replicated)) {
                throw new ChangeSourceAbortedException("Invalid ShardConfig. Requested publications ["
                        + String.join(",", publications) + "] do not match synced publications: ["
                        + String.join(",", replicated) + "]");
            }
        }
        return s;
    }

    /**
     * The subscription state of a completed replica in the file, if there is one.
     *
     * @return the state, or empty if the file is missing or holds no completed replica
     * @throws AutoResetException if the file is unreadable or at another layout version
     */
    public Optional<SubscriptionState> existing() throws AutoResetException {
        if (!Files.isRegularFile(replicaFile)) {
            return Optional.empty();
        }
        try (Connection lite = open(replicaFile)) {
            Optional<ReplicaState> s = ReplicaStateReader.read(lite);
            if (s.isPresent() && s.get().schemaVersion() != ReplicaLayout.SCHEMA_VERSION) {
                throw new AutoResetException("replica " + replicaFile + " is at schema v" + s.get().schemaVersion()
                        + ", expected v" + ReplicaLayout.SCHEMA_VERSION);
            }
            return s.map(r -> new SubscriptionState(r.replicaVersion(), r.publications(), r.stateVersion()));
        } catch (SQLException e) {
            throw new AutoResetException("replica " + replicaFile + " is unreadable: " + e.getMessage(), e);
        }
    }

    /**
     * Deletes the replica file with its WAL and journal files, and any leftover temporary file.
     *
     * @throws ChangeSourceException if a file cannot be deleted
     */
    public void deleteReplica() throws ChangeSourceException {
        try {
            for (String suffix : new String[] {"", "-wal", "-shm", "-wal2", "-journal"}) {
                Files.deleteIfExists(replicaFile.resolveSibling(replicaFile.getFileName() + suffix));
            }
            Files.deleteIfExists(tempFile(replicaFile));
        } catch (IOException e) {
            throw new ChangeSourceException("cannot delete replica " + replicaFile + ": " + e.getMessage(), e);
        }
    }

    /**
     * Syncs a new replica from {@code stream}, which must start with the snapshot, replacing any
     * file at the replica path on success. Messages are taken until the snapshot's commit; the
     * stream is left open (the caller closes it).
     *
     * @param stream the stream
     * @return the new replica's state (watermark = replica version)
     * @throws AutoResetException if the source sent {@code reset-required}
     * @throws ChangeSourceAbortedException if a table Zero requires is missing or mistyped
     * @throws ChangeSourceException if the stream failed or ended, sent a rollback, or sent a message
     *     that cannot be applied
     * @throws InterruptedException if interrupted (nothing is left behind)
     */
    public SubscriptionState sync(ChangeStream stream) throws ChangeSourceException, InterruptedException {
        try (Session session = open()) {
            while (true) {
                ChangeStreamMessage m;
                try {
                    m = stream.take();
                } catch (ChangeStreamClosedException e) {
                    throw new ChangeSourceException("change source " + sourceName
                            + " closed before initial-sync completed", e);
                }
                Optional<SubscriptionState> done = session.accept(m);
                if (done.isPresent()) {
                    return done.get();
                }
            }
        }
    }

    /**
     * Starts a push-style sync: the caller feeds the snapshot's messages to
     * {@link Session#accept}, for sources that produce messages rather than a {@link ChangeStream}.
     *
     * @return the session; close it to abandon the sync
     * @throws ChangeSourceException if the temporary file cannot be created
     */
    public Session open() throws ChangeSourceException {
        return new Session();
    }

    /**
     * One sync in progress, holding the temporary file open in a SQLite transaction.
     * {@link #close()} before completion discards everything.
     */
    public final class Session implements AutoCloseable {

        private final Path temp = tempFile(replicaFile);
        private Connection lite;
        private InitialSyncApplier applier;
        private String replicaVersion;
        private long changes;
        private SubscriptionState result;

        private Session() throws ChangeSourceException {
            try {
                Files.deleteIfExists(temp);
                lite = open(temp);
                try (Statement st = lite.createStatement()) {
                    // Upstream's unsafe mode for initial sync: nothing is durable until the rename,
                    // and an interrupted sync is redone from scratch anyway.
                    st.execute("PRAGMA locking_mode = EXCLUSIVE");
                    st.execute("PRAGMA journal_mode = OFF");
                    st.execute("PRAGMA synchronous = OFF");
                    st.execute("BEGIN EXCLUSIVE");
                }
                ReplicaLayout.createVersionHistoryTable(lite);
            } catch (SQLException | IOException e) {
                discard(e);
                throw new ChangeSourceException("initial sync from " + sourceName + ": cannot create " + temp + ": "
                        + e.getMessage(), e);
            }
        }

        /**
         * Takes the next message of the snapshot.
         *
         * @param message the message
         * @return the replica's state once the commit has been applied, validated and the file moved
         *     into place; empty before
         * @throws AutoResetException on {@code reset-required}; the session is discarded
         * @throws ChangeSourceAbortedException if the committed snapshot lacks a required table or
         *     column; the session is discarded
         * @throws ChangeSourceException on any other failure; the session is discarded
         * @throws IllegalStateException if the session is already complete or discarded
         */
        public Optional<SubscriptionState> accept(ChangeStreamMessage message) throws ChangeSourceException {
            if (result != null || lite == null) {
                throw new IllegalStateException("initial sync session is " + (result != null ? "complete" : "discarded"));
            }
            try {
                if (message instanceof StatusMessage) {
                    return Optional.empty();
                }
                if (message instanceof ControlMessage control) {
                    String msg = control.control().message();
                    throw new AutoResetException(msg != null ? msg : "auto-reset signaled by change source");
                }
                if (message instanceof RollbackMessage) {
                    throw new ChangeSourceException("initial sync from " + sourceName
                            + ": unexpected message during initial-sync: " + CODEC.encode(message));
                }
                if (message instanceof BeginMessage begin && replicaVersion == null) {
                    replicaVersion = begin.commitWatermark();
                    LOG.info("initial sync of shard {}_{} from {} at replicaVersion {}", appId, shardNum, sourceName,
                            replicaVersion);
                    ReplicaLayout.initReplicationState(lite, publications, replicaVersion, CODEC.encodeValue(serverContext));
                    applier = new InitialSyncApplier(lite, CODEC);
                }
                if (applier == null) {
                    // Nothing has begun: commit or data without begin.
                    throw new ChangeSourceException("initial sync from " + sourceName
                            + ": Received message outside of transaction: " + message.type());
                }
                if (!applier.apply((ChangeStreamData) message)) {
                    if (++changes % 10_000 == 0) {
                        LOG.info("initial sync from {}: applied {} changes", sourceName, changes);
                    }
                    return Optional.empty();
                }
                validate(applier.zqlSpecs());
                ReplicaLayout.writeVersionHistory(lite);
                try (Statement st = lite.createStatement()) {
                    st.execute("COMMIT");
                    st.execute("ANALYZE main");
                }
                applier.close();
                lite.close();
                lite = null;
                for (String suffix : new String[] {"-wal", "-shm", "-journal"}) {
                    Files.deleteIfExists(replicaFile.resolveSibling(replicaFile.getFileName() + suffix));
                }
                Files.move(temp, replicaFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                LOG.info("finished initial-sync of {} changes from {} at replicaVersion {}", changes, sourceName,
                        replicaVersion);
                result = new SubscriptionState(replicaVersion, publications, replicaVersion);
                return Optional.of(result);
            } catch (ChangeSourceException e) {
                discard(e);
                throw e;
            } catch (ChangeProcessingException | SQLException | IOException | RuntimeException e) {
                discard(e);
                throw new ChangeSourceException("initial sync from " + sourceName + " failed: " + e.getMessage(), e);
            } catch (InterruptedException e) {
                // Not reachable in initial-sync mode (no lock waits), but keep the interrupt.
                Thread.currentThread().interrupt();
                discard(e);
                throw new ChangeSourceException("initial sync from " + sourceName + " interrupted", e);
            }
        }

        /** The snapshot's replica version once its begin arrived; empty before. */
        public Optional<String> replicaVersion() {
            return Optional.ofNullable(replicaVersion);
        }

        /** Abandons an unfinished sync: its temporary file is deleted. Idempotent. */
        @Override
        public void close() {
            if (result == null && lite != null) {
                LOG.warn("initial sync from {} abandoned before its commit; discarding {}", sourceName, temp);
                discard(null);
            }
        }

        private void validate(Map<String, Map<String, ZqlType>> tables) throws ChangeSourceAbortedException {
            for (Map.Entry<String, Map<String, ZqlType>> req : requiredTables(appId, shardNum).entrySet()) {
                String name = req.getKey();
                Map<String, ZqlType> table = tables.get(name);
                if (table == null) {
                    // Upstream's text, including the missing space after the parenthesis.
                    throw new ChangeSourceAbortedException("Upstream is missing the \"" + name + "\" table. (Found "
                            + String.join(",", tables.keySet()) + ")Please ensure that each table has a unique index"
                            + " over one or more non-null columns.");
                }
                for (Map.Entry<String, ZqlType> col : req.getValue().entrySet()) {
                    ZqlType found = table.get(col.getKey());
                    // Upstream interpolates the table's spec object here ("[object Object]"); the
                    // table's name is what was meant, and is what this says.
                    if (found == null) {
                        throw new ChangeSourceAbortedException("Upstream \"" + name + "\" table is missing the \""
                                + col.getKey() + "\" column");
                    }
                    if (found != col.getValue()) {
                        throw new ChangeSourceAbortedException("Upstream \"" + name + "." + col.getKey()
                                + "\" column is a " + zqlName(found) + " type but must be a " + zqlName(col.getValue())
                                + " type.");
                    }
                }
            }
        }

        private void discard(Exception cause) {
            try {
                if (applier != null) {
                    applier.close();
                }
                if (lite != null) {
                    lite.close(); // an open transaction is rolled back with the connection
                }
            } catch (SQLException e) {
                if (cause != null) {
                    cause.addSuppressed(e);
                } else {
                    LOG.warn("initial sync from {}: error closing {}: {}", sourceName, temp, e.toString());
                }
            } finally {
                lite = null;
                applier = null;
            }
            try {
                Files.deleteIfExists(temp);
            } catch (IOException e) {
                if (cause != null) {
                    cause.addSuppressed(e);
                } else {
                    LOG.warn("initial sync from {}: cannot delete {}: {}", sourceName, temp, e.toString());
                }
            }
        }
    }

    private static String zqlName(ZqlType t) {
        return t.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Opens sqlite-jdbc directly: DriverManager does not see drivers of other OSGi bundles. */
    private static Connection open(Path file) throws SQLException {
        Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + file.toAbsolutePath(), new Properties());
        if (c == null) {
            throw new SQLException("sqlite-jdbc did not accept " + file);
        }
        return c;
    }
}

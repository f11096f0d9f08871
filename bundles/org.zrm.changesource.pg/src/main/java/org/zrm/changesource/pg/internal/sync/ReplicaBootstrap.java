package org.zrm.changesource.pg.internal.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.setup.UnsupportedTableSchemaException;
import org.zrm.replica.ReplicaLayout;
import org.zrm.replica.ReplicaState;
import org.zrm.replica.ReplicaStateReader;

/**
 * The Postgres part of {@code ChangeSource.initialize(resetReplica)} (upstream
 * {@code initializePostgresChangeSource} without the streaming object): runs initial sync when the
 * replica file is missing, incomplete or to be reset, reads its subscription state, and verifies
 * upstream ({@link UpstreamVerifier}).
 *
 * <p>Error mapping: configuration problems and invalid tables → {@link ChangeSourceAbortedException}
 * (retrying cannot help); lineage problems → {@link AutoResetException}; connection and other SQL
 * errors → {@link ChangeSourceException} (retryable).
 */
public final class ReplicaBootstrap {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaBootstrap.class);

    /** What {@link #initialize} found or created. */
    public record Result(SubscriptionState subscriptionState, UpstreamReplica upstreamReplica,
            Optional<InitialSyncResult> initialSync) {}

    private final ShardConfig shard;
    private final PgConnector connector;
    private final Path replicaFile;
    private final InitialSyncOptions options;
    private final Map<String, Object> serverContext;
    private final AtomicReference<SyncProgress> currentSync = new AtomicReference<>();

    public ReplicaBootstrap(ShardConfig shard, PgConnector connector, Path replicaFile, InitialSyncOptions options,
            Map<String, Object> serverContext) {
        this.shard = shard;
        this.connector = connector;
        this.replicaFile = replicaFile;
        this.options = options;
        this.serverContext = Map.copyOf(serverContext);
    }

    /** Progress of the running or last initial sync, for {@code /status}; empty if none ran. */
    public Optional<SyncProgress.Snapshot> syncProgress() {
        return Optional.ofNullable(currentSync.get()).map(SyncProgress::snapshot);
    }

    /**
     * @param resetReplica discard the local replica and re-sync
     */
    public Result initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        try {
            if (resetReplica) {
                LOG.info("replica={}: resetting replica as requested", replicaFile);
                deleteReplica();
            }
            Optional<InitialSyncResult> synced = Optional.empty();
            ReplicaState state = readState();
            if (state == null) {
                deleteReplica();
                InitialSync sync = new InitialSync(shard, connector, options, serverContext);
                currentSync.set(sync.progress());
                synced = Optional.of(sync.run(replicaFile));
                state = readState();
                if (state == null) {
                    throw new ChangeSourceException("replica " + replicaFile + " unreadable right after initial sync");
                }
            }
            try (Connection conn = connector.connect("zero-change-source-init")) {
                SubscriptionState subscription = new SubscriptionState(state.replicaVersion(), state.publications(),
                        state.stateVersion());
                UpstreamReplica upstream = UpstreamVerifier.checkAndUpdateUpstream(conn, shard, subscription,
                        state.initialSyncContext());
                return new Result(subscription, upstream, synced);
            }
        } catch (AutoResetException e) {
            throw e;
        } catch (UnsupportedTableSchemaException | IllegalArgumentException | InitialSync.UpstreamConfigException e) {
            throw new ChangeSourceAbortedException(e.getMessage(), e);
        } catch (SQLException | IOException e) {
            throw new ChangeSourceException(e.getMessage(), e);
        }
    }

    /**
     * The state of the replica file, or {@code null} if it is missing or is not a completed
     * replica at schema version {@value org.zrm.replica.ReplicaLayout#SCHEMA_VERSION}.
     *
     * @throws AutoResetException if the file exists but is corrupt
     */
    private ReplicaState readState() throws AutoResetException {
        if (!Files.isRegularFile(replicaFile)) {
            return null;
        }
        try (Connection lite = InitialSync.DriverManagerless.open(replicaFile)) {
            ReplicaState s = ReplicaStateReader.read(lite).orElse(null);
            if (s != null && s.schemaVersion() != ReplicaLayout.SCHEMA_VERSION) {
                // Older layouts would need the replica migrations (v4..v13) of the replicator.
                throw new AutoResetException("replica " + replicaFile + " is at schema v" + s.schemaVersion()
                        + ", expected v" + ReplicaLayout.SCHEMA_VERSION);
            }
            return s;
        } catch (SQLException e) {
            throw new AutoResetException("replica " + replicaFile + " is unreadable: " + e.getMessage(), e);
        }
    }

    private void deleteReplica() throws IOException {
        for (String suffix : new String[] {"", "-wal", "-shm", "-wal2", "-journal"}) {
            Files.deleteIfExists(replicaFile.resolveSibling(replicaFile.getFileName() + suffix));
        }
    }
}

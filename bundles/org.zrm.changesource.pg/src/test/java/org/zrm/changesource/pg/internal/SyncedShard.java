package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.CODEC;
import static org.zrm.changesource.pg.internal.SourceFixture.SHARD;
import static org.zrm.changesource.pg.internal.SourceFixture.exec;
import static org.zrm.changesource.pg.internal.SourceFixture.takeUntil;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changesource.pg.internal.replication.CatalogColumnParsers;
import org.zrm.changesource.pg.internal.replication.ColumnParsers;
import org.zrm.changesource.pg.internal.replication.ReplicationStream;
import org.zrm.changesource.pg.internal.stream.ChangeMaker;
import org.zrm.changesource.pg.internal.stream.MissingEventTriggerSupport;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.changesource.pg.internal.sync.InitialSyncOptions;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.testing.PgDatabase;
import org.zrm.watermark.Watermarks;

/**
 * A fresh upstream database with a shard initialised by the real setup and initial-sync code (as
 * {@code initializePostgresChangeSource} in upstream's {@code change-source.pg.test.ts}), and the
 * change source streaming it. Closing stops the source, drops the database and, if the shard was
 * set up by a role of its own, that role.
 */
final class SyncedShard implements AutoCloseable {

    static final Duration T = Duration.ofSeconds(20);

    final PgDatabase db;
    final PgChangeSource source;
    final SubscriptionState state;
    private final PgSourceSettings settings;
    private final String role;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    private SyncedShard(PgDatabase db, PgSourceSettings settings, PgChangeSource source, SubscriptionState state,
            String role) {
        this.db = db;
        this.settings = settings;
        this.source = source;
        this.state = state;
        this.role = role;
    }

    /**
     * @param schemaSql creates the upstream tables and publications (run as the superuser)
     * @param publications the shard's publications
     * @param asRole set up and stream as this role, created with {@code LOGIN REPLICATION
     *     NOSUPERUSER} and the privileges of the superuser's objects (upstream's "non-superuser"
     *     test setup); {@code null} for the superuser
     */
    static SyncedShard start(PgCluster cluster, Path dir, String schemaSql, List<String> publications, String asRole)
            throws Exception {
        return startWith(cluster, dir, schemaSql, publications, asRole, org.zrm.changesource.pg.internal.setup.TableValidator.strict(),
                uri -> PgChangeSource.unavailableBackfills());
    }

    /** {@link #start(PgCluster, Path, String, List, String)} with the source's backfill snapshot reader. */
    static SyncedShard start(PgCluster cluster, Path dir, String schemaSql, List<String> publications, String asRole,
            org.zrm.changesource.pg.internal.backfill.BackfillStreamer backfills) throws Exception {
        return startWith(cluster, dir, schemaSql, publications, asRole, org.zrm.changesource.pg.internal.setup.TableValidator.strict(),
                uri -> (slot, pubs) -> backfills);
    }

    /** {@link #start(PgCluster, Path, String, List, String)} with the real Postgres snapshot reader. */
    static SyncedShard startWithSnapshotBackfills(PgCluster cluster, Path dir, String schemaSql, List<String> publications,
            boolean textCopy) throws Exception {
        return startWithSnapshotBackfills(cluster, dir, schemaSql, publications, textCopy,
                java.util.function.UnaryOperator.identity());
    }

    /**
     * {@link #startWithSnapshotBackfills(PgCluster, Path, String, List, boolean)} with each
     * stream's real reader passed through {@code wrap} (to inject faults into real runs).
     */
    static SyncedShard startWithSnapshotBackfills(PgCluster cluster, Path dir, String schemaSql, List<String> publications,
            boolean textCopy, java.util.function.UnaryOperator<org.zrm.changesource.pg.internal.backfill.BackfillStreamer> wrap)
            throws Exception {
        return startWithSnapshotBackfills(cluster, dir, schemaSql, publications, textCopy, wrap,
                org.zrm.changesource.pg.internal.setup.TableValidator.strict());
    }

    /** The same with the source's table {@code validator} ({@code tables.requireRowKey}). */
    static SyncedShard startWithSnapshotBackfills(PgCluster cluster, Path dir, String schemaSql, List<String> publications,
            boolean textCopy, java.util.function.UnaryOperator<org.zrm.changesource.pg.internal.backfill.BackfillStreamer> wrap,
            org.zrm.changesource.pg.internal.setup.TableValidator validator) throws Exception {
        return startWith(cluster, dir, schemaSql, publications, null, validator, uri -> {
            org.zrm.changesource.pg.internal.backfill.BackfillStreamer.Factory real = PgChangeSource.snapshotBackfills(
                    new UpstreamDb(uri), org.zrm.changesource.pg.internal.backfill.BackfillStreamOptions.defaults()
                            .withTextCopy(textCopy));
            return new org.zrm.changesource.pg.internal.backfill.BackfillStreamer.Factory() {
                @Override
                public org.zrm.changesource.pg.internal.backfill.BackfillStreamer forStream(String slot, List<String> pubs) {
                    return wrap.apply(real.forStream(slot, pubs));
                }

                @Override
                public List<String> dropOrphans(String slot) throws org.zrm.changesource.ChangeSourceException {
                    return real.dropOrphans(slot);
                }
            };
        });
    }

    private static SyncedShard startWith(PgCluster cluster, Path dir, String schemaSql, List<String> publications,
            String asRole, org.zrm.changesource.pg.internal.setup.TableValidator validator,
            java.util.function.Function<String, org.zrm.changesource.pg.internal.backfill.BackfillStreamer.Factory>
                    backfills) throws Exception {
        PgDatabase db = PgDatabase.create(cluster, "synced");
        PgChangeSource source = null;
        try {
            try (Connection c = db.connect()) {
                exec(c, schemaSql);
                if (asRole != null) {
                    // Roles are cluster-wide; a leftover of an aborted run is replaced.
                    exec(c, "DROP ROLE IF EXISTS " + asRole,
                            "CREATE ROLE " + asRole + " LOGIN REPLICATION NOSUPERUSER IN ROLE " + PgCluster.SUPERUSER);
                }
            }
            String uri = asRole == null ? db.uri() : db.uri().replace(PgCluster.SUPERUSER + "@", asRole + "@");
            PgSourceSettings settings = PgSourceSettings.defaults(uri, SHARD, publications).withLagReportIntervalMs(0)
                    .withReplicaFile(dir.resolve(db.name() + ".db").toString());
            source = new PgChangeSource(settings, ReplicaInitializers.forSettings(settings, InitialSyncOptions.defaults()),
                    validator, backfills.apply(uri));
            SubscriptionState state = source.initialize(false);
            return new SyncedShard(db, settings, source, state, asRole);
        } catch (Exception | Error e) {
            if (source != null) {
                source.stop();
            }
            db.close();
            throw e;
        }
    }

    Connection connect() throws SQLException {
        return db.connect();
    }

    /**
     * Turns the shard into one without event triggers, as a provider that refuses them leaves it
     * (upstream's {@code withoutTriggers}).
     */
    void dropEventTriggers() throws SQLException {
        try (Connection c = connect()) {
            exec(c, "UPDATE " + SHARD.schema() + ".\"shardConfig\" SET \"ddlDetection\" = false",
                    "DROP EVENT TRIGGER IF EXISTS " + SHARD.appId() + "_ddl_start_" + SHARD.shardNum(),
                    "DROP EVENT TRIGGER IF EXISTS " + SHARD.appId() + "_ddl_end_" + SHARD.shardNum());
        }
    }

    /** Starts streaming after the replica's watermark. */
    ChangeStream stream() throws Exception {
        return source.startStream(state.watermark(), List.of());
    }

    /**
     * Streams the replica's slot through {@code maker} instead of the source's own change maker:
     * for tests that observe what reaches the change maker's handlers. Wired as
     * {@link PgChangeSource#openStream} wires its streams.
     */
    PgChangeStream streamThrough(ChangeMaker maker) throws Exception {
        String slot;
        ColumnParsers parsers;
        try (Connection c = connect()) {
            slot = SourceFixture.queryString(c, "SELECT slot FROM " + SHARD.schema() + ".replicas");
            parsers = new CatalogColumnParsers(PgTypeCatalog.load(c), () -> {
                throw new IllegalStateException("no type reload in this test");
            });
        }
        PgChangeStream stream = new PgChangeStream(slot, state.watermark(), maker, null, settings.bufferMessages(),
                settings.bufferBytes(), null);
        ReplicationStream rs = ReplicationStream.start(db.connectForReplication(), settings.streamSettings(slot,
                state.publications()), Watermarks.restartLsn(state.watermark()).asLong(), parsers, stream, scheduler);
        stream.attach(rs);
        return stream;
    }

    /** Takes the next message that is not a status; fails after {@link #T}. */
    static ChangeStreamMessage next(ChangeStream stream) throws Exception {
        List<ChangeStreamMessage> got = takeUntil(stream, m -> !(m instanceof StatusMessage), T);
        return got.get(got.size() - 1);
    }

    /**
     * Asserts what upstream's "halt on schema change when ddlDetection = false" expects of the
     * transaction with the schema change: its begin, then rollback and a reset-required whose
     * reason is {@link MissingEventTriggerSupport}.
     *
     * @return the reason of the reset-required
     */
    static String assertHaltsForMissingEventTriggers(ChangeStream stream) throws Exception {
        assertInstanceOf(BeginMessage.class, next(stream));
        ChangeStreamMessage rollback = next(stream);
        assertInstanceOf(RollbackMessage.class, rollback, CODEC.encode(rollback));
        ChangeStreamMessage control = next(stream);
        assertInstanceOf(ControlMessage.class, control, CODEC.encode(control));
        ControlMessage reset = (ControlMessage) control;
        String json = CODEC.encode(control);
        assertTrue(json.startsWith("[\"control\",{\"tag\":\"reset-required\","), json);
        assertTrue(json.contains("\"message\":\"Unable to continue replication from LSN "), json);
        assertTrue(json.contains("\"error\":\"Unable to continue replication from LSN "), json);
        String reason = String.valueOf(reset.control().errorDetails().get("reason"));
        assertTrue(reason.startsWith("MissingEventTriggerSupport: "), reason);
        assertTrue(reason.endsWith(MissingEventTriggerSupport.SUFFIX), reason);
        return reason;
    }

    @Override
    public void close() throws SQLException {
        source.stop();
        scheduler.shutdownNow();
        try {
            if (role != null) {
                try (Connection c = connect()) {
                    exec(c, "DROP OWNED BY " + role, "DROP ROLE " + role);
                }
            }
        } finally {
            db.close();
        }
    }
}

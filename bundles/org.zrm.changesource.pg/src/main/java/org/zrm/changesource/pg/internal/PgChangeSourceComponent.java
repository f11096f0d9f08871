package org.zrm.changesource.pg.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changesource.pg.internal.backfill.BackfillStreamOptions;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.sync.InitialSyncOptions;
import org.zrm.config.NodeIdentity;
import org.zrm.changesource.pg.internal.metrics.SlotSampler;
import org.zrm.changesource.pg.internal.metrics.SourceMetrics;
import org.zrm.operator.OperationException;
import org.zrm.operator.SlotOperations;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;
import org.zrm.protocol.BackfillRequest;

/**
 * Registers the Postgres {@link ChangeSource} ({@code zrm.changesource.type=pg}). Activation only
 * validates the configuration; nothing connects to the database until the change streamer calls
 * {@link #initialize(boolean)}.
 */
@Component(service = {ChangeSource.class, StatusContributor.class, MetricsContributor.class, SlotOperations.class},
        configurationPid = {NodeIdentity.PID, "org.zrm.changesource.pg"},
        configurationPolicy = ConfigurationPolicy.REQUIRE, property = ChangeSource.TYPE + "=pg")
public final class PgChangeSourceComponent implements ChangeSource, StatusContributor, MetricsContributor,
        SlotOperations {

    private static final Logger LOG = LoggerFactory.getLogger(PgChangeSourceComponent.class);
    private final PgChangeSource source;     // null when upstream.db is not a Postgres URI
    private final PgSourceSettings settings;
    private final ReplicaInitializer initializer;
    private final SlotSampler slots;
    private final String configError;        // why, or null

    @Activate
    public PgChangeSourceComponent(PgChangeSourceConfig config) {
        PgSourceSettings parsed;
        UpstreamDb upstream;
        try {
            parsed = settings(config);
            upstream = new UpstreamDb(parsed.upstreamUri());
        } catch (IllegalArgumentException e) {
            if (isPostgresAddress(config.upstream_db())) {
                throw e; // a broken Postgres URI or a bad shard: the configuration is wrong for this source
            }
            // The shipped configuration hands ZERO_UPSTREAM_DB to every source; in a runtime that
            // selects another source (custom: a ws:// URL) this one is unusable but must not fail
            // activation and log errors for a source nobody uses. Selected, it stops the streamer
            // with this reason; /status shows it under changesource.pg.
            this.configError = "pg change source not usable: " + e.getMessage();
            this.source = null;
            this.settings = null;
            this.initializer = null;
            this.slots = null;
            LOG.info("{} (this matters only if changeSource.target selects zrm.changesource.type=pg)", configError);
            return;
        }
        this.configError = null;
        this.settings = parsed;
        this.initializer = ReplicaInitializers.forSettings(settings, InitialSyncOptions.defaults()
                .withTableCopyWorkers(config.initialSync_tableCopyWorkers())
                .withTextCopy(config.initialSync_textCopy())
                .withRequireRowKey(config.tables_requireRowKey()));
        // One rule for both: a table initial sync would reject must not enter through the stream.
        TableValidator validator = new TableValidator(config.tables_requireRowKey());
        this.source = new PgChangeSource(settings, initializer, validator, PgChangeSource.snapshotBackfills(upstream,
                BackfillStreamOptions.defaults().withTextCopy(config.initialSync_textCopy())));
        // Started by initialize(): activation connects to nothing. From then on sampling goes on
        // between streams too, when the slot's WAL matters most.
        this.slots = new SlotSampler(() -> source.db().open("zrm-slot-metrics"), settings.shard().slotLikeExpression(),
                settings.shard().legacySlot(), config.slotMetrics_intervalMs(), System::currentTimeMillis,
                "zrm-pg-slot-sampler-" + settings.shard().schema());
        LOG.info("pg change source configured: upstream={} shard={} publications={} replica={}",
                source.db(), settings.shard().schema(), settings.publications(), settings.replicaFile());
    }

    /** Blank, or shaped like a Postgres address: what this source must be able to parse. */
    private static boolean isPostgresAddress(String uri) {
        String u = uri == null ? "" : uri.strip().toLowerCase(java.util.Locale.ROOT);
        return u.isEmpty() || u.startsWith("postgres://") || u.startsWith("postgresql://") || u.startsWith("jdbc:postgresql:");
    }

    static PgSourceSettings settings(PgChangeSourceConfig c) {
        return new PgSourceSettings(c.upstream_db(), new ShardId(c.app_id(), c.shard_num()),
                PgSourceSettings.splitPublications(c.app_publications()), c.replica_file(),
                c.replicationLag_reportIntervalMs(), c.replication_inboundTimeoutMs(), c.replication_keepaliveFraction(),
                c.replication_slotActiveRetries(), c.replication_slotActiveRetryDelayMs(),
                c.replication_maxMessageBytes(), c.replication_bufferMessages(), c.replication_bufferBytes());
    }

    @Deactivate
    void deactivate() {
        if (source != null) {
            slots.close();
            source.stop();
        }
    }

    private PgChangeSource source() throws org.zrm.changesource.ChangeSourceAbortedException {
        if (source == null) {
            // Retrying cannot help until the configuration changes, which re-activates this component.
            throw new org.zrm.changesource.ChangeSourceAbortedException(configError);
        }
        return source;
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        PgChangeSource s = source();
        slots.start();
        return s.initialize(resetReplica);
    }

    @Override
    public OptionalLong startLagReporter() throws ChangeSourceException {
        return source().startLagReporter();
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        return source().startStream(afterWatermark, backfillRequests);
    }

    @Override
    public void stop() {
        if (source != null) {
            source.stop();
        }
    }

    @Override
    public String section() {
        return "changesource.pg";
    }

    @Override
    public Map<String, Object> status() {
        Map<String, Object> status = new LinkedHashMap<>();
        if (source == null) {
            status.put("error", configError);
            return status;
        }
        status.put("upstream", source.db().toString());
        status.put("shard", settings.shard().schema());
        status.put("publications", settings.publications());
        status.put("replicaFile", settings.replicaFile());
        status.put("initialSync", initializer.progress().orElse(null));
        status.put("backfills", source.backfillStatus());
        status.put("streamSharing", source.streamSharing());
        status.putAll(SourceMetrics.status(slots.reading(), source.activity(), System.currentTimeMillis()));
        return status;
    }

    @Override
    public List<String> orphanSlots() throws OperationException {
        if (source == null) {
            throw new OperationException(configError);
        }
        try (java.sql.Connection c = source.db().open("zrm-shell")) {
            return org.zrm.changesource.pg.internal.sync.ReplicationSlots.orphanSlots(c, settings.shard());
        } catch (java.sql.SQLException e) {
            throw new OperationException("cannot list replication slots on " + source.db() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void dropOrphanSlot(String slot) throws OperationException {
        if (source == null) {
            throw new OperationException(configError);
        }
        java.util.Optional<String> refused;
        try (java.sql.Connection c = source.db().open("zrm-shell")) {
            refused = org.zrm.changesource.pg.internal.sync.ReplicationSlots.dropOrphanSlot(c, settings.shard(), slot);
        } catch (java.sql.SQLException e) {
            throw new OperationException("cannot drop replication slot " + slot + ": " + e.getMessage(), e);
        }
        if (refused.isPresent()) {
            throw new OperationException("not dropped: " + refused.get());
        }
    }

    @Override
    public void collect(MetricsSink sink) {
        if (source == null) {
            return;
        }
        SourceMetrics.collect(slots.reading(), source.activity(), System.currentTimeMillis(), sink);
        BackfillMetrics.collect(source.backfillStatus(), sink);
        BackfillMetrics.collectSharing(source.streamSharing(), sink);
    }
}

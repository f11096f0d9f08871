package org.zrm.storer.internal;

import java.time.Duration;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changelog.StorerListener;
import org.zrm.config.NodeIdentity;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;
import org.zrm.storer.internal.queue.StorerQueue;
import org.zrm.storer.internal.queue.StorerQueueSettings;

/**
 * Registers the Postgres {@link ChangeLog} and the {@link StorerFactory} that writes to it (PID
 * {@value #PID}). Activation validates the
 * configuration (a bad value fails activation with a message naming the property) but does not
 * wait for the database: the schema is migrated in the background, and every operation retries
 * that if it has not succeeded yet, so an unreachable database surfaces as a
 * {@link ChangeLogException} to the caller and a log line here, never as a hung activation.
 */
@Component(service = {ChangeLog.class, StorerFactory.class, StatusContributor.class, MetricsContributor.class},
        configurationPid = {NodeIdentity.PID, StorerComponent.PID},
        configurationPolicy = ConfigurationPolicy.REQUIRE, immediate = true,
        property = ChangeLog.KIND + "=postgres")
public final class StorerComponent extends DelegatingChangeLog implements StorerFactory, StatusContributor,
        MetricsContributor {

    static final String PID = "org.zrm.storer";
    private static final Logger LOG = LoggerFactory.getLogger(StorerComponent.class);

    private final PgChangeLog changeLog;
    private final StorerQueueSettings queueSettings;

    @Activate
    public StorerComponent(StorerConfig config) {
        this(new PgChangeLog(settings(config)), queueSettings(config), config.change_sizeSampleIntervalMs());
    }

    StorerComponent(StorerSettings settings, StorerQueueSettings queueSettings) {
        this(new PgChangeLog(settings), queueSettings, 30_000);
    }

    private final Thread initializer;
    private final ChangeLogSizeSampler sizes;

    private StorerComponent(PgChangeLog changeLog, StorerQueueSettings queueSettings, long sizeSampleIntervalMs) {
        super(changeLog);
        this.changeLog = changeLog;
        this.queueSettings = queueSettings;
        this.sizes = new ChangeLogSizeSampler(changeLog, sizeSampleIntervalMs, System::currentTimeMillis,
                "zrm-changelog-size-" + changeLog.schema());
        LOG.info("storer: change log {} on {}; queue {}", changeLog.schema(), changeLog.settings(), queueSettings);
        // Activation must not block on the database; the first use retries if this attempt fails.
        // An owned, named thread (not the common pool) so that deactivation can stop it.
        this.initializer = new Thread(this::initializeInBackground, "zrm-storer-init-" + changeLog.schema());
        initializer.setDaemon(true);
        initializer.start();
        sizes.start();
    }

    @Override
    public String section() {
        return "changelog";
    }

    @Override
    public Map<String, Object> status() {
        return ChangeLogSizeSampler.status(sizes.reading(), System.currentTimeMillis());
    }

    @Override
    public void collect(MetricsSink sink) {
        ChangeLogSizeSampler.collect(sizes.reading(), System.currentTimeMillis(), sink);
    }

    /**
     * Turns the configuration into settings; the seam other code in this bundle (the storer queue)
     * uses to build its own {@link PgChangeLog} from the same PID.
     *
     * @throws IllegalArgumentException naming the bad property
     */
    public static StorerSettings settings(StorerConfig config) {
        String db = config.change_db();
        if (db == null || db.isBlank()) {
            throw new IllegalArgumentException("change.db is not set (ZERO_CHANGE_DB, defaults to ZERO_UPSTREAM_DB)");
        }
        return StorerSettings.of(db, config.app_id(), config.shard_num())
                .withChangeLogBatchSize(config.change_logBatchSize())
                .withMaxConns(config.change_maxConns())
                .withStatementTimeoutMs(config.change_statementTimeoutMs())
                .withInsertMode(StorerSettings.InsertMode.parse(config.change_insertMode()));
    }

    /** Property names of the queue settings, for error messages (the record names its fields). */
    private static final Map<String, String> QUEUE_PROPERTIES = Map.of(
            "backPressureLimitHeapProportion", "changeStreamer.backPressureLimitHeapProportion",
            "backPressureLimitBytes", "change.backPressureLimitBytes",
            "maxQueuedMessages", "change.maxQueuedMessages",
            "maxGroupTransactions", "change.groupCommit.maxTransactions",
            "maxGroupBytes", "change.groupCommit.maxBytes");

    /**
     * Turns the configuration into the storer queue's bounds (back-pressure and group commit).
     *
     * @throws IllegalArgumentException naming the bad property
     */
    public static StorerQueueSettings queueSettings(StorerConfig config) {
        long delayMs = config.change_groupCommit_maxDelayMs();
        long maxDelayMs = StorerQueueSettings.MAX_GROUP_DELAY_LIMIT.toMillis();
        if (delayMs < 0 || delayMs > maxDelayMs) {
            throw new IllegalArgumentException("change.groupCommit.maxDelayMs must be in 0.." + maxDelayMs + ": " + delayMs);
        }
        try {
            return new StorerQueueSettings(config.changeStreamer_backPressureLimitHeapProportion(),
                    config.change_backPressureLimitBytes(), config.change_maxQueuedMessages(),
                    config.change_groupCommit_maxTransactions(), config.change_groupCommit_maxBytes(),
                    Duration.ofMillis(delayMs));
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            int end = message.indexOf(' ');
            String property = end > 0 ? QUEUE_PROPERTIES.get(message.substring(0, end)) : null;
            throw new IllegalArgumentException(property == null ? message : property + message.substring(end), e);
        }
    }

    /** @return the storer queue's bounds configured on this PID */
    public StorerQueueSettings queueSettings() {
        return queueSettings;
    }

    /**
     * Starts a storer queue over this component's change log with the configured bounds, for the
     * change streamer (one per upstream stream; the queue is single-use).
     *
     * @param taskID this node's task id, checked by the change log at commit
     * @param listener receives stored transactions, status echoes and the failure
     * @param catchupHandler serves catch-up requests from pinned snapshots
     */
    @Override
    public Storer start(String taskID, StorerListener listener, CatchupHandler catchupHandler) {
        return new StorerQueue(changeLog, taskID, queueSettings, listener, catchupHandler);
    }

    /** @return the change log this component registers */
    @Override
    public PgChangeLog changeLog() {
        return changeLog;
    }

    private void initializeInBackground() {
        try {
            changeLog.initialize();
        } catch (ChangeLogException e) {
            LOG.error("storer: change database not ready ({}); operations retry on use", e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("storer: initializing change log {} failed", changeLog.schema(), e);
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        initializer.interrupt();
        sizes.close();
        changeLog.close();
        initializer.join(5_000);
        LOG.info("storer: change log {} closed", changeLog.schema());
    }
}

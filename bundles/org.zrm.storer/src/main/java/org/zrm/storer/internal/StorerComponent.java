package org.zrm.storer.internal;

import java.util.concurrent.CompletableFuture;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;

/**
 * Registers the Postgres {@link ChangeLog} (PID {@value #PID}). Activation validates the
 * configuration (a bad value fails activation with a message naming the property) but does not
 * wait for the database: the schema is migrated in the background, and every operation retries
 * that if it has not succeeded yet, so an unreachable database surfaces as a
 * {@link ChangeLogException} to the caller and a log line here, never as a hung activation.
 */
@Component(service = ChangeLog.class, configurationPid = StorerComponent.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE, immediate = true,
        property = ChangeLog.KIND + "=postgres")
@Designate(ocd = StorerConfig.class)
public final class StorerComponent extends DelegatingChangeLog {

    static final String PID = "org.zrm.storer";
    private static final Logger LOG = LoggerFactory.getLogger(StorerComponent.class);

    private final PgChangeLog changeLog;

    @Activate
    public StorerComponent(StorerConfig config) {
        this(settings(config));
    }

    StorerComponent(StorerSettings settings) {
        this(new PgChangeLog(settings));
    }

    private StorerComponent(PgChangeLog changeLog) {
        super(changeLog);
        this.changeLog = changeLog;
        LOG.info("storer: change log {} on {}", changeLog.schema(), changeLog.settings());
        CompletableFuture.runAsync(this::initializeInBackground);
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
                .withStatementTimeoutMs(config.change_statementTimeoutMs());
    }

    /** @return the change log this component registers */
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
    void deactivate() {
        changeLog.close();
        LOG.info("storer: change log {} closed", changeLog.schema());
    }
}

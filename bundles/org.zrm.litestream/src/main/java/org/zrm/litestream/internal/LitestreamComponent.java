package org.zrm.litestream.internal;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.ReplicaRestorer;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * The litestream process of PID {@value #PID}: {@code litestream replicate} for the replica file
 * while {@code litestream.backupURL} is set ({@link ReplicateSupervisor}), status section
 * {@code litestream} and its metrics.
 *
 * <p>It lives in a bundle of its own, not in a backup monitor's: the process follows the backup
 * URL, whichever monitor ({@code litestream3} or {@code vfs}) judges the backup, so swapping or
 * updating a monitor never interrupts the backup, and the process can be updated alone.
 *
 * <p>The configuration is optional: a configuration folder from before this bundle existed has no
 * {@code org.zrm.litestream.cfg}, and the defaults (no backup URL) then mean no litestream, rather
 * than an unsatisfied component that would make the runtime unhealthy.
 *
 * <p>An invalid configuration does not fail the component: it is logged once at ERROR, shown in
 * the section ({@code state: INVALID_CONFIG}, {@code error}), makes the runtime unhealthy, and
 * nothing runs until the configuration is fixed (applied live through {@code @Modified}).
 */
@Component(service = {StatusContributor.class, MetricsContributor.class, ReplicaRestorer.class},
        configurationPid = LitestreamComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = LitestreamConfig.class)
public final class LitestreamComponent implements StatusContributor, MetricsContributor, ReplicaRestorer {

    static final String PID = "org.zrm.litestream";
    private static final Logger LOG = LoggerFactory.getLogger(LitestreamComponent.class);

    private final ReplicateSupervisor supervisor;
    private final RestoreProgress restore = new RestoreProgress();
    private final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
    private volatile LitestreamSettings settings;

    @Activate
    public LitestreamComponent(LitestreamConfig config) {
        this.supervisor = new ReplicateSupervisor(System.getenv(), Clock.systemUTC());
        apply(config);
        supervisor.start();
    }

    @Modified
    void modified(LitestreamConfig config) {
        apply(config);
    }

    private void apply(LitestreamConfig config) {
        try {
            LitestreamSettings s = LitestreamSettings.of(config);
            settings = s;
            if (!s.enabled()) {
                LOG.info("litestream: no backup URL (ZERO_LITESTREAM_BACKUP_URL); litestream does not run");
            }
            supervisor.apply(s);
        } catch (IllegalArgumentException e) {
            settings = null;
            LOG.error("litestream: invalid configuration of {}: {}; litestream does not run until it is fixed", PID,
                    e.getMessage());
            supervisor.invalid("invalid configuration of " + PID + ": " + e.getMessage());
        }
    }

    @Deactivate
    void deactivate() {
        closed.countDown(); // cancels a restore between attempts
        supervisor.close();
    }

    /** Runs on the change streamer's start-up thread, never on a DS callback. */
    @Override
    public boolean restoreIfMissing(String replicaVersion, String minWatermark) throws InterruptedException {
        LitestreamSettings s = settings;
        if (s == null || !s.enabled()) {
            LOG.warn("litestream: no restore: {}", s == null ? "the configuration is invalid" : "no backup URL");
            return false;
        }
        return restore.run(new LitestreamRestore(s, System.getenv(), LitestreamRestore.MAX_ATTEMPTS,
                LitestreamRestore.RETRY_INTERVAL, closed), new LitestreamRestore.Constraints(replicaVersion,
                minWatermark));
    }

    @Override
    public String section() {
        return "litestream";
    }

    @Override
    public Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>(supervisor.status());
        m.put("restore", restore.status());
        LitestreamSettings s = settings;
        if (s != null && s.enabled()) {
            m.put("executable", s.executable().toString());
            m.put("configPath", s.configPath().toString());
            m.put("generatedConfig", s.generatedConfig());
            m.put("replicaFile", s.replicaFile().toString());
            m.put("port", s.port());
        }
        return m;
    }

    @Override
    public boolean healthy() {
        return supervisor.healthy();
    }

    @Override
    public void collect(MetricsSink sink) {
        supervisor.collect(sink);
    }
}

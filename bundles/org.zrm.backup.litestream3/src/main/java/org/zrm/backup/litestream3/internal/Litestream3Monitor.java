package org.zrm.backup.litestream3.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.BackupMonitorContext;
import org.zrm.secret.Secrets;

/**
 * The litestream v0.3 backup monitor (Zero's {@code Litestream3BackupMonitor}): every check
 * interval it reads the backed-up watermarks from litestream's {@code litestream_replica_progress}
 * gauge, and once one has aged by the cleanup delay and an upload at least that recent is really
 * listed at the destination, it schedules cleanup up to it. A backup that stays behind its
 * claimed progress for the wedge grace period is reported as fatal.
 *
 * <p>Lifecycle only; the algorithm is in {@link MonitorActivation}, one per {@link #start}.
 */
final class Litestream3Monitor implements BackupMonitor {

    private static final Logger LOG = LoggerFactory.getLogger(Litestream3Monitor.class);

    /** How long {@link #stop()} waits for a running check. */
    static final Duration STOP_WAIT = Duration.ofSeconds(10);
    static final String THREAD_NAME = "zrm-backup-litestream3";

    private final Litestream3Settings settings;
    private final BackupStateVerifier verifier;
    private final Clock clock;
    private final Object lifecycle = new Object();

    // Written under lifecycle; read without it by status() and check().
    private volatile MonitorActivation current;
    // The latest activation, kept after stop so /status still shows how it ended (e.g. wedged).
    private volatile MonitorActivation latest;
    private ScheduledThreadPoolExecutor executor;

    /**
     * @param settings validated settings
     * @param verifier lists the real destination (production: {@link LitestreamCli})
     * @param clock the time against which claimed backup times and the cleanup delay are compared
     */
    Litestream3Monitor(Litestream3Settings settings, BackupStateVerifier verifier, Clock clock) {
        this.settings = settings;
        this.verifier = verifier;
        this.clock = clock;
    }

    @Override
    public String strategy() {
        return STRATEGY_LITESTREAM3;
    }

    @Override
    public Optional<String> backupURL() {
        // Unmasked: restoring nodes need the real location; it is masked only in logs and status.
        return settings.backupURL().isEmpty() ? Optional.empty() : Optional.of(settings.backupURL());
    }

    @Override
    public void start(BackupMonitorContext context) {
        synchronized (lifecycle) {
            if (current != null) {
                throw new IllegalStateException("the litestream3 backup monitor is already started");
            }
            if (settings.backupURL().isEmpty()) {
                throw new IllegalStateException("the litestream3 backup monitor is not configured:"
                        + " litestream.backupURL (ZERO_LITESTREAM_BACKUP_URL) is empty");
            }
            ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, THREAD_NAME);
                t.setDaemon(true);
                return t;
            });
            ex.setRemoveOnCancelPolicy(true);
            MonitorActivation activation = new MonitorActivation(settings, context,
                    new MetricsFetcher(settings.metricsURL(), settings.metricsTimeout(), settings.maxMetricsBytes()),
                    verifier, new ReplicaLagReader(settings.replicaFile()), clock, ex::shutdown);
            long interval = settings.checkInterval().toMillis();
            // Fixed delay: a slow check (a fetch plus listings near their timeouts) pushes the next
            // one back instead of overlapping it, which upstream's setInterval allowed.
            ex.scheduleWithFixedDelay(() -> runCheck(activation), interval, interval, TimeUnit.MILLISECONDS);
            executor = ex;
            current = activation;
            latest = activation;
            LOG.info("litestream3 backup monitor: monitoring backups of {} at {} every {} ms with {} ms cleanup delay",
                    Secrets.maskUrls(settings.backupURL()), Secrets.maskUrls(settings.metricsURL().toString()),
                    interval, context.cleanupDelay().toMillis());
        }
    }

    private static void runCheck(MonitorActivation activation) {
        try {
            activation.check();
        } catch (Throwable t) {
            // An escaped throwable would silently cancel every later check.
            LOG.error("litestream3 backup monitor: check failed; retrying at the next interval", t);
        }
    }

    @Override
    public void stop() {
        synchronized (lifecycle) {
            MonitorActivation activation = current;
            if (activation == null) {
                return;
            }
            current = null;
            ScheduledThreadPoolExecutor ex = executor;
            executor = null;
            try {
                activation.stop();
            } catch (RuntimeException e) {
                LOG.warn("litestream3 backup monitor: aborting in-flight I/O failed", e);
            }
            ex.shutdownNow(); // also interrupts a scheduled check blocked in I/O
            try {
                if (!activation.awaitIdle(STOP_WAIT) || !ex.awaitTermination(1, TimeUnit.SECONDS)) {
                    LOG.warn("litestream3 backup monitor: a check is still running {} ms after stop; the context"
                            + " refuses anything it reports", STOP_WAIT.toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            LOG.info("litestream3 backup monitor: stopped");
        }
    }

    /** Runs one check now on the calling thread (tests; the schedule does the same). */
    void check() {
        MonitorActivation activation = current;
        if (activation != null) {
            activation.check();
        }
    }

    @Override
    public Map<String, Object> status() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("backupURL", Secrets.maskUrls(settings.backupURL()));
        s.put("metricsURL", Secrets.maskUrls(settings.metricsURL().toString()));
        s.put("running", current != null);
        MonitorActivation activation = latest;
        if (activation == null) {
            return s;
        }
        MonitorActivation.Status st = activation.status();
        s.put("lastScheduledWatermark", st.lastWatermark());
        s.put("pendingWatermarks", st.pendingWatermarks());
        s.put("newestPendingWatermark", st.newestPendingWatermark());
        s.put("latestBackupTime", MonitorActivation.iso(st.latestBackupTime()));
        s.put("lastVerifiedUploadTime", MonitorActivation.iso(st.lastVerifiedUploadTime()));
        s.put("staleSince", MonitorActivation.iso(st.staleSince()));
        s.put("wedged", st.wedged());
        s.put("retired", st.retired());
        s.put("lastMetricsError", st.lastMetricsError() == null ? null : Secrets.maskUrls(st.lastMetricsError()));
        s.put("lastVerificationError",
                st.lastVerificationError() == null ? null : Secrets.maskUrls(st.lastVerificationError()));
        return s;
    }
}

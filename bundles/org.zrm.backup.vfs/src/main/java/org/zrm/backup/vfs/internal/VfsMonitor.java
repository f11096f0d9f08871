package org.zrm.backup.vfs.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.BackupMonitorContext;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;
import org.zrm.secret.Secrets;

/**
 * The Litestream v0.5 backup monitor (upstream {@code VfsBackupMonitor}): reads Zero's replication
 * state from the backup itself through the Litestream VFS, so what it sees has been backed up by
 * definition, and schedules cleanup up to a watermark once it has been visible in the backup for
 * the cleanup delay.
 *
 * <p>Each check ({@link #check()}, every probe interval, never overlapping):
 * <ol>
 *   <li>reads the watermark; on failure counts {@code purge_blocked{reason="vfs-probe-failed"}},
 *       warns and schedules nothing (unlike litestream3, a failed probe blocks scheduling);</li>
 *   <li>records the read as the latest, whatever its value, and its first observation if it is
 *       newer than the last scheduled watermark; reports the backup lag
 *       {@code max(0, observedAtMs - writeTimeMs)} unless {@code writeTimeMs} is null;</li>
 *   <li>unless a snapshot reservation is open, schedules the largest watermark that is at most the
 *       latest read and was first observed at least the cleanup delay ago, and forgets every
 *       watermark up to it.</li>
 * </ol>
 * The transaction id and VFS poll lag are only logged: a VFS that stopped polling returns stale
 * but true data, which only delays purging. The backup's {@code replicaVersion} is not checked
 * (as upstream): the context does not carry the expected one.
 *
 * <p>Each activation gets a fresh {@link WatermarkSource} (a reader child process) and no
 * observations; {@link #stop()} closes that source exactly once, which also aborts a read in
 * flight.
 */
public final class VfsMonitor implements BackupMonitor {

    private static final Logger LOG = LoggerFactory.getLogger(VfsMonitor.class);

    /** How long {@link #stop()} waits for a running check. */
    static final Duration STOP_WAIT = Duration.ofSeconds(10);
    static final String PROBE_FAILED = "vfs-probe-failed";

    private final String backupURL;
    private final Supplier<WatermarkSource> sources;
    private final Duration probeInterval;
    private final Clock clock;
    private final Object lifecycle = new Object();
    private volatile Activation activation; // written under lifecycle
    private volatile Map<String, Object> status;

    /** One start..stop: its context, source, observations and thread. */
    private static final class Activation {
        final BackupMonitorContext context;
        final WatermarkSource source;
        final ScheduledExecutorService executor;
        final ObservedWatermarks observed = new ObservedWatermarks();
        volatile boolean stopping;
        int probeFailures; // check thread only
        Instant failingSince;
        String lastProbeError;

        Activation(BackupMonitorContext context, WatermarkSource source, ScheduledExecutorService executor) {
            this.context = context;
            this.source = source;
            this.executor = executor;
        }
    }

    /**
     * @param backupURL {@code litestream.backupURL}; empty means unconfigured (the coordinator then
     *     refuses to start this monitor)
     * @param sources creates the watermark source of each activation
     * @param probeInterval {@code litestream.vfsProbeIntervalMs}, the time between checks
     * @param clock the time for ageing observations
     */
    public VfsMonitor(String backupURL, Supplier<WatermarkSource> sources, Duration probeInterval, Clock clock) {
        this.backupURL = backupURL == null ? "" : backupURL.trim();
        this.sources = sources;
        this.probeInterval = probeInterval;
        this.clock = clock;
        this.status = describe(null);
    }

    @Override
    public String strategy() {
        return STRATEGY_VFS;
    }

    @Override
    public Optional<String> backupURL() {
        return backupURL.isEmpty() ? Optional.empty() : Optional.of(backupURL);
    }

    @Override
    public void start(BackupMonitorContext context) {
        synchronized (lifecycle) {
            if (activation != null) {
                throw new IllegalStateException("vfs backup monitor is already started");
            }
            if (backupURL.isEmpty()) {
                throw new IllegalStateException("vfs backup monitor: litestream.backupURL is not configured");
            }
            WatermarkSource source = sources.get();
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "zrm-backup-vfs");
                t.setDaemon(true);
                return t;
            });
            Activation a = new Activation(context, source, executor);
            activation = a;
            status = describe(a);
            long interval = probeInterval.toMillis();
            // fixed delay: a slow probe (up to the probe timeout) never overlaps the next one
            executor.scheduleWithFixedDelay(() -> tick(a), interval, interval, TimeUnit.MILLISECONDS);
            LOG.info("vfs backup monitor: monitoring v5 backups at {} every {} ms with {} ms cleanup delay",
                    Secrets.maskUrls(backupURL), interval, cleanupDelay(context).toMillis());
        }
    }

    @Override
    public void stop() {
        Activation a;
        synchronized (lifecycle) {
            a = activation;
            if (a == null) {
                return;
            }
            activation = null;
        }
        a.stopping = true;
        a.executor.shutdown();
        a.source.close(); // kills the reader child, which ends a read in flight
        try {
            if (!a.executor.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("vfs backup monitor: a check is still running {} s after stop; the retired context refuses"
                        + " what it reports", STOP_WAIT.toSeconds());
                a.executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            a.executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
        status = describe(null);
        LOG.info("vfs backup monitor: stopped monitoring {}", Secrets.maskUrls(backupURL));
    }

    @Override
    public Map<String, Object> status() {
        return status;
    }

    /** Runs one check of the current activation now; tests call it instead of waiting for the timer. */
    void check() {
        Activation a = activation;
        if (a != null) {
            check(a);
        }
    }

    private void tick(Activation a) {
        try {
            check(a);
        } catch (RuntimeException e) {
            // a thrown exception would cancel the fixed-delay schedule
            LOG.warn("vfs backup monitor: check failed; retrying in {} ms", probeInterval.toMillis(), e);
        }
    }

    private void check(Activation a) {
        BackupWatermark read;
        try {
            read = a.source.readWatermark();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            probeFailed(a, e);
            return;
        }
        a.probeFailures = 0;
        a.failingSince = null;
        a.lastProbeError = null;
        if (a.observed.observe(read)) {
            LOG.info("vfs backup monitor: observed backup watermark={} through Litestream VFS at {}"
                    + " (writeTimeMs={}, txid={}, lagSeconds={})", read.watermark(),
                    Instant.ofEpochMilli(read.observedAtMs()), read.writeTimeMs(), read.txid(), read.lagSeconds());
        }
        if (!a.stopping && read.writeTimeMs() != null) {
            a.context.backupLag(Duration.ofMillis(Math.max(0, read.observedAtMs() - read.writeTimeMs())));
        }
        scheduleCleanup(a);
        status = describe(a);
    }

    private void probeFailed(Activation a, Exception e) {
        if (a.stopping) {
            LOG.debug("vfs backup monitor: probe ended by stop: {}", e.toString());
            return;
        }
        a.context.purgeBlocked(PROBE_FAILED);
        a.probeFailures++;
        if (a.failingSince == null) {
            a.failingSince = clock.instant();
        }
        a.lastProbeError = Secrets.maskUrls(e.getMessage() == null ? e.toString() : e.getMessage());
        LOG.warn("vfs backup monitor: unable to read backup watermark through Litestream VFS at {}; skipping change-log"
                + " cleanup ({} failed probe(s) in a row): {}", Secrets.maskUrls(backupURL), a.probeFailures,
                Secrets.maskUrls(e.toString()));
        status = describe(a);
    }

    private void scheduleCleanup(Activation a) {
        if (a.stopping) {
            return;
        }
        Set<String> reservations = a.context.openReservations();
        if (!reservations.isEmpty()) {
            LOG.info("vfs backup monitor: watermark cleanup paused for snapshot(s): {}", String.join(",", reservations));
            return;
        }
        long cutoff = clock.millis() - cleanupDelay(a.context).toMillis();
        Optional<String> due = a.observed.eligible(cutoff);
        if (due.isEmpty()) {
            return;
        }
        if (a.context.scheduleCleanup(due.get())) {
            a.observed.scheduled(due.get());
            LOG.info("vfs backup monitor: scheduled change-log cleanup up to watermark={}", due.get());
        } else {
            LOG.debug("vfs backup monitor: cleanup up to watermark={} refused: this activation is retired", due.get());
        }
    }

    /**
     * The coordinator's delay as is: it already enforces the floor (upstream's 30 s
     * {@code MIN_CLEANUP_DELAY_MS}, configurable as {@code minCleanupDelayMs} of PID
     * {@code org.zrm.backup}), so a second floor here would only override the operator's choice.
     */
    private static Duration cleanupDelay(BackupMonitorContext context) {
        return context.cleanupDelay();
    }

    private Map<String, Object> describe(Activation a) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("backupURL", Secrets.maskUrls(backupURL));
        s.put("running", a != null);
        if (a != null) {
            BackupWatermark latest = a.observed.latest();
            s.put("probeIntervalMs", probeInterval.toMillis());
            s.put("lastScheduledWatermark", a.observed.lastScheduled().isEmpty() ? null : a.observed.lastScheduled());
            s.put("ageingWatermarks", a.observed.pendingCount());
            s.put("newestAgeingWatermark", a.observed.newestPending().orElse(null));
            s.put("latestBackupWatermark", latest == null ? null : latest.watermark());
            s.put("latestObservedAt", latest == null ? null : Instant.ofEpochMilli(latest.observedAtMs()).toString());
            s.put("latestTxid", latest == null ? null : latest.txid());
            s.put("latestVfsLagSeconds", latest == null ? null : latest.lagSeconds());
            s.put("failedProbesInARow", a.probeFailures);
            s.put("probeFailingSince", a.failingSince == null ? null : a.failingSince.toString());
            s.put("lastProbeError", a.lastProbeError);
        }
        return Collections.unmodifiableMap(s);
    }
}

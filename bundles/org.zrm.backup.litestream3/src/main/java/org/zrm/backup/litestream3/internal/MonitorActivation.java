package org.zrm.backup.litestream3.internal;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.BackupMonitorContext;
import org.zrm.secret.Secrets;

/**
 * One activation of the litestream3 monitor, from {@code start} to {@code stop}: the state Zero's
 * {@code Litestream3BackupMonitor} keeps (observed watermarks, the cached verification, the
 * staleness clock) and its {@code checkWatermarksAndScheduleCleanup}. A new activation starts
 * with none of it, so nothing learned by an earlier one can justify a purge.
 *
 * <p>Checks never overlap (a lock; the scheduler also runs them with a fixed delay). Status is
 * published as an immutable snapshot after every check, so {@link #status()} never blocks.
 */
final class MonitorActivation {

    private static final Logger LOG = LoggerFactory.getLogger(MonitorActivation.class);

    /** Upstream {@code BACKUP_VERIFICATION_SLACK_MS}: clock skew between litestream and the destination. */
    static final Duration VERIFICATION_SLACK = Duration.ofSeconds(60);
    static final String PROGRESS_METRIC = "litestream_replica_progress";
    /**
     * Bound on observed watermarks awaiting cleanup: about one per check while purging is paused or
     * blocked, so 10 000 is a week of one-minute checks. At the bound the oldest is dropped; that
     * can only delay a purge (a newer watermark supersedes it once it is eligible), never widen one.
     */
    static final int MAX_PENDING_WATERMARKS = 10_000;
    /** JavaScript's Date range; larger claimed times were invalid dates upstream and never eligible. */
    private static final double MAX_DATE_MS = 8.64e15;
    private static final DateTimeFormatter ISO =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    /** What {@code /status} shows; all fields describe the end of the last check. */
    record Status(String lastWatermark, int pendingWatermarks, String newestPendingWatermark,
            Instant latestBackupTime, Instant lastVerifiedUploadTime, Instant staleSince, boolean wedged,
            boolean retired, String lastMetricsError, String lastVerificationError) {
    }

    private final Litestream3Settings settings;
    private final String maskedURL;
    private final String maskedMetricsURL;
    private final BackupMonitorContext ctx;
    private final MetricsFetcher fetcher;
    private final BackupStateVerifier verifier;
    private final ReplicaLagReader lagReader;
    private final Clock clock;
    private final Runnable endSchedule;
    private final StopSignal signal = new StopSignal();
    private final ReentrantLock checkLock = new ReentrantLock();

    // Guarded by checkLock. Keys sort as LexiVersions do (plain string order), so the largest
    // eligible watermark and "every key <= w" are range operations.
    private final TreeMap<String, Instant> watermarks = new TreeMap<>();
    private String lastWatermark = "";
    private Instant latestBackupTime;
    private Instant lastVerifiedUploadTime;
    private Instant staleSince;
    private boolean wedged;
    private boolean retired;
    private boolean warnedNoBackupTime;
    private String lastMetricsError;
    private String lastVerificationError;

    private volatile Status status = new Status(null, 0, null, null, null, null, false, false, null, null);

    /**
     * @param endSchedule cancels this activation's periodic checks (after a fatal report or a
     *     refusal); must not wait for the running check, which is the caller
     */
    MonitorActivation(Litestream3Settings settings, BackupMonitorContext ctx, MetricsFetcher fetcher,
            BackupStateVerifier verifier, ReplicaLagReader lagReader, Clock clock, Runnable endSchedule) {
        this.settings = settings;
        this.maskedURL = Secrets.maskUrls(settings.backupURL());
        this.maskedMetricsURL = Secrets.maskUrls(settings.metricsURL().toString());
        this.ctx = ctx;
        this.fetcher = fetcher;
        this.verifier = verifier;
        this.lagReader = lagReader;
        this.clock = clock;
        this.endSchedule = endSchedule;
    }

    Status status() {
        return status;
    }

    /** Aborts in-flight I/O; the running check, if any, then ends without further effects. */
    void stop() {
        signal.stop();
    }

    /** Waits, bounded, until no check is running. */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        if (!checkLock.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return false;
        }
        checkLock.unlock();
        return true;
    }

    /**
     * Zero's {@code checkWatermarksAndScheduleCleanup}, then the backup-lag report. Failures are
     * logged and retried at the next check; only a wedged backup is reported as fatal.
     */
    void check() {
        try {
            checkLock.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            if (!active()) {
                return;
            }
            checkWatermarks();
            if (!active()) {
                return;
            }
            try {
                scheduleCleanup();
            } catch (RuntimeException e) {
                if (!signal.isStopped()) {
                    LOG.warn("litestream3 backup monitor: error scheduling cleanup", e);
                }
            }
            if (active()) {
                reportLag();
            }
        } finally {
            publish();
            checkLock.unlock();
        }
    }

    private boolean active() {
        return !signal.isStopped() && !wedged && !retired;
    }

    private void checkWatermarks() {
        MetricsFetcher.Result result = fetcher.fetch(signal);
        if (result instanceof MetricsFetcher.Result.Aborted) {
            return; // stopping: not an error
        }
        if (result instanceof MetricsFetcher.Result.Failed failed) {
            metricsFailed(failed.reason());
            return;
        }
        List<PrometheusText.Sample> samples;
        try {
            samples = PrometheusText.parse(((MetricsFetcher.Result.Body) result).text());
        } catch (PrometheusText.FormatException e) {
            metricsFailed(e.getMessage());
            return;
        }
        lastMetricsError = null;
        for (PrometheusText.Sample s : samples) {
            if (s.type() != PrometheusText.Type.GAUGE || !s.name().equals(PROGRESS_METRIC)) {
                continue;
            }
            String watermark = s.labels().get("watermark");
            if (watermark == null || watermark.isEmpty()) {
                continue;
            }
            double ms = s.value() * 1000;
            if (!Double.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) {
                LOG.debug("litestream3 backup monitor: skipping {}{{watermark={}}} with value {}", PROGRESS_METRIC,
                        watermark, s.value());
                continue;
            }
            Instant time = Instant.ofEpochMilli((long) ms); // truncated, as a JavaScript Date is
            if (watermark.compareTo(lastWatermark) > 0 && !watermarks.containsKey(watermark)) {
                LOG.info("litestream3 backup monitor: replicated watermark={} to {} at {}", watermark,
                        s.labels().get("name"), iso(time));
                watermarks.put(watermark, time);
                latestBackupTime = time;
                if (watermarks.size() > MAX_PENDING_WATERMARKS) {
                    Map.Entry<String, Instant> dropped = watermarks.pollFirstEntry();
                    LOG.warn("litestream3 backup monitor: {} watermarks await cleanup; dropping the oldest, {}",
                            MAX_PENDING_WATERMARKS, dropped.getKey());
                }
            }
        }
    }

    private void metricsFailed(String reason) {
        lastMetricsError = reason;
        LOG.warn("litestream3 backup monitor: unable to fetch metrics at {}: {}", maskedMetricsURL, reason);
    }

    private void scheduleCleanup() {
        Set<String> reservations = ctx.openReservations();
        if (!reservations.isEmpty()) {
            LOG.info("litestream3 backup monitor: watermark cleanup paused for snapshot(s): {}",
                    String.join(",", new TreeSet<>(reservations)));
            return;
        }
        Instant now = clock.instant();
        // The coordinator enforces the floor (upstream MIN_CLEANUP_DELAY_MS = 30 s, configurable
        // as minCleanupDelayMs of PID org.zrm.backup); no second floor here.
        Duration delay = ctx.cleanupDelay();
        Instant cutoff = now.minus(delay);
        String maxWatermark = maxWatermarkUpTo(cutoff);
        if (maxWatermark.isEmpty()) {
            return;
        }
        // The metric says what litestream believes it uploaded, which has been seen to advance
        // while nothing reached the destination; a purge needs an upload really listed there.
        Instant claimed = watermarks.get(maxWatermark);
        if (!confirmedDurable(claimed)) {
            try {
                lastVerifiedUploadTime = verifier.lastBackupTime(signal);
                lastVerificationError = null;
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (signal.isStopped()) {
                    return; // aborted by stop: not a verification failure
                }
                lastVerificationError = String.valueOf(e.getMessage());
                ctx.purgeBlocked("verification-failed");
                // Skipping is safe: the change log only grows.
                LOG.warn("litestream3 backup monitor: unable to verify backup state. skipping change-log cleanup up to"
                        + " watermark {} (claimed backup time {}): {}", maxWatermark, iso(claimed), e.toString());
                return;
            }
        }
        Instant lastUpload = lastVerifiedUploadTime;
        Instant slackLimit = lastUpload.plus(VERIFICATION_SLACK);
        String verified = maxWatermarkUpTo(slackLimit.isBefore(cutoff) ? slackLimit : cutoff);
        if (verified.isEmpty()) {
            ctx.purgeBlocked("backup-stale");
            if (staleSince == null) {
                staleSince = now;
            }
            Duration staleFor = Duration.between(staleSince, now);
            LOG.warn("litestream3 backup monitor: blocked change-log cleanup up to watermark {}: litestream claims it"
                    + " was backed up at {}, but the last object actually uploaded to {} was at {}. The backup has been"
                    + " stale for {} ms.", maxWatermark, iso(claimed), maskedURL, iso(lastUpload), staleFor.toMillis());
            if (staleFor.compareTo(settings.wedgedShutdownGrace()) >= 0) {
                shutDownOnWedgedBackup(staleFor, claimed, lastUpload);
            }
            return;
        }
        // A purge confirmed against a real upload: the backup keeps up.
        staleSince = null;
        if (!ctx.scheduleCleanup(verified)) {
            LOG.debug("litestream3 backup monitor: cleanup up to {} refused; this activation was retired", verified);
            retired = true;
            endSchedule.run();
            return;
        }
        LOG.debug("litestream3 backup monitor: scheduled cleanup up to watermark {}", verified);
        watermarks.headMap(verified, true).clear();
        lastWatermark = verified;
    }

    private void shutDownOnWedgedBackup(Duration staleFor, Instant claimed, Instant lastUpload) {
        ctx.purgeBlocked("backup-wedged");
        String message = "backup at " + maskedURL + " is wedged: litestream claims a backup at " + iso(claimed)
                + ", but the last object actually uploaded was at " + iso(lastUpload) + ", and the backup has not"
                + " advanced for " + staleFor.toMillis() + " ms (grace period "
                + settings.wedgedShutdownGrace().toMillis() + " ms). Shutting down to avoid corrupting the backup;"
                + " investigate the backup destination.";
        LOG.error("litestream3 backup monitor: {}", message);
        wedged = true;
        endSchedule.run();
        ctx.reportFatal(new BackupWedgedException(message));
    }

    /** The largest watermark whose claimed backup time is at or before {@code cutoff}, or "". */
    private String maxWatermarkUpTo(Instant cutoff) {
        for (Map.Entry<String, Instant> e : watermarks.descendingMap().entrySet()) {
            if (!e.getValue().isAfter(cutoff)) {
                return e.getKey();
            }
        }
        return "";
    }

    /** Whether the cached verification already covers {@code claimed}, within the clock-skew slack. */
    private boolean confirmedDurable(Instant claimed) {
        return lastVerifiedUploadTime != null && !claimed.isAfter(lastVerifiedUploadTime.plus(VERIFICATION_SLACK));
    }

    /**
     * Upstream measures the lag at scrape time by fetching /metrics again; here it is measured
     * after each check, from the backup time the check knows.
     */
    private void reportLag() {
        Instant latest = latestBackupTime;
        if (latest == null) {
            if (!warnedNoBackupTime) {
                // Once per activation: plain litestream v0.3.13 never exports the progress metric.
                warnedNoBackupTime = true;
                LOG.warn("litestream3 backup monitor: no backed up watermarks at {}. unable to report"
                        + " replica.backup_lag", maskedMetricsURL);
            }
            return;
        }
        try {
            OptionalLong writeTimeMs = lagReader.writeTimeMs();
            if (writeTimeMs.isEmpty()) {
                // Upstream would compute null - time and report 0; no recorded write means no lag to report.
                LOG.debug("litestream3 backup monitor: writeTimeMs is NULL in {}", lagReader.file());
                return;
            }
            ctx.backupLag(Duration.ofMillis(Math.max(0, writeTimeMs.getAsLong() - latest.toEpochMilli())));
        } catch (SQLException | RuntimeException e) {
            LOG.warn("litestream3 backup monitor: error measuring replica.backup_lag from {}: {}", lagReader.file(),
                    e.toString());
        }
    }

    private void publish() {
        status = new Status(lastWatermark.isEmpty() ? null : lastWatermark, watermarks.size(),
                watermarks.isEmpty() ? null : watermarks.lastKey(), latestBackupTime, lastVerifiedUploadTime,
                staleSince, wedged, retired, lastMetricsError, lastVerificationError);
    }

    static String iso(Instant t) {
        return t == null ? null : ISO.format(t);
    }
}

package org.zrm.storer.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogSize;
import org.zrm.status.MetricsSink;
import org.zrm.watermark.Watermarks;

/**
 * Counts the change log's rows and reads its oldest and newest watermark at a fixed interval on
 * one thread of its own, so that {@code /status} and {@code /metrics} show the figures without
 * querying the database per request. Counting is a scan of the table's index, hence an interval
 * clamped to [{@value #MIN_INTERVAL_MS}, {@value #MAX_INTERVAL_MS}] ms.
 */
final class ChangeLogSizeSampler implements AutoCloseable {
    static final long MIN_INTERVAL_MS = 5_000;
    static final long MAX_INTERVAL_MS = 3_600_000;
    private static final Logger LOG = LoggerFactory.getLogger(ChangeLogSizeSampler.class);

    /**
     * @param size the last successful count, {@code null} before the first
     * @param sampledAtMillis when it was taken, 0 before the first
     * @param error why the last attempt failed, {@code null} if it succeeded
     */
    record Reading(ChangeLogSize size, long sampledAtMillis, String error) {
        static final Reading NONE = new Reading(null, 0, null);
    }

    private final ChangeLog log;
    private final long intervalMs;
    private final LongSupplier clock;
    private final ScheduledThreadPoolExecutor executor;
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile Reading reading = Reading.NONE;
    private String lastLoggedError;   // confined to the executor thread

    ChangeLogSizeSampler(ChangeLog log, long intervalMs, LongSupplier clock, String threadName) {
        this.log = log;
        this.intervalMs = clampInterval(intervalMs);
        this.clock = clock;
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    static long clampInterval(long ms) {
        return Math.max(MIN_INTERVAL_MS, Math.min(MAX_INTERVAL_MS, ms));
    }

    void start() {
        if (started.compareAndSet(false, true)) {
            executor.scheduleWithFixedDelay(this::sampleQuietly, 0, intervalMs, TimeUnit.MILLISECONDS);
        }
    }

    Reading reading() {
        return reading;
    }

    /** Takes one sample on the caller's thread. */
    Reading sampleNow() throws ChangeLogException {
        Reading r = new Reading(log.size(), clock.getAsLong(), null);
        reading = r;
        return r;
    }

    private void sampleQuietly() {
        try {
            sampleNow();
            lastLoggedError = null;
        } catch (ChangeLogException | RuntimeException e) {
            // Keep the last count, marked with the failure; an escaping exception would end the schedule.
            Reading last = reading;
            reading = new Reading(last.size(), last.sampledAtMillis(), e.toString());
            if (!e.toString().equals(lastLoggedError)) {
                LOG.warn("changelog: counting the change log failed (retrying every {} ms): {}", intervalMs, e.toString());
                lastLoggedError = e.toString();
            }
        }
    }

    /** Stops sampling without waiting for a count in progress. */
    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** @return the {@code changelog} status section */
    static Map<String, Object> status(Reading r, long nowMillis) {
        Map<String, Object> m = new LinkedHashMap<>();
        ChangeLogSize size = r.size();
        m.put("rows", size == null ? null : size.rows());
        m.put("oldestWatermark", size == null ? null : size.oldestWatermark());
        m.put("newestWatermark", size == null ? null : size.newestWatermark());
        m.put("spanBytes", size == null ? null : spanBytes(size));
        m.put("sampleAgeMs", r.sampledAtMillis() == 0 ? null : Math.max(0, nowMillis - r.sampledAtMillis()));
        m.put("sampleError", r.error());
        return m;
    }

    static void collect(Reading r, long nowMillis, MetricsSink sink) {
        ChangeLogSize size = r.size();
        if (size != null) {
            sink.gauge("zrm_changelog_rows", "Rows in the change log (last count)", Map.of(), size.rows());
            Long span = spanBytes(size);
            if (span != null) {
                sink.gauge("zrm_changelog_span_bytes",
                        "WAL between the change log's oldest and newest watermark: what catch-up can still serve and"
                                + " purging has not removed", Map.of(), span);
            }
            if (size.oldestWatermark() != null) {
                sink.gauge("zrm_changelog_oldest_watermark_info", "The change log's oldest watermark (label)",
                        Map.of("watermark", size.oldestWatermark()), 1);
            }
            sink.gauge("zrm_changelog_size_sample_age_seconds", "Age of the last change-log count", Map.of(),
                    Math.max(0, nowMillis - r.sampledAtMillis()) / 1000.0);
        }
        sink.gauge("zrm_changelog_size_sample_failing", "1 while counting the change log fails", Map.of(),
                r.error() == null ? 0 : 1);
    }

    /** @return LSN(newest) - LSN(oldest), {@code null} when empty or the watermarks are not LSNs */
    static Long spanBytes(ChangeLogSize size) {
        if (size.oldestWatermark() == null || size.newestWatermark() == null) {
            return null;
        }
        try {
            long oldest = Watermarks.toLsn(size.oldestWatermark()).asLong();
            long newest = Watermarks.toLsn(size.newestWatermark()).asLong();
            return Long.compareUnsigned(newest, oldest) <= 0 ? 0L : newest - oldest;
        } catch (IllegalArgumentException notAnLsn) {
            return null;   // a custom change source's watermarks carry no byte distance
        }
    }
}

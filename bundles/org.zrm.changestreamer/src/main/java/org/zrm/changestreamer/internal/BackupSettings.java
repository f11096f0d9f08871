package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import org.zrm.backup.BackupMonitor;

/**
 * The coordinator's validated settings (PID {@value BackupComponent#PID}).
 *
 * @param strategy {@code auto}, {@code replica}, {@code litestream3} or {@code vfs}
 * @param backupURL the backup location, for the {@code auto} rule; empty when none
 * @param backupUsingV5 whether the backup is made by litestream v0.5, for the {@code auto} rule
 * @param exitOnFatal whether a fatal backup condition (a wedged backup) stops the runtime
 * @param minCleanupDelay the floor of the cleanup delay (upstream 30 s)
 */
record BackupSettings(String strategy, String backupURL, boolean backupUsingV5, boolean exitOnFatal,
        Duration minCleanupDelay) {

    static final String AUTO = "auto";
    static final Set<String> STRATEGIES = Set.of(AUTO, BackupMonitor.STRATEGY_REPLICA,
            BackupMonitor.STRATEGY_LITESTREAM3, BackupMonitor.STRATEGY_VFS);
    static final Duration DEFAULT_MIN_CLEANUP_DELAY = Duration.ofSeconds(30);

    static BackupSettings defaults() {
        return new BackupSettings(AUTO, "", false, true, DEFAULT_MIN_CLEANUP_DELAY);
    }

    /**
     * @throws IllegalArgumentException naming the property if a value is invalid
     */
    static BackupSettings of(BackupConfig c) {
        String strategy = c.strategy() == null ? "" : c.strategy().strip().toLowerCase(Locale.ROOT);
        return new BackupSettings(strategy, c.litestream_backupURL() == null ? "" : c.litestream_backupURL().strip(),
                c.litestream_backupUsingV5(), c.exitOnFatal(), Duration.ofMillis(c.minCleanupDelayMs()));
    }

    BackupSettings {
        if (!STRATEGIES.contains(strategy)) {
            throw new IllegalArgumentException("strategy must be one of auto, replica, litestream3, vfs: '"
                    + strategy + "'");
        }
        if (minCleanupDelay.isNegative() || minCleanupDelay.isZero()) {
            throw new IllegalArgumentException("minCleanupDelayMs must be positive: " + minCleanupDelay.toMillis());
        }
    }

    /** Zero's rule for {@code auto}: no backup URL → replica; a v5 backup → vfs; otherwise litestream3. */
    String effectiveStrategy() {
        if (!AUTO.equals(strategy)) {
            return strategy;
        }
        if (backupURL.isEmpty()) {
            return BackupMonitor.STRATEGY_REPLICA;
        }
        return backupUsingV5 ? BackupMonitor.STRATEGY_VFS : BackupMonitor.STRATEGY_LITESTREAM3;
    }

    BackupSettings withStrategy(String s) {
        return new BackupSettings(s, backupURL, backupUsingV5, exitOnFatal, minCleanupDelay);
    }
}

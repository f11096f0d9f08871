package org.zrm.backup;

import java.time.Duration;
import org.osgi.annotation.versioning.ProviderType;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;

/**
 * Everything a backup monitor receives from the coordinator for one activation, passed to
 * {@link BackupMonitor#start(BackupMonitorContext)}. All methods are thread-safe; like the
 * {@link CleanupScheduler} it extends, the context is bound to one activation and goes inert when
 * the monitor is retired.
 */
@ProviderType
public interface BackupMonitorContext extends CleanupScheduler {

    /**
     * The cleanup delay to start with: at least 30 s, at least the time the replication manager
     * needed to restore or initially sync, and never less than any delay learned earlier by any
     * monitor (it is carried over across swaps and only grows).
     *
     * @return the delay, positive
     */
    Duration initialCleanupDelay();

    /**
     * Reports a cleanup delay this monitor has learned (a reservation lasted longer than the
     * current delay), so the coordinator can carry it over to the next monitor. Smaller values are
     * ignored.
     *
     * @param delay the learned delay
     */
    void cleanupDelayLearned(Duration delay);

    /**
     * Reads the change log's replica version and minimum watermark, for the snapshot status
     * message. Performs I/O; call it from the monitor's own threads, not from a caller's.
     *
     * @return the state
     * @throws ChangeLogException if the change log could not be read
     */
    ChangeLogState changeLogState() throws ChangeLogException;

    /**
     * Reports a condition that must stop the whole pipeline, such as a backup that has been stale
     * for longer than the wedge timeout (upstream {@code UnrecoverableError("backup at ... is
     * wedged")}). The coordinator stops the change streamer, which ends the process with a
     * non-zero status; a fatal report is never swallowed by a swap in progress. Monitors keep
     * ordinary, transient failures to themselves (log and retry on the next tick).
     *
     * @param cause the fatal condition
     */
    void reportFatal(Throwable cause);
}

package org.zrm.backup;

import org.osgi.annotation.versioning.ProviderType;

/**
 * How a backup monitor reports a backed-up watermark, which lets the change streamer purge the
 * change log below it; the only way to schedule a purge.
 *
 * <p>Each scheduler instance is bound to one activation (epoch) of one monitor. Once the
 * coordinator retires that activation (swap, stop, reconfiguration) the scheduler refuses every
 * call, so a check that was still in flight when the monitor was stopped can never purge on the
 * strength of a retired monitor's observations. Thread-safe and non-blocking.
 */
@ProviderType
public interface CleanupScheduler {

    /**
     * Records that the backup has reached {@code watermark}, so changes before it may be purged
     * once every connected subscriber has acknowledged it and no snapshot reservation is open.
     *
     * @param watermark a watermark the monitor has itself observed as backed up (and, where the
     *     strategy requires it, verified and aged by the cleanup delay)
     * @return {@code true} if accepted; {@code false} if refused because the calling monitor is no
     *     longer the active one (the caller should log at debug level and stop its work)
     */
    boolean scheduleCleanup(String watermark);
}

package org.zrm.backup.litestream3.internal;

import java.time.Instant;

/**
 * Finds when an object was last actually uploaded to the backup destination (Zero's
 * {@code BackupStateVerifier}; in production {@link LitestreamCli}, which lists the destination
 * the way {@code getLastBackupTime} does). The litestream progress metric says what litestream
 * believes it uploaded; this says what is really there.
 */
@FunctionalInterface
interface BackupStateVerifier {

    /**
     * @param signal aborts the verification when the monitor stops
     * @return the time of the newest snapshot or WAL segment at the destination
     * @throws Exception if the backup state cannot be determined; the monitor then skips the purge
     */
    Instant lastBackupTime(StopSignal signal) throws Exception;
}

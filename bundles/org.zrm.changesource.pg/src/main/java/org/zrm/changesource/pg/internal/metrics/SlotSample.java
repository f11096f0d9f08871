package org.zrm.changesource.pg.internal.metrics;

import org.zrm.watermark.Lsn;

/**
 * One replication slot as {@code pg_replication_slots} showed it, with the WAL it holds back.
 *
 * @param slot the slot name
 * @param active whether a walsender streams it now
 * @param walStatus {@code reserved}, {@code extended}, {@code unreserved} or {@code lost}; {@code null} for a
 *     slot that never reserved WAL
 * @param safeWalSizeBytes bytes of WAL that may still be written before the slot is in danger of
 *     being invalidated ({@code safe_wal_size}); {@code null} when {@code max_slot_wal_keep_size} is
 *     unlimited (-1) or the slot is lost
 * @param retainedWalBytes {@code pg_current_wal_lsn() - restart_lsn}: the WAL the slot keeps on
 *     disk; {@code null} without a restart LSN
 * @param unconfirmedBytes {@code pg_current_wal_lsn() - confirmed_flush_lsn}: what the consumer has
 *     not confirmed yet; {@code null} without a confirmed position
 */
public record SlotSample(String slot, boolean active, String walStatus, Long safeWalSizeBytes, Long retainedWalBytes,
        Long unconfirmedBytes) {

    /** The states {@code wal_status} can take, in order of increasing danger. */
    public static final java.util.List<String> WAL_STATES = java.util.List.of("reserved", "extended", "unreserved", "lost");

    /**
     * Builds a sample from the catalog's text columns.
     *
     * @param currentLsn {@code pg_current_wal_lsn()}
     * @param restartLsn {@code restart_lsn}, may be {@code null}
     * @param confirmedFlushLsn {@code confirmed_flush_lsn}, may be {@code null}
     */
    public static SlotSample of(String slot, boolean active, String walStatus, Long safeWalSize, String currentLsn,
            String restartLsn, String confirmedFlushLsn) {
        Lsn current = Lsn.parse(currentLsn);
        return new SlotSample(slot, active, walStatus, safeWalSize, behind(current, restartLsn),
                behind(current, confirmedFlushLsn));
    }

    /**
     * @return bytes from {@code position} up to {@code current}; 0 when {@code position} is ahead
     *     (the slot confirmed a position past the WAL insert point the sample read a moment before)
     */
    static Long behind(Lsn current, String position) {
        if (position == null) {
            return null;
        }
        long at = Lsn.parse(position).asLong();
        return Long.compareUnsigned(current.asLong(), at) <= 0 ? 0L : current.asLong() - at;
    }
}

package org.zrm.changesource.pg.internal.metrics;

import java.util.List;

/**
 * The last sampling of this shard's slots.
 *
 * @param sampledAtMillis when the sample was taken (epoch ms), 0 if none yet
 * @param currentLsn {@code pg_current_wal_lsn()} at that time, {@code null} if none yet
 * @param slots the shard's slots, by name
 * @param error why the last attempt failed, {@code null} if it succeeded; the slots are then those
 *     of the last successful sample
 */
public record SlotReading(long sampledAtMillis, String currentLsn, List<SlotSample> slots, String error) {
    /** Before the first sample. */
    public static final SlotReading NONE = new SlotReading(0, null, List.of(), null);

    public SlotReading {
        slots = List.copyOf(slots);
    }

    /** @return this reading's slots, with a failure recorded */
    public SlotReading failed(String reason) {
        return new SlotReading(sampledAtMillis, currentLsn, slots, reason);
    }
}

package org.zrm.changesource.pg.internal.sync;

/**
 * Result of a slot cleanup pass: slots dropped, slots still owned by a replica row ({@code active}),
 * and slots without a replica row that could not be dropped because a subscriber still streams from
 * them ({@code draining}; retry later).
 */
public record SlotCleanup(int dropped, int active, int draining) {}

package org.zrm.changesource.pg.internal.metrics;

/**
 * When the replication connection last heard from Postgres and last confirmed a position to it.
 * A stream whose messages keep arriving (data or keepalives) but whose acks stop is stuck behind
 * the change log; one from which nothing arrives is stalled upstream or on the network.
 *
 * @param slot the streamed slot
 * @param lastReceivedAtMillis epoch ms of the last message from the walsender, 0 if none yet
 * @param lastAckAtMillis epoch ms of the last status update that moved the confirmed position, 0 if never
 * @param ackedLsn the last confirmed position, {@code null} if none
 */
public record StreamActivity(String slot, long lastReceivedAtMillis, long lastAckAtMillis, String ackedLsn) {

    /** @return seconds since {@code atMillis} at {@code nowMillis}, or {@code null} if it never happened */
    public static Double ageSeconds(long atMillis, long nowMillis) {
        return atMillis == 0 ? null : Math.max(0, nowMillis - atMillis) / 1000.0;
    }
}

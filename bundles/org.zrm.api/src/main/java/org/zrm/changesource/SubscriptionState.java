package org.zrm.changesource;

import java.util.List;
import java.util.Objects;

/**
 * The local replica's subscription state, reported by {@link ChangeSource#initialize(boolean)}
 * and checked against the change log's replication configuration.
 *
 * @param replicaVersion the watermark at which the replica's initial sync was taken; it names the
 *     replica lineage, and only subscribers and change logs with the same value are compatible
 * @param publications the upstream publications the replica subscribes to (compared as a set)
 * @param watermark the replica's current state version; equal to {@code replicaVersion} until the
 *     replica has applied its first transaction after initial sync
 */
public record SubscriptionState(String replicaVersion, List<String> publications, String watermark) {

    /**
     * Validates and defensively copies the components.
     *
     * @throws NullPointerException if any component or publication is {@code null}
     */
    public SubscriptionState {
        Objects.requireNonNull(replicaVersion, "replicaVersion");
        publications = List.copyOf(publications);
        Objects.requireNonNull(watermark, "watermark");
    }
}

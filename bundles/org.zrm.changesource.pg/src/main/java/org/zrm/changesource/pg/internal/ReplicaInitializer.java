package org.zrm.changesource.pg.internal;

import java.util.Map;
import java.util.Optional;

import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.SubscriptionState;

/**
 * Prepares upstream and the local replica: shard setup/migration, slot creation and initial sync
 * for a new replica, verification of an existing one (upstream's
 * {@code initializePostgresChangeSource} up to constructing the source). Implemented by the
 * setup/sync packages; the streaming code only needs the resulting subscription state.
 */
@FunctionalInterface
public interface ReplicaInitializer {

    /**
     * @param resetReplica discard the local replica first
     * @return the replica's subscription state
     */
    SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException;

    /**
     * Progress of the running or last initial sync for {@code /status} (phase, tables, rows, MB,
     * rate, ETA); empty if none ran. Cheap and thread-safe.
     */
    default Optional<Map<String, Object>> progress() {
        return Optional.empty();
    }
}

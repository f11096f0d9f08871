package org.zrm.replica;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a completed replica says about itself, read from its metadata tables by
 * {@link ReplicaStateReader}.
 *
 * @param schemaVersion {@code _zero.versionHistory.dataVersion}: the version of the replica layout
 *     (zero-cache's replica migrations)
 * @param replicaVersion {@code _zero.replicationConfig.replicaVersion}: the watermark of the initial
 *     sync that created the replica; it names the replica's lineage
 * @param publications {@code _zero.replicationConfig.publications}: the upstream publications the
 *     replica subscribes to, as stored (sorted by the initial sync)
 * @param stateVersion {@code _zero.replicationState.stateVersion}: the commit watermark of the last
 *     transaction applied, equal to {@code replicaVersion} until one is applied
 * @param initialSyncContext {@code _zero.replicationConfig.initialSyncContext}: the server context
 *     recorded at initial sync ({@link org.zrm.protocol.JsonValues} representation); empty if the
 *     column is {@code NULL} or not a JSON object; unmodifiable, in stored member order
 */
public record ReplicaState(int schemaVersion, String replicaVersion, List<String> publications, String stateVersion,
        Map<String, Object> initialSyncContext) {

    /**
     * Validates and defensively copies the components.
     *
     * @throws NullPointerException if a component or publication is {@code null}
     */
    public ReplicaState {
        Objects.requireNonNull(replicaVersion, "replicaVersion");
        publications = List.copyOf(publications);
        Objects.requireNonNull(stateVersion, "stateVersion");
        // JSON objects may hold null members, which Map.copyOf rejects; the order is kept.
        initialSyncContext = Collections.unmodifiableMap(new LinkedHashMap<>(initialSyncContext));
    }
}

package org.zrm.changelog;

import java.util.Objects;

/**
 * The change log's single replication-state row.
 *
 * @param lastWatermark commit watermark of the last stored transaction (the replica version
 *     initially): the upstream resume point and the catch-up upper bound
 * @param owner task id of the replication manager that owns the log, or {@code null} if none yet
 * @param ownerAddress the owner's discovery address, or {@code null}
 */
public record ReplicationState(String lastWatermark, String owner, String ownerAddress) {

    /** @throws NullPointerException if {@code lastWatermark} is {@code null} */
    public ReplicationState {
        Objects.requireNonNull(lastWatermark, "lastWatermark");
    }

}

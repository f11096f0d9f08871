package org.zrm.changelog;

import java.util.Objects;

/**
 * What a restoring node needs to know about the change log (upstream
 * {@code getChangeLogState()}), sent in the {@code /snapshot} status message.
 *
 * @param replicaVersion the replica version the log serves
 * @param minWatermark the earliest watermark from which catch-up is possible
 */
public record ChangeLogState(String replicaVersion, String minWatermark) {

    /** @throws NullPointerException if a component is {@code null} */
    public ChangeLogState {
        Objects.requireNonNull(replicaVersion, "replicaVersion");
        Objects.requireNonNull(minWatermark, "minWatermark");
    }
}

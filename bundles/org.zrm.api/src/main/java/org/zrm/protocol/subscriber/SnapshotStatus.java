package org.zrm.protocol.subscriber;

import java.util.Objects;
import org.zrm.protocol.Passthrough;

/**
 * The single message of a {@code /snapshot} reservation:
 * {@code ["status",{"tag":"status","backupURL":…,"replicaVersion":…,"minWatermark":…}]}.
 *
 * @param backupURL litestream backup location to restore from
 * @param replicaVersion replica version of the backup
 * @param minWatermark earliest watermark from which catch-up is possible
 * @param extra unknown members of the status object
 */
public record SnapshotStatus(String backupURL, String replicaVersion, String minWatermark, Passthrough extra) {

    /** Wire tag (also the first tuple element). */
    public static final String TAG = "status";

    public SnapshotStatus {
        Objects.requireNonNull(backupURL, "backupURL");
        Objects.requireNonNull(replicaVersion, "replicaVersion");
        Objects.requireNonNull(minWatermark, "minWatermark");
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("tag", "backupURL", "replicaVersion", "minWatermark");
    }

    /** A status without unknown members. */
    public SnapshotStatus(String backupURL, String replicaVersion, String minWatermark) {
        this(backupURL, replicaVersion, minWatermark, Passthrough.NONE);
    }
}

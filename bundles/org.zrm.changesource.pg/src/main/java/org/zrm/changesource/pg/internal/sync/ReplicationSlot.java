package org.zrm.changesource.pg.internal.sync;

import org.zrm.watermark.Lsn;

/**
 * A freshly created logical replication slot.
 *
 * @param consistentPoint the LSN from which the slot streams; the exported snapshot shows the
 *     database exactly as of this point
 * @param snapshotName the exported snapshot, importable with {@code SET TRANSACTION SNAPSHOT} while
 *     the creating replication connection stays open and idle
 */
public record ReplicationSlot(String slotName, Lsn consistentPoint, String snapshotName, String outputPlugin) {

    /** The replica version: {@code lexi(consistent_point)}. */
    public String replicaVersion() {
        return consistentPoint.toWatermark();
    }
}

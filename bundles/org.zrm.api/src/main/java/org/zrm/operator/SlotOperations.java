package org.zrm.operator;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Operator actions on the upstream's replication slots of this shard. Methods use an ordinary
 * database connection and block on it; call them from a shell or worker thread.
 */
@ProviderType
public interface SlotOperations {

    /**
     * @return the shard's orphaned slots: not streamed by any walsender and claimed by no replica
     *     (a slot left behind by a failed initial sync or a replica that is gone); they retain WAL
     *     until dropped
     * @throws OperationException if the upstream cannot be read
     */
    List<String> orphanSlots() throws OperationException;

    /**
     * Drops one orphaned slot. Refuses any other slot: one a walsender streams, one a replica still
     * claims, or one that does not belong to this shard.
     *
     * @throws OperationException naming the reason it was refused or failed
     */
    void dropOrphanSlot(String slot) throws OperationException;
}

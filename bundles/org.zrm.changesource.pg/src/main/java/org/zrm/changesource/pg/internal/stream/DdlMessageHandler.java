package org.zrm.changesource.pg.internal.stream;

import java.util.List;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * Turns the shard's DDL event-trigger messages ({@code {app}/{shard}/ddl}, legacy
 * {@code {app}/{shard}}) into schema changes (spec §4.5); see {@link SchemaChangeHandler}.
 */
@FunctionalInterface
public interface DdlMessageHandler {

    /**
     * @param lsn the message's stream position
     * @param message the logical message
     * @return the schema changes to emit (possibly none)
     * @throws RuntimeException if the event cannot be handled; the change maker then stops the
     *     replica with {@code reset-required}
     */
    List<ChangeStreamMessage> handle(long lsn, PgOutputMessage.Message message);

    /**
     * Called when the transaction that carried the handled events commits, before its commit is
     * emitted: rules that only hold for committed schemas (a migration may pass through states
     * that break them) are checked here.
     *
     * @throws RuntimeException if the committed schema cannot be replicated; the change maker then
     *     rolls the transaction back to consumers and stops the replica with {@code reset-required}
     */
    default void beforeCommit() {}
}

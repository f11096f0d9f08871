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
}

package org.zrm.changesource.pg.internal.stream;

import java.util.List;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * What the change maker does with a pgoutput Relation message. With event triggers installed
 * ({@code ddlDetection}) schema changes arrive as DDL messages and Relation messages carry nothing
 * ({@link #IGNORE}); without them (degraded mode, spec §3.2) each Relation message is checked
 * against the schema the replica was synced with, and a change that cannot be followed halts
 * replication.
 */
@FunctionalInterface
public interface RelationHandler {

    /** For shards with event triggers: Relation messages produce nothing. */
    RelationHandler IGNORE = relation -> List.of();

    /**
     * @param relation the Relation message
     * @return the messages to emit (normally none)
     * @throws RuntimeException if the relation shows a schema change that cannot be replicated; the
     *     change maker then stops the replica with {@code reset-required}
     */
    List<ChangeStreamMessage> handle(PgOutputMessage.Relation relation);
}

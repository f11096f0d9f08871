package org.zrm.changesource.pg.internal.stream;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.watermark.Lsn;

/**
 * What this issue does with DDL event messages: it parses them (a malformed event is an error, so
 * the sticky reset-required path is exercised exactly as it will be) and logs each one with its
 * type, tag and query, but emits no schema change. Data changes keep flowing.
 *
 * <p>Consequence, stated plainly: until the DDL issue lands, a schema change upstream is not
 * replicated; rows of a changed table then carry columns the replica does not know, which the
 * replicator rejects. Upstream's degraded mode (no event triggers) likewise cannot replicate DDL.
 */
public final class PassThroughDdlHandler implements DdlMessageHandler {

    private static final Logger LOG = LoggerFactory.getLogger(PassThroughDdlHandler.class);
    private final ProtocolCodec codec;

    public PassThroughDdlHandler(ProtocolCodec codec) {
        this.codec = codec;
    }

    @Override
    public List<ChangeStreamMessage> handle(long lsn, PgOutputMessage.Message message) {
        String json = new String(message.content(), StandardCharsets.UTF_8);
        Object event = codec.decodeValue(json);
        if (!(event instanceof Map<?, ?> m) || !(m.get("type") instanceof String type)) {
            throw new IllegalArgumentException("malformed DDL event from " + message.prefix() + ": not an object with a type");
        }
        Object tag = m.get("event") instanceof Map<?, ?> e ? e.get("tag") : null;
        Object query = m.get("context") instanceof Map<?, ?> c ? c.get("query") : null;
        LOG.info("received {}/{} event at {} (tag {}, query {}); schema changes are not replicated by this version",
                message.prefix(), type, Lsn.of(lsn), tag, query);
        return List.of();
    }
}

package org.zrm.example.jsonl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Builds ZRM's change-stream messages ({@code org.zrm.protocol}) for the source. It writes the
 * messages in their JSON wire form (the same as Zero's custom change-source protocol, see
 * docs/CHANGE-SOURCES.md) and lets {@link ProtocolCodec} decode them, so the example needs to know
 * one format only, the documented one.
 *
 * <p><b>SPI obligation: begin/commit pairing.</b> {@link #transaction} returns a whole
 * transaction, {@code begin, data*, commit}, with the commit's watermark equal to the begin's
 * {@code commitWatermark}; the stream hands out one such list at a time, so transactions never
 * interleave and none is ever half sent.
 */
final class Messages {

    private final ProtocolCodec codec = new ProtocolCodec();

    /** One line's transaction at its position's watermark. */
    List<ChangeStreamMessage> transaction(String watermark, TransactionLine line) {
        List<ChangeStreamMessage> out = new ArrayList<>(line.changes().size() + 2);
        out.add(begin(watermark));
        for (TransactionLine.RowChange c : line.changes()) {
            out.add(data(c));
        }
        out.add(commit(watermark));
        return out;
    }

    ChangeStreamMessage begin(String watermark) {
        ArrayNode m = array("begin");
        m.addObject().put("tag", "begin");
        m.addObject().put("commitWatermark", watermark);
        return decode(m);
    }

    ChangeStreamMessage commit(String watermark) {
        ArrayNode m = array("commit");
        m.addObject().put("tag", "commit");
        m.addObject().put("watermark", watermark);
        return decode(m);
    }

    /** {@code ["control", {"tag": "reset-required", "message": …}]}. */
    ChangeStreamMessage resetRequired(String message) {
        ArrayNode m = array("control");
        m.addObject().put("tag", "reset-required").put("message", message);
        return decode(m);
    }

    ChangeStreamMessage createTable(DirectorySchema.Table t) {
        ArrayNode m = array("data");
        ObjectNode spec = m.addObject().put("tag", "create-table").putObject("spec");
        spec.put("schema", t.schema()).put("name", t.name());
        ObjectNode cols = spec.putObject("columns");
        int pos = 1;
        for (Map.Entry<String, String> c : t.columns().entrySet()) {
            cols.putObject(c.getKey()).put("pos", pos++).put("dataType", c.getValue())
                    .put("notNull", t.primaryKey().contains(c.getKey()));
        }
        ArrayNode key = spec.putArray("primaryKey");
        t.primaryKey().forEach(key::add);
        return decode(m);
    }

    ChangeStreamMessage createIndex(DirectorySchema.Table t) {
        ArrayNode m = array("data");
        ObjectNode spec = m.addObject().put("tag", "create-index").putObject("spec");
        spec.put("schema", t.schema()).put("tableName", t.name()).put("name", t.name() + "_pkey").put("unique", true);
        ObjectNode cols = spec.putObject("columns");
        t.primaryKey().forEach(k -> cols.put(k, "ASC"));
        return decode(m);
    }

    ChangeStreamMessage data(TransactionLine.RowChange c) {
        ArrayNode m = array("data");
        ObjectNode change = m.addObject();
        change.put("tag", c.op().name().toLowerCase(java.util.Locale.ROOT));
        ObjectNode relation = change.putObject("relation");
        relation.put("schema", c.table().schema()).put("name", c.table().name());
        ArrayNode key = relation.putObject("rowKey").putArray("columns");
        c.table().primaryKey().forEach(key::add);
        switch (c.op()) {
            case INSERT -> change.set("new", c.values());
            case UPDATE -> {
                change.putNull("key"); // the key never changes (see TransactionLine)
                change.set("new", c.values());
            }
            case DELETE -> change.set("key", c.values());
        }
        return decode(m);
    }

    private static ArrayNode array(String type) {
        return DirectorySchema.MAPPER.createArrayNode().add(type);
    }

    private ChangeStreamMessage decode(ArrayNode m) {
        try {
            return codec.decodeChangeStreamMessage(DirectorySchema.MAPPER.writeValueAsString(m));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a message built in memory: " + e.getMessage(), e);
        }
    }
}

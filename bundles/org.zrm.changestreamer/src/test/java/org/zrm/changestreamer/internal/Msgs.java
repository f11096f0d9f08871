package org.zrm.changestreamer.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.Insert;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.Rollback;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.json.ProtocolCodec;

/** Protocol messages for tests. */
final class Msgs {

    static final ProtocolCodec CODEC = new ProtocolCodec();
    static final Relation FOO = new Relation("public", "foo", new RowKey(List.of("id")));

    private Msgs() {
    }

    static ChangeStreamMessage begin(String w) {
        return new BeginMessage(new Begin(null, null, Passthrough.NONE), w);
    }

    static ChangeStreamMessage insert(Object id) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", id);
        return new DataMessage(new Insert(FOO, row, Passthrough.NONE));
    }

    static ChangeStreamMessage commit(String w) {
        return new CommitMessage(new Commit(Passthrough.of(Map.of("extra", "fields"))), w);
    }

    static ChangeStreamMessage rollback() {
        return new RollbackMessage(new Rollback());
    }

    static ChangeStreamMessage status(String w, Boolean ack) {
        return new StatusMessage(new DownstreamStatus(ack, null, Passthrough.NONE), w);
    }

    static ChangeStreamMessage resetRequired(String message) {
        return new ChangeStreamMessage.ControlMessage(new org.zrm.protocol.ResetRequired(message, null, Passthrough.NONE));
    }

    static ChangeStreamMessage[] tx(String w, Object... ids) {
        ChangeStreamMessage[] out = new ChangeStreamMessage[ids.length + 2];
        out[0] = begin(w);
        for (int i = 0; i < ids.length; i++) {
            out[i + 1] = insert(ids[i]);
        }
        out[ids.length + 1] = commit(w);
        return out;
    }

    /** Live text of a change message. */
    static String json(ChangeStreamMessage m) {
        return CODEC.encode(m);
    }

    /** A watermarked change as forwarded. */
    static WatermarkedChange change(String w, ChangeStreamMessage m) {
        String tag = m instanceof DataMessage d ? d.change().tag() : m.type();
        return new WatermarkedChange(w, tag, CODEC.encode(m));
    }
}

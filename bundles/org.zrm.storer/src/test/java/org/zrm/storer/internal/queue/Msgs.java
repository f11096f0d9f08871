package org.zrm.storer.internal.queue;

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
import org.zrm.watermark.LexiVersion;

/** Builds protocol messages with their serialised text, as the change streamer hands them over. */
final class Msgs {

    static final ProtocolCodec CODEC = new ProtocolCodec();
    static final Relation FOO = new Relation("public", "foo", new RowKey(List.of("id")));

    /** A message and its text. */
    record M(ChangeStreamMessage message, String json) {
    }

    private Msgs() {
    }

    static String wm(long n) {
        return LexiVersion.encode(n);
    }

    static M begin(String w) {
        return of(new BeginMessage(new Begin(null, null, Passthrough.of(Map.of("xid", 7L))), w));
    }

    static M beginSkipAck(String w) {
        return of(new BeginMessage(new Begin(null, true, Passthrough.NONE), w));
    }

    static M insert(long id, String payload) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", id);
        row.put("payload", payload);
        return of(new DataMessage(new Insert(FOO, row, Passthrough.NONE)));
    }

    static M commit(String w) {
        return of(new CommitMessage(new Commit(Passthrough.of(Map.of("commitLsn", "0/" + w))), w));
    }

    static M rollback() {
        return of(new RollbackMessage(new Rollback()));
    }

    static M status(String w, Boolean ack) {
        return of(new StatusMessage(new DownstreamStatus(ack, null, Passthrough.NONE), w));
    }

    static M of(ChangeStreamMessage m) {
        return new M(m, CODEC.encode(m));
    }
}

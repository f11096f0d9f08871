package org.zrm.changesource.pg.internal.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.watermark.Lsn;

class ChangeMakerTest {

    private final ProtocolCodec codec = new ProtocolCodec();

    @Test
    void lsnTextMatchesPaddedFormat() {
        for (long v : new long[] {1, 0xA, 0x16B374D848L, -1L, 0x80000000_00000000L, 0x00000001_FFFFFFFFL}) {
            assertEquals(Lsn.of(v).toPaddedString(), ChangeMaker.lsnText(v));
        }
        assertNull(ChangeMaker.lsnText(0));
    }

    @Test
    void beginAndCommitBodies() {
        ChangeMaker m = new ChangeMaker("zero", 0, (lsn, msg) -> List.of());
        List<ChangeStreamMessage> b = m.makeChanges(1, new PgOutputMessage.Begin(0x16B374D848L, 1718812345678901L, 750));
        assertEquals("[\"begin\",{\"tag\":\"begin\",\"commitLsn\":\"00000016/B374D848\",\"commitTime\":1718812345678901,"
                + "\"xid\":750,\"json\":\"s\"},{\"commitWatermark\":\"718sh0nk8\"}]", codec.encode(b.get(0)));
        List<ChangeStreamMessage> c = m.makeChanges(2,
                new PgOutputMessage.Commit(0, 0x16B374D848L, 0x16B374D878L, 1718812345678901L));
        assertEquals("[\"commit\",{\"tag\":\"commit\",\"flags\":0,\"commitLsn\":\"00000016/B374D848\","
                + "\"commitEndLsn\":\"00000016/B374D878\",\"commitTime\":1718812345678901},{\"watermark\":\"718sh0nk8\"}]",
                codec.encode(c.get(0)));
    }

    @Test
    void deleteWithoutKeyRequiresResetAndStaysStopped() {
        ChangeMaker m = new ChangeMaker("zero", 0, (lsn, msg) -> List.of());
        PgOutputMessage.RelationInfo rel = new PgOutputMessage.RelationInfo(1, "s", "t",
                org.zrm.protocol.ReplicaIdentity.DEFAULT, List.of(), List.of(),
                new org.zrm.protocol.Relation("s", "t", new org.zrm.protocol.RowKey(List.of())));
        List<ChangeStreamMessage> out = m.makeChanges(0x10, new PgOutputMessage.Delete(rel, null, null));
        assertEquals("[\"rollback\",{\"tag\":\"rollback\"}]", codec.encode(out.get(0)));
        assertEquals("[\"control\",{\"tag\":\"reset-required\",\"message\":\"Unable to continue replication from LSN"
                + " 0/10\",\"errorDetails\":{\"error\":\"Unable to continue replication from LSN 0/10\",\"reason\":"
                + "\"IllegalArgumentException: Invalid DELETE msg (missing key) for s.t\"}}]", codec.encode(out.get(1)));
        assertEquals(List.of(), m.makeChanges(0x11, new PgOutputMessage.Insert(rel, Map.of())));
    }
}

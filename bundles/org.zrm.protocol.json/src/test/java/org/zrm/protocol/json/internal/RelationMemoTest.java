package org.zrm.protocol.json.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.Insert;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.RowKey;

class RelationMemoTest {

    private static Relation relation(String table, String... extra) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (int i = 0; i + 1 < extra.length; i += 2) {
            fields.put(extra[i], extra[i + 1]);
        }
        return new Relation("public", table, new RowKey(List.of("id"), ReplicaIdentity.DEFAULT, Passthrough.NONE),
                null, ReplicaIdentity.DEFAULT, fields.isEmpty() ? Passthrough.NONE : Passthrough.of(fields));
    }

    private static String plain(Insert insert) {
        JsonWriter w = new JsonWriter();
        ModelEncoder.change(w, insert);
        return w.toString();
    }

    private static String memoized(Insert insert, RelationMemo memo) {
        JsonWriter w = new JsonWriter(null, memo);
        ModelEncoder.change(w, insert);
        return w.toString();
    }

    /**
     * More relations than the memo has slots, each encoded several times in an interleaved order
     * and with passthrough members: the remembered text is always the text written member by
     * member, and a relation evicted by a colliding one is encoded again, not confused with it.
     */
    @Test
    void theRememberedTextIsTheEncodedTextForEveryRelation() {
        RelationMemo memo = new RelationMemo();
        List<Relation> relations = new ArrayList<>();
        for (int i = 0; i < RelationMemo.SLOTS * 4; i++) {
            relations.add(i % 3 == 0 ? relation("t" + i, "x", "y" + i) : relation("t" + i));
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", 1L);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < relations.size(); i++) {
                Relation r = relations.get((i * 7 + round) % relations.size());
                Insert insert = new Insert(r, row, Passthrough.NONE);
                assertEquals(plain(insert), memoized(insert, memo));
            }
        }
    }

    @Test
    void anEqualRelationBuiltAnewIsEncodedFromItsOwnMembers() {
        RelationMemo memo = new RelationMemo();
        Map<String, Object> row = Map.of("id", 1L);
        Insert first = new Insert(relation("a"), row, Passthrough.NONE);
        Insert renamed = new Insert(relation("b"), row, Passthrough.NONE);
        String a = memoized(first, memo);
        assertEquals(plain(renamed), memoized(renamed, memo));
        assertEquals(a, memoized(first, memo));
    }
}

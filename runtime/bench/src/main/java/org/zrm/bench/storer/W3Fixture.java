package org.zrm.bench.storer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.Insert;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Zero's PG benchmark fixture (W3; upstream {@code packages/zero-cache/src/test/pg-bench.ts}), ported:
 * deterministic rows for {@code bench_rows}, {@code bench_lookup}, {@code bench_wide} and
 * {@code bench_composite} whose payload sizes depend only on the row id, turned into the change
 * messages (and their JSON text) the Postgres change source produces for inserting them.
 */
final class W3Fixture {

    /** Decimal MB, as Zero reports payload throughput. */
    static final double BYTES_PER_MB = 1_000_000;

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    private static final Map<String, Relation> RELATIONS = Map.of(
            "bench_rows", relation("bench_rows", 16400, List.of("id")),
            "bench_lookup", relation("bench_lookup", 16401, List.of("id")),
            "bench_wide", relation("bench_wide", 16402, List.of("id")),
            "bench_composite", relation("bench_composite", 16403, List.of("account_id", "seq")));

    /** One message with its serialised text, as the change streamer hands it to the storer. */
    record Msg(ChangeStreamMessage message, String json) {
    }

    private W3Fixture() {
    }

    /** Upstream {@code payloadLength}: roughly uniform in {@code [min, max]}, a function of the id. */
    static int payloadLength(long id, int minBytes, int maxBytes) {
        long range = maxBytes - minBytes + 1L;
        return (int) (minBytes + ((id * 9973) % range));
    }

    /** Upstream {@code makePayload}: a repeated chunk of id, a 32-bit hash of it and the alphabet. */
    static String makePayload(long id, int minBytes, int maxBytes) {
        int length = payloadLength(id, minBytes, maxBytes);
        long seed = ((int) id * (int) 2654435761L) & 0xffffffffL; // Math.imul(id, 2654435761) >>> 0
        String chunk = Long.toString(id, 36) + ":" + Long.toString(seed, 36) + ":abcdefghijklmnopqrstuvwxyz0123456789:";
        StringBuilder b = new StringBuilder(length + chunk.length());
        while (b.length() < length) {
            b.append(chunk);
        }
        b.setLength(length);
        return b.toString();
    }

    /** Upstream {@code benchmarkFixtureRowPayloadBytes}. */
    static long rowPayloadBytes(long id) {
        int kind = (int) (id % 10);
        if (kind < 5) {
            return payloadLength(id, 256, 2048);
        }
        if (kind < 7) {
            return ("wide row " + id).length() + payloadLength(id, 2048, 8192) + payloadLength(id + 17, 512, 2048);
        }
        if (kind < 9) {
            return payloadLength(id, 128, 1024);
        }
        return ("lookup-" + (id % 10_000)).length();
    }

    /** Upstream {@code benchmarkFixturePayloadBytes}. */
    static long payloadBytes(long startId, int count) {
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += rowPayloadBytes(startId + i);
        }
        return total;
    }

    /** Upstream's split of ids over the tables: the table row {@code id} belongs to. */
    static String table(long id) {
        int kind = (int) (id % 10);
        return kind < 5 ? "bench_rows" : kind < 7 ? "bench_wide" : kind < 9 ? "bench_composite" : "bench_lookup";
    }

    /**
     * Upstream {@code makeBenchmarkFixtureRow}: the table (by {@code id % 10}) and its row, whose
     * values are in the table's column order.
     */
    static Insert insert(long id) {
        String table = table(id);
        Map<String, Object> row = new LinkedHashMap<>();
        if (table.equals("bench_rows")) {
            row.put("id", id);
            row.put("payload", makePayload(id, 256, 2048));
        } else if (table.equals("bench_wide")) {
            row.put("id", id);
            row.put("group_id", id % 128);
            row.put("title", "wide row " + id);
            row.put("body", makePayload(id, 2048, 8192));
            row.put("extra", makePayload(id + 17, 512, 2048));
        } else if (table.equals("bench_composite")) {
            row.put("account_id", id % 1_000);
            row.put("seq", id / 1_000);
            row.put("payload", makePayload(id, 128, 1024));
            row.put("amount", id % 100_000);
        } else {
            row.put("id", id);
            row.put("label", "lookup-" + (id % 10_000));
            row.put("active", id % 2 == 0);
        }
        return new Insert(RELATIONS.get(table), row, Passthrough.NONE);
    }

    /**
     * One upstream transaction inserting rows {@code startId .. startId+count-1}, as the PG source
     * sends it: begin, one insert per row, commit, all with their JSON text.
     */
    static List<Msg> transaction(String watermark, long startId, int count) {
        List<Msg> out = new ArrayList<>(count + 2);
        out.add(msg(new BeginMessage(new Begin(null, null, Passthrough.of(ordered(
                "commitLsn", "0/" + watermark, "commitTime", 1_700_000_000_000_000L, "xid", 1000L + startId))), watermark)));
        for (int i = 0; i < count; i++) {
            out.add(msg(new DataMessage(insert(startId + i))));
        }
        out.add(msg(new CommitMessage(new Commit(Passthrough.of(ordered("flags", 0L, "commitLsn", "0/" + watermark,
                "commitEndLsn", "0/" + watermark, "commitTime", 1_700_000_000_000_000L))), watermark)));
        return out;
    }

    private static Msg msg(ChangeStreamMessage m) {
        return new Msg(m, CODEC.encode(m));
    }

    private static Relation relation(String name, long oid, List<String> key) {
        return new Relation("public", name, new RowKey(key, ReplicaIdentity.DEFAULT, Passthrough.NONE), key,
                ReplicaIdentity.DEFAULT, Passthrough.of(ordered("tag", "relation", "relationOid", oid)));
    }

    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }
}

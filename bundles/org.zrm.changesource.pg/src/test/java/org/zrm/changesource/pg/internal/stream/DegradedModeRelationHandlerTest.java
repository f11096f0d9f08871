package org.zrm.changesource.pg.internal.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The comparisons of degraded mode that the Postgres tests cannot provoke on demand (an unsigned
 * type OID, a missing initial schema, a failing catalog query), and how the change maker treats
 * each outcome. The schema-change matrix itself runs against Postgres in {@code DegradedModePgTest}.
 */
class DegradedModeRelationHandlerTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    /** A type OID above 2^31, as user-defined types get on long-lived clusters. */
    private static final long BIG_TYPE_OID = 3_000_000_000L;

    /** {@code s.t (a int4 NOT NULL, b big_type)} with {@code PRIMARY KEY (pk...)}. */
    private static PublishedSchema schema(List<String> pk) {
        Map<String, Object> columns = new LinkedHashMap<>();
        columns.put("a", column(1, "int4", 23, true));
        columns.put("b", column(2, "big_type", BIG_TYPE_OID, false));
        Map<String, Object> table = new LinkedHashMap<>();
        table.put("oid", 16384L);
        table.put("schema", "s");
        table.put("schemaOID", 2200L);
        table.put("name", "t");
        table.put("replicaIdentity", "d");
        table.put("columns", columns);
        table.put("primaryKey", new ArrayList<Object>(pk));
        table.put("publications", Map.of("p", new LinkedHashMap<>(Map.of())));
        Map<String, Object> raw = new LinkedHashMap<>();
        raw.put("tables", List.of(table));
        raw.put("indexes", List.of());
        return PublishedSchema.parse(raw);
    }

    private static Map<String, Object> column(long pos, String type, long typeOid, boolean notNull) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("pos", pos);
        c.put("dataType", type);
        c.put("pgTypeClass", "b");
        c.put("elemPgTypeClass", null);
        c.put("typeOID", typeOid);
        c.put("characterMaximumLength", null);
        c.put("notNull", notNull);
        c.put("dflt", null);
        return c;
    }

    private static PgOutputMessage.Relation relation(ReplicaIdentity identity, List<String> keys, String... names) {
        List<PgOutputMessage.Column> cols = new ArrayList<>();
        long[] oids = {23, BIG_TYPE_OID};
        for (int i = 0; i < names.length; i++) {
            cols.add(new PgOutputMessage.Column(names[i], keys.contains(names[i]) ? 1 : 0, oids[i % 2], -1, null));
        }
        return new PgOutputMessage.Relation(new PgOutputMessage.RelationInfo(16384L, "s", "t", identity, cols, keys,
                new org.zrm.protocol.Relation("s", "t", new org.zrm.protocol.RowKey(keys))));
    }

    @Test
    void unchangedRelationPassesIncludingUnsignedTypeOids() {
        PublishedSchema s = schema(List.of("a"));
        DegradedModeRelationHandler h = new DegradedModeRelationHandler(s, () -> s);
        assertEquals(List.of(), h.handle(relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "b")));
    }

    @Test
    void keyColumnsAreComparedAsASetAndOnlyForDefaultIdentity() {
        PublishedSchema s = schema(List.of("b", "a"));
        DegradedModeRelationHandler h = new DegradedModeRelationHandler(s, () -> s);
        // The Relation message flags key columns in column order; the primary key is (b, a).
        assertEquals(List.of(), h.handle(relation(ReplicaIdentity.DEFAULT, List.of("a", "b"), "a", "b")));
        MissingEventTriggerSupport e = assertThrows(MissingEventTriggerSupport.class,
                () -> h.handle(relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "b")));
        assertTrue(e.getMessage().startsWith("relation has changed within the transaction: {\"oid\":16384,"),
                e.getMessage());
        assertTrue(e.getMessage().endsWith(" vs {\"tag\":\"relation\",\"relationOid\":16384,\"schema\":\"s\",\"name\":"
                + "\"t\",\"replicaIdentity\":\"default\",\"columns\":[{\"flags\":1,\"name\":\"a\",\"typeOid\":23,"
                + "\"typeMod\":-1},{\"flags\":0,\"name\":\"b\",\"typeOid\":3000000000,\"typeMod\":-1}],\"keyColumns\":"
                + "[\"a\"]}" + MissingEventTriggerSupport.SUFFIX), e.getMessage());
        // Other identities name other key columns: not compared with the primary key.
        assertEquals(List.of(), h.handle(relation(ReplicaIdentity.FULL, List.of("a", "b"), "a", "b")));
    }

    @Test
    void catalogDifferenceIsReportedBeforeTheRelation() {
        PublishedSchema initial = schema(List.of("a"));
        PublishedSchema rekeyed = schema(List.of("a", "b"));
        DegradedModeRelationHandler h = new DegradedModeRelationHandler(initial, () -> rekeyed);
        MissingEventTriggerSupport e = assertThrows(MissingEventTriggerSupport.class,
                () -> h.handle(relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "b")));
        assertEquals("Primary key of table \"t\" has changed" + MissingEventTriggerSupport.SUFFIX, e.getMessage());
    }

    @Test
    void withoutAnInitialSchemaEveryRelationHalts() {
        PublishedSchema s = schema(List.of("a"));
        MissingEventTriggerSupport e = assertThrows(MissingEventTriggerSupport.class,
                () -> new DegradedModeRelationHandler(null, () -> s).handle(
                        relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "b")));
        assertEquals("no initialSchema recorded for the replica to compare s.t with" + MissingEventTriggerSupport.SUFFIX,
                e.getMessage());
    }

    @Test
    void changeMakerResetsOnASchemaChangeButLetsQueryFailuresThrough() {
        PublishedSchema s = schema(List.of("a"));
        SQLException refused = new SQLException("Connection refused", "08001");
        boolean[] fail = {true};
        ChangeMaker m = new ChangeMaker("zero", 0, (lsn, msg) -> List.of(), new DegradedModeRelationHandler(s, () -> {
            if (fail[0]) {
                throw refused;
            }
            return s;
        }));
        TransientUpstreamException t = assertThrows(TransientUpstreamException.class,
                () -> m.makeChanges(1, relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "b")));
        assertSame(refused, t.getCause());
        assertTrue(t.getMessage().startsWith("reading the published schema for the Relation message of s.t:"
                + " Connection refused (connection failed:"), t.getMessage());
        assertFalse(m.failed(), "a query failure is no reason to reset");

        fail[0] = false;
        assertEquals(List.of(), m.makeChanges(2, relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "b")));
        List<ChangeStreamMessage> out = m.makeChanges(3, relation(ReplicaIdentity.DEFAULT, List.of("a"), "a", "c"));
        assertEquals("[\"rollback\",{\"tag\":\"rollback\"}]", CODEC.encode(out.get(0)));
        String control = CODEC.encode(out.get(1));
        assertTrue(control.contains("\"reason\":\"MissingEventTriggerSupport: relation has changed within the"
                + " transaction: "), control);
        assertTrue(m.failed());
    }
}

package org.zrm.changesource.pg.internal.stream;

import java.sql.SQLException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.zrm.changesource.pg.internal.replication.PgErrors;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Schema-change detection for shards without event triggers ({@code ddlDetection = false}, spec
 * §3.2, upstream {@code #handleRelation}). Such a shard cannot replicate schema changes, only notice
 * them; every Relation message is therefore checked twice and any difference throws
 * {@link MissingEventTriggerSupport}, which the {@link ChangeMaker} turns into {@code rollback} +
 * {@code reset-required}:
 * <ol>
 *   <li>the schema published now against the {@code initialSchema} the replica was synced with:
 *       table count, then table by table (in query order) oid, schema, name, primary key (in key
 *       order) and the columns by position (name, attnum, type oid, NOT NULL). Indexes are not
 *       compared: an index change needs no halt.</li>
 *   <li>the Relation message itself against the initial table of its OID. The catalog shows the
 *       state <em>after</em> the transaction, so a change undone within it (rename and rename
 *       back, create and drop) is only visible in the Relation message: it must still name the
 *       same table, have the same key columns (as a set: the message lists them in column order,
 *       the primary key is in key order) and the same columns by position (name, type oid).</li>
 * </ol>
 *
 * <p>Cost: each check runs the published-schema query on a connection of its own (never the
 * replication connection, which is busy streaming). That is one round trip per Relation message,
 * and Postgres sends one per relation per walsender session plus one after each change of that
 * relation, so the cost is per table and session, not per row. A failure of that query says
 * nothing about the schema; it is a {@link TransientUpstreamException}, so the stream is retried
 * rather than the replica reset.
 */
public final class DegradedModeRelationHandler implements RelationHandler {

    /** Reads the schema currently published by the shard's publications. */
    @FunctionalInterface
    public interface CurrentSchema {
        /** @throws SQLException if upstream cannot be queried */
        PublishedSchema read() throws SQLException;
    }

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private final PublishedSchema initialSchema;
    private final CurrentSchema current;

    /**
     * @param initialSchema the schema recorded at initial sync ({@code replicas."initialSchema"}),
     *     or {@code null} if the replica row has none (every Relation message then halts: there is
     *     nothing to compare with, and a re-sync records it)
     * @param current reads the schema published now
     */
    public DegradedModeRelationHandler(PublishedSchema initialSchema, CurrentSchema current) {
        this.initialSchema = initialSchema;
        this.current = Objects.requireNonNull(current, "current");
    }

    @Override
    public List<ChangeStreamMessage> handle(PgOutputMessage.Relation message) {
        PgOutputMessage.RelationInfo rel = message.relation();
        if (initialSchema == null) {
            throw new MissingEventTriggerSupport("no initialSchema recorded for the replica to compare "
                    + rel.schema() + "." + rel.name() + " with");
        }
        PublishedSchema now;
        try {
            now = current.read();
        } catch (SQLException e) {
            throw new TransientUpstreamException("reading the published schema for the Relation message of "
                    + rel.schema() + "." + rel.name() + ": " + e.getMessage() + PgErrors.hint(
                            e.getSQLState() == null ? "" : e.getSQLState(), String.valueOf(e.getMessage())), e);
        }
        String difference = schemaDifference(initialSchema, now);
        if (difference != null) {
            throw new MissingEventTriggerSupport(difference);
        }
        int index = indexOf(initialSchema, rel.oid());
        if (index < 0) {
            // e.g. a table created and dropped again within the transaction
            throw new MissingEventTriggerSupport("relation not in initialSchema: " + describe(rel));
        }
        if (relationDifferent(initialSchema.tables().get(index), rel)) {
            throw new MissingEventTriggerSupport("relation has changed within the transaction: "
                    + describeInitial(index) + " vs " + describe(rel));
        }
        return List.of();
    }

    /** @return what differs between the two schemas (ignoring indexes), or {@code null} */
    static String schemaDifference(PublishedSchema a, PublishedSchema b) {
        if (a.tables().size() != b.tables().size()) {
            return "tables created or dropped";
        }
        for (int i = 0; i < a.tables().size(); i++) {
            String d = tableDifference(a.tables().get(i), b.tables().get(i));
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    private static String tableDifference(PublishedTable a, PublishedTable b) {
        if (a.oid() != b.oid() || !a.schema().equals(b.schema()) || !a.name().equals(b.name())) {
            return "Table \"" + a.name() + "\" differs from table \"" + b.name() + "\"";
        }
        if (!a.primaryKey().equals(b.primaryKey())) {
            return "Primary key of table \"" + a.name() + "\" has changed";
        }
        List<PublishedColumn> ac = a.columnsByPos();
        List<PublishedColumn> bc = b.columnsByPos();
        boolean changed = ac.size() != bc.size();
        for (int i = 0; !changed && i < ac.size(); i++) {
            PublishedColumn x = ac.get(i);
            PublishedColumn y = bc.get(i);
            changed = !x.name().equals(y.name()) || x.pos() != y.pos() || x.typeOid() != y.typeOid()
                    || x.notNull() != y.notNull();
        }
        return changed ? "Columns of table \"" + a.name() + "\" have changed" : null;
    }

    static boolean relationDifferent(PublishedTable a, PgOutputMessage.RelationInfo b) {
        if (a.oid() != b.oid() || !a.schema().equals(b.schema()) || !a.name().equals(b.name())) {
            return true;
        }
        // Key order cannot be seen in a Relation message (it flags key columns in column order),
        // so only the set is compared; the catalog comparison covers the order.
        if (b.identity() == ReplicaIdentity.DEFAULT
                && !new HashSet<>(a.primaryKey()).equals(new HashSet<>(b.keyColumns()))) {
            return true;
        }
        List<PublishedColumn> ac = a.columnsByPos();
        List<PgOutputMessage.Column> bc = b.columns();
        if (ac.size() != bc.size()) {
            return true;
        }
        for (int i = 0; i < ac.size(); i++) {
            // Type OIDs are unsigned; the published schema holds them as int.
            if (!ac.get(i).name().equals(bc.get(i).name())
                    || Integer.toUnsignedLong(ac.get(i).typeOid()) != bc.get(i).typeOid()) {
                return true;
            }
        }
        return false;
    }

    private static int indexOf(PublishedSchema schema, long oid) {
        for (int i = 0; i < schema.tables().size(); i++) {
            if (schema.tables().get(i).oid() == oid) {
                return i;
            }
        }
        return -1;
    }

    @SuppressWarnings("unchecked")
    private String describeInitial(int index) {
        return CODEC.encodeValue(((List<Object>) initialSchema.json().get("tables")).get(index));
    }

    /** The Relation message as JSON, in the shape upstream logs it (without the value parsers). */
    static String describe(PgOutputMessage.RelationInfo rel) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tag", "relation");
        m.put("relationOid", rel.oid());
        m.put("schema", rel.schema());
        m.put("name", rel.name());
        m.put("replicaIdentity", rel.identity() == null ? null : rel.identity().wire());
        m.put("columns", rel.columns().stream().map(c -> {
            Map<String, Object> col = new LinkedHashMap<>();
            col.put("flags", (long) c.flags());
            col.put("name", c.name());
            col.put("typeOid", c.typeOid());
            col.put("typeMod", (long) c.typeMod());
            return (Object) col;
        }).toList());
        m.put("keyColumns", List.copyOf(rel.keyColumns()));
        return CODEC.encodeValue(m);
    }
}

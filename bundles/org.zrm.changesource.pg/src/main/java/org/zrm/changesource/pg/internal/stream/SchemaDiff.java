package org.zrm.changesource.pg.internal.stream;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedIndex;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.setup.UnsupportedTableSchemaException;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.CreateIndex;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DropColumn;
import org.zrm.protocol.DropIndex;
import org.zrm.protocol.DropTable;
import org.zrm.protocol.RenameTable;
import org.zrm.protocol.SchemaChange;
import org.zrm.protocol.UpdateColumn;
import org.zrm.protocol.UpdateTableMetadata;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteDefaults;
import org.zrm.replica.UnsupportedColumnDefaultException;

/**
 * The schema changes between two published schemas (spec §4.5 step 6, upstream
 * {@code #makeSchemaChanges} and {@code #getTableChanges}).
 *
 * <p>Identity: tables by {@code oid}, indexes by {@code "schema.name"}, columns by {@code pos}
 * (attnum, never reused), so renames are recognised as renames. Order: every drop before every
 * alteration before every creation, and indexes dropped first and created last, because SQLite
 * refuses to drop a column an index still uses and an index can only be created on columns that
 * exist.
 *
 * <p><b>Encoding.</b> Each change is first built as the JSON object upstream builds, member for
 * member ({@code spec}s are the published JSON of the event, extra members and order included),
 * and then read into the protocol record; the record re-encodes to the same bytes, which is what
 * makes the change log identical to zero-cache's.
 *
 * <p>Iteration orders follow upstream's JavaScript {@code Map}/{@code Set} semantics: dropped and
 * created entities in the order of their schema, kept entities in the order of the smaller of the
 * two schemas (upstream's {@code intersection} iterates the smaller set).
 */
public final class SchemaDiff {

    private static final Logger LOG = LoggerFactory.getLogger(SchemaDiff.class);

    private final TableValidator validator;
    private final ProtocolCodec codec;

    /**
     * @param validator checks every table of the next schema, as initial sync does
     * @param codec reads the built JSON into protocol records
     */
    public SchemaDiff(TableValidator validator, ProtocolCodec codec) {
        this.validator = Objects.requireNonNull(validator, "validator");
        this.codec = Objects.requireNonNull(codec, "codec");
    }

    /**
     * @param prev the schema before the change
     * @param next the schema after the change
     * @param tag the effective command tag (decides backfills)
     * @return the changes, in replication order
     * @throws UnsupportedTableSchemaException if a table of {@code next} cannot be replicated
     */
    public List<SchemaChange> diff(PublishedSchema prev, PublishedSchema next, String tag) {
        Map<Long, Table> prevTbl = tablesByOid(prev);
        Map<Long, Table> nextTbl = tablesByOid(next);
        Map<String, Index> prevIdx = indexesById(prev);
        Map<String, Index> nextIdx = indexesById(next);

        for (Table t : nextTbl.values()) {
            validator.validate(t.table, next.indexes());
        }

        Set<String> droppedIdx = minus(prevIdx.keySet(), nextIdx.keySet());
        Set<String> createdIdx = minus(nextIdx.keySet(), prevIdx.keySet());
        for (String id : intersection(prevIdx.keySet(), nextIdx.keySet())) {
            if (structurallyChanged(prevIdx.get(id).index, nextIdx.get(id).index, prevTbl, nextTbl)) {
                droppedIdx.add(id);
                createdIdx.add(id);
            }
        }

        List<SchemaChange> changes = new ArrayList<>();
        for (String id : droppedIdx) {
            PublishedIndex i = prevIdx.get(id).index;
            changes.add(change(DropIndex.TAG, "id", identifier(i.schema(), i.name())));
        }
        for (Long oid : minus(prevTbl.keySet(), nextTbl.keySet())) {
            PublishedTable t = prevTbl.get(oid).table;
            changes.add(change(DropTable.TAG, "id", identifier(t.schema(), t.name())));
        }
        for (Long oid : intersection(prevTbl.keySet(), nextTbl.keySet())) {
            tableChanges(prevTbl.get(oid), nextTbl.get(oid), tag, changes);
        }
        for (Long oid : minus(nextTbl.keySet(), prevTbl.keySet())) {
            Table t = nextTbl.get(oid);
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("tag", CreateTable.TAG);
            c.put("spec", t.json);
            c.put("metadata", metadata(t.table));
            // Only a table made by CREATE starts empty; one that appears through ALTER
            // PUBLICATION, SET SCHEMA, COMMENT, MANUAL or an unknown command may hold rows.
            if (!tag.startsWith("CREATE")) {
                Map<String, Object> backfill = new LinkedHashMap<>();
                columnsInJsonOrder(t).forEach(col -> backfill.put(col.name(), attNum(col.pos())));
                c.put("backfill", backfill);
            }
            changes.add(decode(c));
        }
        for (String id : createdIdx) {
            changes.add(change(CreateIndex.TAG, "spec", nextIdx.get(id).json));
        }
        return changes;
    }

    private void tableChanges(Table oldT, Table newT, String tag, List<SchemaChange> changes) {
        PublishedTable o = oldT.table;
        PublishedTable n = newT.table;
        if (!o.schema().equals(n.schema()) || !o.name().equals(n.name())) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("tag", RenameTable.TAG);
            c.put("old", identifier(o.schema(), o.name()));
            c.put("new", identifier(n.schema(), n.name()));
            changes.add(decode(c));
        }
        Map<String, Object> oldMeta = metadata(o);
        Map<String, Object> newMeta = metadata(n);
        if (!oldMeta.equals(newMeta)) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("tag", UpdateTableMetadata.TAG);
            c.put("table", identifier(n.schema(), n.name()));
            c.put("old", oldMeta);
            c.put("new", newMeta);
            changes.add(decode(c));
        }
        Map<String, Object> table = identifier(n.schema(), n.name());
        Map<Integer, PublishedColumn> oldCols = columnsByPos(oldT);
        Map<Integer, PublishedColumn> newCols = columnsByPos(newT);

        for (Integer pos : minus(oldCols.keySet(), newCols.keySet())) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("tag", DropColumn.TAG);
            c.put("table", table);
            c.put("column", oldCols.get(pos).name());
            changes.add(decode(c));
        }
        for (Integer pos : intersection(oldCols.keySet(), newCols.keySet())) {
            PublishedColumn oc = oldCols.get(pos);
            PublishedColumn nc = newCols.get(pos);
            // Name, type and nullability are what the replica reflects; a changed default alone
            // does not matter to rows that already exist.
            if (!oc.name().equals(nc.name()) || !oc.dataType().equals(nc.dataType()) || oc.notNull() != nc.notNull()) {
                Map<String, Object> c = new LinkedHashMap<>();
                c.put("tag", UpdateColumn.TAG);
                c.put("table", table);
                c.put("old", namedColumn(oc.name(), oldT.columnJson(oc.name())));
                c.put("new", namedColumn(nc.name(), newT.columnJson(nc.name())));
                changes.add(decode(c));
            }
        }
        // Only ALTER TABLE adds a column that existing rows can take from a constant default;
        // a column that appears any other way (ALTER PUBLICATION, COMMENT, MANUAL, UNKNOWN) may
        // already hold values upstream.
        boolean alwaysBackfill = !"ALTER TABLE".equals(tag);
        for (Integer pos : minus(newCols.keySet(), oldCols.keySet())) {
            PublishedColumn col = newCols.get(pos);
            Map<String, Object> spec = newT.columnJson(col.name());
            boolean backfill = alwaysBackfill;
            if (!backfill) {
                try {
                    LiteDefaults.mapPostgresToLiteDefault(n.name(), col.name(), col.dflt());
                } catch (UnsupportedColumnDefaultException e) {
                    // Added hidden with a null default and published once upstream's values are
                    // backfilled (which needs a usable replica identity).
                    LOG.info("Backfilling column {}.{}: {}", n.name(), col.name(), e.getMessage());
                    backfill = true;
                }
            }
            if (backfill) {
                spec.put("dflt", null);
            }
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("tag", AddColumn.TAG);
            c.put("table", table);
            c.put("column", namedColumn(col.name(), spec));
            c.put("tableMetadata", metadata(n));
            if (backfill) {
                c.put("backfill", attNum(col.pos()));
            }
            changes.add(decode(c));
        }
    }

    /**
     * Whether a kept index (same {@code schema.name}) was really recreated, e.g. a constraint
     * dropped and added again under the same name in one ALTER TABLE. Renames of its table or
     * columns change the spec but not the index, so columns are compared by attnum.
     */
    static boolean structurallyChanged(PublishedIndex prev, PublishedIndex next, Map<Long, Table> prevTables,
            Map<Long, Table> nextTables) {
        if (prev.unique() != next.unique() || prev.isPrimaryKey() != next.isPrimaryKey()
                || prev.isReplicaIdentity() != next.isReplicaIdentity() || prev.isImmediate() != next.isImmediate()) {
            return true;
        }
        PublishedTable pt = find(prevTables, prev.schema(), prev.tableName());
        PublishedTable nt = find(nextTables, next.schema(), next.tableName());
        if (pt == null || nt == null || prev.columns().size() != next.columns().size()) {
            return true;
        }
        Map<Integer, String> prevByPos = byPos(prev, pt);
        Map<Integer, String> nextByPos = byPos(next, nt);
        if (prevByPos == null || nextByPos == null || prevByPos.size() != nextByPos.size()) {
            return true;
        }
        // Compared as maps, as upstream does: a reordering of the same columns is not detected.
        return !prevByPos.equals(nextByPos);
    }

    private static Map<Integer, String> byPos(PublishedIndex index, PublishedTable table) {
        Map<Integer, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : index.columns().entrySet()) {
            PublishedColumn col = table.columns().get(e.getKey());
            if (col == null) {
                return null;
            }
            out.put(col.pos(), e.getValue());
        }
        return out;
    }

    private static PublishedTable find(Map<Long, Table> tables, String schema, String name) {
        for (Table t : tables.values()) {
            if (t.table.schema().equals(schema) && t.table.name().equals(name)) {
                return t.table;
            }
        }
        return null;
    }

    /** {@code {schemaOID, relationOID, rowKey: {col: {attNum}}}} over the replica identity columns. */
    static Map<String, Object> metadata(PublishedTable t) {
        Map<String, Object> rowKey = new LinkedHashMap<>();
        for (String k : t.replicaIdentityColumns()) {
            PublishedColumn col = t.columns().get(k);
            if (col == null) {
                throw new IllegalStateException("replica identity column \"" + k + "\" of table \"" + t.name()
                        + "\" is not published");
            }
            rowKey.put(k, attNum(col.pos()));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schemaOID", t.schemaOid());
        m.put("relationOID", t.oid());
        m.put("rowKey", rowKey);
        return m;
    }

    private static Map<String, Object> attNum(int pos) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("attNum", (long) pos);
        return m;
    }

    private static Map<String, Object> identifier(String schema, String name) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema", schema);
        m.put("name", name);
        return m;
    }

    private static Map<String, Object> namedColumn(String name, Map<String, Object> spec) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("spec", spec);
        return m;
    }

    private SchemaChange change(String tag, String member, Object value) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("tag", tag);
        c.put(member, value);
        return decode(c);
    }

    private SchemaChange decode(Map<String, Object> change) {
        return (SchemaChange) codec.decodeChange(codec.encodeValue(change));
    }

    private static <T> Set<T> minus(Set<T> a, Set<T> b) {
        Set<T> out = new LinkedHashSet<>(a);
        out.removeAll(b);
        return out;
    }

    private static <T> Set<T> intersection(Set<T> a, Set<T> b) {
        Set<T> small = a.size() > b.size() ? b : a;
        Set<T> large = small == a ? b : a;
        Set<T> out = new LinkedHashSet<>();
        for (T t : small) {
            if (large.contains(t)) {
                out.add(t);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<Long, Table> tablesByOid(PublishedSchema s) {
        List<Object> json = (List<Object>) s.json().get("tables");
        Map<Long, Table> out = new LinkedHashMap<>();
        for (int i = 0; i < s.tables().size(); i++) {
            PublishedTable t = s.tables().get(i);
            out.put(t.oid(), new Table(t, (Map<String, Object>) json.get(i)));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Index> indexesById(PublishedSchema s) {
        List<Object> json = (List<Object>) s.json().get("indexes");
        Map<String, Index> out = new LinkedHashMap<>();
        for (int i = 0; i < s.indexes().size(); i++) {
            PublishedIndex idx = s.indexes().get(i);
            out.put(idx.schema() + "." + idx.name(), new Index(idx, (Map<String, Object>) json.get(i)));
        }
        return out;
    }

    /** Columns keyed by attnum, in the JSON member order of the table's {@code columns}. */
    private static Map<Integer, PublishedColumn> columnsByPos(Table t) {
        Map<Integer, PublishedColumn> out = new LinkedHashMap<>();
        for (PublishedColumn c : columnsInJsonOrder(t)) {
            out.put(c.pos(), c);
        }
        return out;
    }

    private static List<PublishedColumn> columnsInJsonOrder(Table t) {
        return List.copyOf(t.table.columns().values());
    }

    /** A published table with its JSON (with {@code replicaIdentityColumns}). */
    record Table(PublishedTable table, Map<String, Object> json) {
        /** A mutable copy of the column's published JSON (the spec of add/update-column). */
        @SuppressWarnings("unchecked")
        Map<String, Object> columnJson(String name) {
            return new LinkedHashMap<>((Map<String, Object>) ((Map<String, Object>) json.get("columns")).get(name));
        }
    }

    /** A published index with its JSON. */
    record Index(PublishedIndex index, Map<String, Object> json) {}
}

package org.zrm.changesource.pg.internal.setup;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.zrm.protocol.CreateIndex;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.JsonValues;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.TableSpec;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteTypes;

/**
 * The published tables and indexes of a set of publications, parsed from the published-schema
 * query's JSON ({@link #json()} keeps the raw value plus {@code replicaIdentityColumns}, the form
 * stored in {@code replicas."initialSchema"}).
 *
 * <p>QUIRK "typelem-based array detection" (spec §4.3): reproduced. {@code elemPgTypeClass} comes
 * from {@code typelem}, so {@code name}, {@code point}, {@code int2vector}, {@code oidvector} columns
 * look like arrays (lite type gets {@code |TEXT_ARRAY}, zero-cache does the same, so replicas stay
 * identical). Value conversion does not follow it: {@code PgType#isArray()} requires
 * {@code typcategory = 'A'}, and binary COPY selects such columns as text. Both are tested.
 */
public record PublishedSchema(List<PublishedTable> tables, List<PublishedIndex> indexes, Map<String, Object> json) {

    /** Parses the query result ({@code {"tables": [...], "indexes": [...]}}). */
    @SuppressWarnings("unchecked")
    public static PublishedSchema parse(Map<String, Object> raw) {
        List<PublishedIndex> indexes = new ArrayList<>();
        for (Object o : (List<Object>) raw.get("indexes")) {
            Map<String, Object> m = (Map<String, Object>) o;
            Map<String, String> cols = new LinkedHashMap<>();
            ((Map<String, Object>) m.get("columns")).forEach((k, v) -> cols.put(k, (String) v));
            indexes.add(new PublishedIndex((String) m.get("schema"), (String) m.get("tableName"), (String) m.get("name"),
                    bool(m.get("unique")), bool(m.get("isPrimaryKey")), bool(m.get("isReplicaIdentity")),
                    bool(m.get("isImmediate")), Map.copyOf(cols).isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(cols)));
        }
        List<PublishedTable> tables = new ArrayList<>();
        List<Object> tablesJson = new ArrayList<>();
        for (Object o : (List<Object>) raw.get("tables")) {
            Map<String, Object> m = (Map<String, Object>) o;
            Map<String, PublishedColumn> columns = new LinkedHashMap<>();
            ((Map<String, Object>) m.get("columns")).forEach((name, c) -> {
                Map<String, Object> cm = (Map<String, Object>) c;
                Object maxLen = cm.get("characterMaximumLength");
                columns.put(name, new PublishedColumn(name, ((Number) cm.get("pos")).intValue(), (String) cm.get("dataType"),
                        PgTypeClass.fromWire((String) cm.get("pgTypeClass")),
                        cm.get("elemPgTypeClass") == null ? null : PgTypeClass.fromWire((String) cm.get("elemPgTypeClass")),
                        ((Number) cm.get("typeOID")).intValue(), maxLen == null ? null : ((Number) maxLen).longValue(),
                        bool(cm.get("notNull")), (String) cm.get("dflt")));
            });
            List<String> pk = new ArrayList<>();
            if (m.get("primaryKey") != null) {
                ((List<Object>) m.get("primaryKey")).forEach(k -> pk.add((String) k));
            }
            List<String> pubs = new ArrayList<>();
            List<String> filters = new ArrayList<>();
            ((Map<String, Object>) m.get("publications")).forEach((pub, spec) -> {
                pubs.add(pub);
                Object f = ((Map<String, Object>) spec).get("rowFilter");
                if (f != null) {
                    filters.add((String) f);
                }
            });
            String schema = (String) m.get("schema");
            String name = (String) m.get("name");
            char ident = ((String) m.get("replicaIdentity")).charAt(0);
            List<String> identityCols = replicaIdentityColumns(schema, name, ident, pk, columns, indexes);
            tables.add(new PublishedTable(((Number) m.get("oid")).longValue(), schema,
                    ((Number) m.get("schemaOID")).longValue(), name, ident, java.util.Collections.unmodifiableMap(columns),
                    List.copyOf(pk), List.copyOf(pubs), List.copyOf(filters), List.copyOf(identityCols)));
            Map<String, Object> withIdentity = new LinkedHashMap<>(m);
            withIdentity.put("replicaIdentityColumns", List.copyOf(identityCols));
            tablesJson.add(JsonValues.freezeObject(withIdentity));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("tables", JsonValues.freezeList(tablesJson));
        json.put("indexes", raw.get("indexes"));
        return new PublishedSchema(List.copyOf(tables), List.copyOf(indexes), JsonValues.freezeObject(json));
    }

    private static boolean bool(Object o) {
        return Boolean.TRUE.equals(o);
    }

    private static List<String> replicaIdentityColumns(String schema, String name, char ident, List<String> pk,
            Map<String, PublishedColumn> columns, List<PublishedIndex> indexes) {
        switch (ident) {
            case 'd':
                return pk;
            case 'i':
                return indexes.stream()
                        .filter(i -> i.schema().equals(schema) && i.tableName().equals(name) && i.isReplicaIdentity())
                        .findFirst().map(i -> (List<String>) new ArrayList<>(i.columns().keySet())).orElse(List.of());
            case 'f':
                return chooseRowKey(schema, name, columns, indexes).orElse(List.of());
            default:
                return List.of();
        }
    }

    /**
     * The key the replica uses for a table: among its unique indexes whose columns are all NOT NULL
     * upstream and ZQL-supported, the one with the fewest columns, ties broken by column names.
     */
    static Optional<List<String>> chooseRowKey(String schema, String name, Map<String, PublishedColumn> columns,
            List<PublishedIndex> indexes) {
        return indexes.stream()
                .filter(i -> i.schema().equals(schema) && i.tableName().equals(name) && i.unique())
                .map(i -> List.copyOf(i.columns().keySet()))
                .filter(cols -> cols.stream().allMatch(c -> {
                    PublishedColumn col = columns.get(c);
                    return col != null && col.notNull()
                            && LiteTypes.zqlType(LiteTypes.forColumn(col.dataType(), true, col.pgTypeClass(),
                                    col.elemPgTypeClass())).isPresent();
                }))
                .min(Comparator.<List<String>>comparingInt(List::size).thenComparing(l -> String.join(",", l)));
    }

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    /**
     * The tables as the protocol's {@link TableSpec}s, in query order: the published JSON of each
     * table (with {@code replicaIdentityColumns}) read as the {@code spec} of a
     * {@code create-table}, so member order and the published extras ({@code oid},
     * {@code schemaOID}, {@code typeOID}, …) are exactly what a {@code create-table} carries and
     * what the replica layout is created from.
     */
    @SuppressWarnings("unchecked")
    public List<TableSpec> tableSpecs() {
        List<TableSpec> specs = new ArrayList<>();
        for (Object t : (List<Object>) json.get("tables")) {
            specs.add(((CreateTable) decodeAs(CreateTable.TAG, t)).spec());
        }
        return List.copyOf(specs);
    }

    /** The indexes as the protocol's {@link IndexSpec}s, in query order (see {@link #tableSpecs()}). */
    @SuppressWarnings("unchecked")
    public List<IndexSpec> indexSpecs() {
        List<IndexSpec> specs = new ArrayList<>();
        for (Object i : (List<Object>) json.get("indexes")) {
            specs.add(((CreateIndex) decodeAs(CreateIndex.TAG, i)).spec());
        }
        return List.copyOf(specs);
    }

    private static Object decodeAs(String tag, Object spec) {
        Map<String, Object> change = new LinkedHashMap<>();
        change.put("tag", tag);
        change.put("spec", spec);
        return CODEC.decodeChange(CODEC.encodeValue(change));
    }

    /** The table with the given schema and name, if published. */
    public Optional<PublishedTable> table(String schema, String name) {
        return tables.stream().filter(t -> t.schema().equals(schema) && t.name().equals(name)).findFirst();
    }
}

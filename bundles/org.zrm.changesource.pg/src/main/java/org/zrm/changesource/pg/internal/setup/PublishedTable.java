package org.zrm.changesource.pg.internal.setup;

import java.util.List;
import java.util.Map;
import org.zrm.replica.LiteNames;

/**
 * A published table.
 *
 * @param columns by name, in the query's JSON member order (the COPY select order)
 * @param replicaIdentity {@code d}, {@code n}, {@code f} or {@code i}
 * @param rowFilters the non-null publication row filters ({@code WHERE} expressions)
 * @param replicaIdentityColumns derived row key (spec §4.3 client-side derivation)
 */
public record PublishedTable(long oid, String schema, long schemaOid, String name, char replicaIdentity,
        Map<String, PublishedColumn> columns, List<String> primaryKey, List<String> publications,
        List<String> rowFilters, List<String> replicaIdentityColumns) {

    /** {@code name} for schema {@code public}, else {@code schema.name} (the SQLite table name). */
    public String liteTableName() {
        return LiteNames.tableName(schema, name);
    }

    /** Columns sorted by attnum. */
    public List<PublishedColumn> columnsByPos() {
        return columns.values().stream().sorted((a, b) -> Integer.compare(a.pos(), b.pos())).toList();
    }
}

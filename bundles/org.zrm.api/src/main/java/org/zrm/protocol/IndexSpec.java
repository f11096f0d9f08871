package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * An index definition ({@code db/specs.ts indexSpec}):
 * {@code {"schema":…,"tableName":…,"name":…,"unique":true,"columns":{"id":"ASC"}}}. The map order
 * of {@code columns} is the index column order. The Postgres source adds {@code isPrimaryKey},
 * {@code isReplicaIdentity} and {@code isImmediate} before {@code columns}; they live in
 * {@link #extra()}.
 *
 * @param schema schema name
 * @param tableName indexed table
 * @param name index name
 * @param unique whether the index is unique
 * @param columns column → direction, in index order
 * @param extra unknown members
 */
public record IndexSpec(
        String schema,
        String tableName,
        String name,
        boolean unique,
        Map<String, IndexDirection> columns,
        Passthrough extra) {

    public IndexSpec {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(tableName, "tableName");
        Objects.requireNonNull(name, "name");
        columns = Records.freezeRecordMap(columns);
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("schema", "tableName", "name", "unique", "columns");
    }
}

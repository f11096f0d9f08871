package org.zrm.protocol;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A table definition ({@code db/specs.ts tableSpec}): {@code {"schema":…,"name":…,"columns":{…},"primaryKey":[…]}}.
 * The Postgres source sends the richer published spec whose additional members ({@code oid},
 * {@code schemaOID}, {@code replicaIdentity}, {@code publications},
 * {@code replicaIdentityColumns}) live in {@link #extra()}; the canonical member order is
 * {@code oid, schema, schemaOID, name, replicaIdentity, columns, primaryKey, publications,
 * replicaIdentityColumns}.
 *
 * @param schema schema name
 * @param name table name
 * @param columns column name → spec, in wire order
 * @param primaryKey primary-key columns; {@code null} = absent
 * @param extra unknown members
 */
public record TableSpec(
        String schema,
        String name,
        Map<String, ColumnSpec> columns,
        List<String> primaryKey,
        Passthrough extra) {

    public TableSpec {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(name, "name");
        columns = Records.freezeRecordMap(columns);
        primaryKey = primaryKey == null ? null : JsonValues.freezeNonNullList(primaryKey);
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("schema", "name", "columns", "primaryKey");
    }
}

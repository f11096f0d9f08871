package org.zrm.protocol;

import java.util.List;
import java.util.Objects;

/**
 * The table a data change applies to. The Postgres source sends
 * {@code {"tag":"relation","relationOid":…,"schema":…,"name":…,"rowKey":{…},"keyColumns":[…],"replicaIdentity":…}};
 * {@code tag} and {@code relationOid} are unknown to the protocol and live in {@link #extra()}.
 *
 * <p>Upstream derives {@code rowKey} from the deprecated {@code keyColumns}/{@code replicaIdentity}
 * when it is missing ({@link #effectiveRowKey()}); the model keeps the members as sent so that
 * re-encoding is lossless. In {@code backfill}/{@code backfill-completed} changes {@code rowKey}
 * is required.
 *
 * @param schema schema name
 * @param name table name
 * @param rowKey row key; {@code null} = absent (then {@code keyColumns} must be present)
 * @param keyColumns deprecated key columns; {@code null} = absent
 * @param replicaIdentity deprecated replica identity; {@code null} = absent
 * @param extra unknown members
 */
public record Relation(
        String schema,
        String name,
        RowKey rowKey,
        List<String> keyColumns,
        ReplicaIdentity replicaIdentity,
        Passthrough extra) {

    public Relation {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(name, "name");
        keyColumns = keyColumns == null ? null : JsonValues.freezeNonNullList(keyColumns);
        if (rowKey == null && keyColumns == null) {
            throw new IllegalArgumentException("relation needs rowKey or keyColumns");
        }
        Objects.requireNonNull(extra, "extra")
                .requireNoneOf("schema", "name", "rowKey", "keyColumns", "replicaIdentity");
    }

    /** A new-style relation with only {@code schema}, {@code name} and {@code rowKey}. */
    public Relation(String schema, String name, RowKey rowKey) {
        this(schema, name, Objects.requireNonNull(rowKey, "rowKey"), null, null, Passthrough.NONE);
    }

    /** The row key, derived from the deprecated members if {@code rowKey} is absent. */
    public RowKey effectiveRowKey() {
        return rowKey != null ? rowKey : new RowKey(keyColumns, replicaIdentity, Passthrough.NONE);
    }
}

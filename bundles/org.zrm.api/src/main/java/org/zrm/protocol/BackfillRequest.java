package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * A request to (re)start backfilling columns of a table when a change stream is started:
 * {@code {"table":{"schema":…,"name":…,"metadata":{…}|null},"columns":{"col":BackfillID}}}.
 *
 * @param table the table with its current metadata
 * @param columns column name → backfill id, in wire order
 * @param extra unknown members
 */
public record BackfillRequest(Table table, Map<String, BackfillId> columns, Passthrough extra) {

    public BackfillRequest {
        Objects.requireNonNull(table, "table");
        columns = Records.freezeRecordMap(columns);
        Objects.requireNonNull(extra, "extra").requireNoneOf("table", "columns");
    }

    /** A request without unknown members. */
    public BackfillRequest(Table table, Map<String, BackfillId> columns) {
        this(table, columns, Passthrough.NONE);
    }

    /**
     * The table part of a request.
     *
     * @param schema schema name
     * @param name table name
     * @param metadata the latest table metadata, or {@code null} (JSON null, the member is always
     *     written) if the source never sent any
     * @param extra unknown members
     */
    public record Table(String schema, String name, TableMetadata metadata, Passthrough extra) {

        public Table {
            Objects.requireNonNull(schema, "schema");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(extra, "extra").requireNoneOf("schema", "name", "metadata");
        }

        /** A table part without unknown members. */
        public Table(String schema, String name, TableMetadata metadata) {
            this(schema, name, metadata, Passthrough.NONE);
        }
    }
}

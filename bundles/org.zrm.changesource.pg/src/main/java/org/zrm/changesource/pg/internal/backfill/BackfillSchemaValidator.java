package org.zrm.changesource.pg.internal.backfill;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.TableMetadata;

/**
 * Checks a backfill request against the published schema read inside the snapshot (upstream
 * {@code validateSchema}): the table must still be the one the request was made for, with the same
 * row key, and every row-key and backfill column must still be the same attribute. The checks and
 * their reasons are upstream's, in upstream's order, so that the first failing one is reported.
 */
final class BackfillSchemaValidator {

    /**
     * A request that passed validation.
     *
     * @param table the table as published in the snapshot
     * @param rowKey the row-key columns, in the order of the request's metadata
     * @param columns the columns to fill, in request order, without the row-key columns
     */
    record Validated(PublishedTable table, List<String> rowKey, List<String> columns) {

        /** The COPY's columns: the row key, then the backfilled columns. */
        List<String> copyColumns() {
            List<String> all = new ArrayList<>(rowKey);
            all.addAll(columns);
            return all;
        }
    }

    /** The PG source's table metadata: {@code {schemaOID, relationOID, rowKey: {col: {attNum}}}}. */
    record Metadata(long schemaOid, long relationOid, Map<String, Long> rowKey) {}

    private BackfillSchemaValidator() {}

    /**
     * Reads the request's PG-specific metadata.
     *
     * @throws SchemaIncompatibilityException if it is missing or malformed, e.g. a request of a
     *     different change source; nothing can be copied for it
     */
    static Metadata metadata(BackfillRequest request) throws SchemaIncompatibilityException {
        TableMetadata meta = request.table().metadata();
        if (meta == null) {
            throw new SchemaIncompatibilityException(request, "Table metadata is missing");
        }
        long schemaOid = integer(request, meta.extra().get("schemaOID"), "table metadata schemaOID");
        long relationOid = integer(request, meta.extra().get("relationOID"), "table metadata relationOID");
        Map<String, Long> rowKey = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : meta.rowKey().entrySet()) {
            rowKey.put(e.getKey(), attNum(request, e.getValue(), "row key column " + e.getKey()));
        }
        for (Map.Entry<String, BackfillId> e : request.columns().entrySet()) {
            attNum(request, e.getValue().value(), "backfill column " + e.getKey());
        }
        return new Metadata(schemaOid, relationOid, rowKey);
    }

    /**
     * Validates the request against the snapshot's published schema.
     *
     * @throws SchemaIncompatibilityException with upstream's reason for the first failed check
     */
    static Validated validate(BackfillRequest request, PublishedSchema schema) throws SchemaIncompatibilityException {
        Metadata meta = metadata(request);
        PublishedTable spec = schema.table(request.table().schema(), request.table().name()).orElse(null);
        if (spec == null) {
            throw new SchemaIncompatibilityException(request, "Table has been renamed or dropped");
        }
        if (spec.schemaOid() != meta.schemaOid()) {
            throw new SchemaIncompatibilityException(request, "Schema no longer corresponds to the original schema");
        }
        if (spec.oid() != meta.relationOid()) {
            throw new SchemaIncompatibilityException(request, "Table no longer corresponds to the original table");
        }
        if (!new HashSet<>(meta.rowKey().keySet()).equals(new HashSet<>(spec.replicaIdentityColumns()))) {
            throw new SchemaIncompatibilityException(request, "Row key (e.g. PRIMARY KEY or INDEX) has changed");
        }
        List<Map.Entry<String, Long>> ordered = new ArrayList<>(meta.rowKey().entrySet());
        for (Map.Entry<String, BackfillId> e : request.columns().entrySet()) {
            ordered.add(Map.entry(e.getKey(), attNum(request, e.getValue().value(), "backfill column " + e.getKey())));
        }
        for (Map.Entry<String, Long> e : ordered) {
            PublishedColumn col = spec.columns().get(e.getKey());
            if (col == null) {
                throw new SchemaIncompatibilityException(request, "Column " + e.getKey() + " has been renamed or dropped");
            }
            if (col.pos() != e.getValue()) {
                throw new SchemaIncompatibilityException(request,
                        "Column " + e.getKey() + " no longer corresponds to the original column");
            }
        }
        List<String> rowKey = List.copyOf(meta.rowKey().keySet());
        List<String> columns = request.columns().keySet().stream().filter(c -> !meta.rowKey().containsKey(c)).toList();
        return new Validated(spec, rowKey, columns);
    }

    private static long attNum(BackfillRequest request, Object value, String what) throws SchemaIncompatibilityException {
        if (!(value instanceof Map<?, ?> m)) {
            throw new SchemaIncompatibilityException(request, "Invalid " + what + ": expected {\"attNum\":n}, got " + value);
        }
        return integer(request, m.get("attNum"), what + " attNum");
    }

    private static long integer(BackfillRequest request, Object value, String what) throws SchemaIncompatibilityException {
        if (value instanceof Long || value instanceof Integer || value instanceof Short) {
            return ((Number) value).longValue();
        }
        if (value instanceof Double d && d == Math.rint(d) && !d.isInfinite()) {
            return d.longValue();
        }
        throw new SchemaIncompatibilityException(request, "Invalid " + what + ": expected an integer, got " + value);
    }
}

package org.zrm.replica.apply;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A replicated table as the replica describes it.
 *
 * @param name lite table name
 * @param columns column name to declared (lite) type, in table order, including {@code _0_version}
 * @param primaryKey the declared primary key, else the shortest unique index over NOT NULL syncable
 *     columns (upstream {@code computeZqlSpecs}); empty if there is none
 * @param backfilling columns whose {@code _zero.column_metadata.backfill} is set
 */
record LiteTableSpec(String name, Map<String, String> columns, List<String> primaryKey, Set<String> backfilling) {

    /** The declared type of {@code column}. @throws IllegalStateException for an unknown column */
    String columnType(String column) {
        String type = columns.get(column);
        if (type == null) {
            throw new IllegalStateException("Unknown column " + column + " in table " + name);
        }
        return type;
    }

    /** Whether every replicated column (all but {@code _0_version}) is being backfilled. */
    boolean allColumnsBackfilling() {
        return backfilling.size() == columns.size() - 1;
    }
}

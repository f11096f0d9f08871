package org.zrm.replicator.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.IndexDirection;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.TableSpec;
import org.zrm.replica.LiteNames;
import org.zrm.replica.ReplicaLayout;
import org.zrm.replica.ReplicaMetadataStore;

/**
 * Protocol table, column and index specs for tests, and replicas created from them by
 * {@link ReplicaLayout} in the initial sync's order (version history table, replication tables,
 * data tables with their column metadata, rows, indexes, version-history row).
 */
final class Specs {

    private Specs() {}

    /** A nullable base-type column. */
    static ColumnSpec col(long pos, String dataType) {
        return new ColumnSpec(pos, dataType, PgTypeClass.BASE, Maybe.ofNull(), Maybe.ofNull(), Maybe.of(false),
                Maybe.ofNull(), Passthrough.NONE);
    }

    /** A NOT NULL base-type column. */
    static ColumnSpec notNull(long pos, String dataType) {
        return new ColumnSpec(pos, dataType, PgTypeClass.BASE, Maybe.ofNull(), Maybe.ofNull(), Maybe.of(true),
                Maybe.ofNull(), Passthrough.NONE);
    }

    /** A base-type column with an upstream default expression. */
    static ColumnSpec withDefault(long pos, String dataType, String dflt) {
        return new ColumnSpec(pos, dataType, PgTypeClass.BASE, Maybe.ofNull(), Maybe.ofNull(), Maybe.of(false),
                Maybe.of(dflt), Passthrough.NONE);
    }

    /** A column with a {@code characterMaximumLength} (varchar(n), char(n)). */
    static ColumnSpec sized(long pos, String dataType, long maxLength) {
        return new ColumnSpec(pos, dataType, PgTypeClass.BASE, Maybe.ofNull(), Maybe.of(maxLength), Maybe.of(false),
                Maybe.ofNull(), Passthrough.NONE);
    }

    /** A nullable enum column. */
    static ColumnSpec enumCol(long pos, String dataType) {
        return new ColumnSpec(pos, dataType, PgTypeClass.ENUM, Maybe.ofNull(), Maybe.ofNull(), Maybe.of(false),
                Maybe.ofNull(), Passthrough.NONE);
    }

    /** A nullable array column ({@code dataType} ends in {@code []}). */
    static ColumnSpec arrayCol(long pos, String dataType, PgTypeClass elem) {
        return new ColumnSpec(pos, dataType, PgTypeClass.BASE, Maybe.of(elem), Maybe.ofNull(), Maybe.of(false),
                Maybe.ofNull(), Passthrough.NONE);
    }

    /** A table; {@code columns} alternate name and {@link ColumnSpec}. */
    static TableSpec table(String schema, String name, List<String> primaryKey, Object... columns) {
        Map<String, ColumnSpec> cols = new LinkedHashMap<>();
        for (int i = 0; i < columns.length; i += 2) {
            cols.put((String) columns[i], (ColumnSpec) columns[i + 1]);
        }
        return new TableSpec(schema, name, cols, primaryKey, Passthrough.NONE);
    }

    /** An index; {@code columns} alternate name and {@code ASC}/{@code DESC}. */
    static IndexSpec index(String schema, String table, String name, boolean unique, String... columns) {
        Map<String, IndexDirection> cols = new LinkedHashMap<>();
        for (int i = 0; i < columns.length; i += 2) {
            cols.put(columns[i], IndexDirection.fromWire(columns[i + 1]));
        }
        return new IndexSpec(schema, table, name, unique, cols, Passthrough.NONE);
    }

    /**
     * Creates a complete replica as the initial sync does: the same layout calls in the same
     * order, rows inserted without {@code _0_version} (so they get the replica version by default,
     * as copied rows do).
     *
     * @param rows lite table name to rows (column name to SQLite value)
     */
    static void createReplica(Connection c, String replicaVersion, List<TableSpec> tables, List<IndexSpec> indexes,
            Map<String, List<Map<String, Object>>> rows) throws SQLException {
        c.setAutoCommit(false);
        ReplicaLayout.createVersionHistoryTable(c);
        ReplicaLayout.initReplicationState(c, List.of("_zero_public_0"), replicaVersion, "{}");
        ReplicaMetadataStore metadata = new ReplicaMetadataStore(c);
        for (TableSpec t : tables) {
            ReplicaLayout.createTable(c, metadata, t, replicaVersion, Map.of());
        }
        for (Map.Entry<String, List<Map<String, Object>>> e : rows.entrySet()) {
            for (Map<String, Object> row : e.getValue()) {
                List<String> cols = new ArrayList<>(row.keySet());
                StringBuilder sql = new StringBuilder("INSERT INTO ").append(LiteNames.quote(e.getKey())).append(" (");
                for (int i = 0; i < cols.size(); i++) {
                    sql.append(i == 0 ? "" : ",").append(LiteNames.quote(cols.get(i)));
                }
                sql.append(") VALUES (").append("?,".repeat(cols.size() - 1)).append("?)");
                try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
                    for (int i = 0; i < cols.size(); i++) {
                        ps.setObject(i + 1, row.get(cols.get(i)));
                    }
                    ps.executeUpdate();
                }
            }
        }
        for (IndexSpec idx : indexes) {
            ReplicaLayout.createIndex(c, idx);
        }
        ReplicaLayout.writeVersionHistory(c);
        c.commit();
        c.setAutoCommit(true);
    }
}

package org.zrm.replicator.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import org.zrm.protocol.ColumnSpec;
import org.zrm.replica.LiteTypes;

/**
 * Writes {@code _zero.tableMetadata} and {@code _zero.column_metadata} (upstream
 * {@code TableMetadataTracker} and {@code ColumnMetadataStore}).
 */
final class ReplicaMetadata {

    private final Connection db;

    ReplicaMetadata(Connection db) {
        this.db = db;
    }

    void setUpstreamMetadata(String schema, String table, String metadataJson) throws SQLException {
        run("INSERT INTO \"_zero.tableMetadata\" (\"schema\", \"table\", \"upstreamMetadata\") VALUES (?, ?, ?) "
                + "ON CONFLICT (\"schema\", \"table\") DO UPDATE SET \"upstreamMetadata\" = excluded.\"upstreamMetadata\"",
                schema, table, metadataJson);
    }

    void setMinRowVersion(String schema, String table, String version) throws SQLException {
        run("INSERT INTO \"_zero.tableMetadata\" (\"schema\", \"table\", \"minRowVersion\") VALUES (?, ?, ?) "
                + "ON CONFLICT (\"schema\", \"table\") DO UPDATE SET \"minRowVersion\" = excluded.\"minRowVersion\"",
                schema, table, version);
    }

    void renameTable(String oldSchema, String oldTable, String newSchema, String newTable) throws SQLException {
        run("UPDATE \"_zero.tableMetadata\" SET \"schema\" = ?, \"table\" = ? WHERE \"schema\" = ? AND \"table\" = ?",
                newSchema, newTable, oldSchema, oldTable);
    }

    void dropTable(String schema, String table) throws SQLException {
        run("DELETE FROM \"_zero.tableMetadata\" WHERE \"schema\" = ? AND \"table\" = ?", schema, table);
    }

    void insertColumn(String table, String column, ColumnSpec spec, String backfillJson) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("INSERT INTO \"_zero.column_metadata\" (table_name, column_name, "
                + "upstream_type, is_not_null, is_enum, is_array, character_max_length, backfill) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, table);
            ps.setString(2, column);
            bindSpec(ps, 3, spec);
            ps.setString(8, backfillJson);
            ps.executeUpdate();
        }
    }

    void updateColumn(String table, String oldColumn, String newColumn, ColumnSpec spec) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("UPDATE \"_zero.column_metadata\" SET column_name = ?, "
                + "upstream_type = ?, is_not_null = ?, is_enum = ?, is_array = ?, character_max_length = ? "
                + "WHERE table_name = ? AND column_name = ?")) {
            ps.setString(1, newColumn);
            bindSpec(ps, 2, spec);
            ps.setString(7, table);
            ps.setString(8, oldColumn);
            ps.executeUpdate();
        }
    }

    void clearBackfilling(String table, String column) throws SQLException {
        run("UPDATE \"_zero.column_metadata\" SET backfill = NULL WHERE table_name = ? AND column_name = ?", table, column);
    }

    void deleteColumn(String table, String column) throws SQLException {
        run("DELETE FROM \"_zero.column_metadata\" WHERE table_name = ? AND column_name = ?", table, column);
    }

    void deleteTableColumns(String table) throws SQLException {
        run("DELETE FROM \"_zero.column_metadata\" WHERE table_name = ?", table);
    }

    void renameTableColumns(String oldTable, String newTable) throws SQLException {
        run("UPDATE \"_zero.column_metadata\" SET table_name = ? WHERE table_name = ?", newTable, oldTable);
    }

    /** Binds upstream_type, is_not_null, is_enum, is_array, character_max_length from {@code index}. */
    private static void bindSpec(PreparedStatement ps, int index, ColumnSpec spec) throws SQLException {
        ps.setString(index, spec.dataType());
        ps.setInt(index + 1, Boolean.TRUE.equals(spec.notNull().value()) ? 1 : 0);
        ps.setInt(index + 2, LiteTypes.isEnumColumn(spec.pgTypeClass(), spec.elemPgTypeClass().value()) ? 1 : 0);
        ps.setInt(index + 3, spec.elemPgTypeClass().value() != null ? 1 : 0);
        Long maxLen = spec.characterMaximumLength().value();
        if (maxLen == null) {
            ps.setNull(index + 4, Types.INTEGER);
        } else {
            ps.setLong(index + 4, maxLen);
        }
    }

    private void run(String sql, String... args) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setString(i + 1, args[i]);
            }
            ps.executeUpdate();
        }
    }
}

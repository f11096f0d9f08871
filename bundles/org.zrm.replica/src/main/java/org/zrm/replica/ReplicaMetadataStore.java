package org.zrm.replica;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Map;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.Identifier;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.TableMetadata;
import org.zrm.protocol.UpdateTableMetadata;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The row writes of the replica's metadata tables: {@code _zero.column_metadata} (upstream
 * {@code ColumnMetadataStore}), {@code _zero.tableMetadata} (upstream
 * {@code TableMetadataTracker}) and the watermark in {@code _zero.replicationState} (upstream
 * {@code updateReplicationWatermark}). The initial sync and the replicator write these rows only
 * through this class, so a replica's metadata has one shape whichever side wrote it.
 *
 * <p>Not thread-safe: it belongs to the connection it was made for, and every write runs in that
 * connection's current transaction.
 */
public final class ReplicaMetadataStore {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private final Connection db;

    /**
     * Creates a store over a connection whose replica holds the {@code _zero.*} tables.
     *
     * @param db the replica connection; not closed by the store
     */
    public ReplicaMetadataStore(Connection db) {
        this.db = db;
    }

    // ---- _zero.column_metadata ----

    /**
     * Inserts the metadata row of a column.
     *
     * @param table the replica table name
     * @param column the column name
     * @param spec the upstream column: {@code upstream_type} is its data type, {@code is_not_null}
     *     its upstream nullability, {@code is_enum}/{@code is_array} as {@link LiteTypes} decides
     * @param backfill the backfill id of a column created hidden until backfilled,
     *     or {@code null}
     * @throws SQLException if SQLite fails (for example because the row exists)
     */
    public void insertColumn(String table, String column, ColumnSpec spec, BackfillId backfill)
            throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("INSERT INTO \"_zero.column_metadata\" (table_name, column_name, "
                + "upstream_type, is_not_null, is_enum, is_array, character_max_length, backfill) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, table);
            ps.setString(2, column);
            bindSpec(ps, 3, spec);
            ps.setString(8, backfill == null ? null : CODEC.encodeValue(backfill.value()));
            ps.executeUpdate();
        }
    }

    /**
     * Renames a column's row and rewrites its type fields; {@code backfill} is kept.
     *
     * @param table the replica table name
     * @param oldColumn the current column name
     * @param newColumn the new column name (may equal {@code oldColumn})
     * @param spec the column's new upstream spec
     * @throws SQLException if SQLite fails
     */
    public void updateColumn(String table, String oldColumn, String newColumn, ColumnSpec spec) throws SQLException {
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

    /**
     * Clears a column's backfill marker: its values are complete and it becomes visible.
     *
     * @param table the replica table name
     * @param column the column name
     * @throws SQLException if SQLite fails
     */
    public void clearBackfilling(String table, String column) throws SQLException {
        run("UPDATE \"_zero.column_metadata\" SET backfill = NULL WHERE table_name = ? AND column_name = ?", table, column);
    }

    /**
     * Deletes a column's row.
     *
     * @param table the replica table name
     * @param column the column name
     * @throws SQLException if SQLite fails
     */
    public void deleteColumn(String table, String column) throws SQLException {
        run("DELETE FROM \"_zero.column_metadata\" WHERE table_name = ? AND column_name = ?", table, column);
    }

    /**
     * Deletes the rows of all columns of a table.
     *
     * @param table the replica table name
     * @throws SQLException if SQLite fails
     */
    public void deleteTableColumns(String table) throws SQLException {
        run("DELETE FROM \"_zero.column_metadata\" WHERE table_name = ?", table);
    }

    /**
     * Moves the rows of a table's columns to its new name.
     *
     * @param oldTable the old replica table name
     * @param newTable the new replica table name
     * @throws SQLException if SQLite fails
     */
    public void renameTableColumns(String oldTable, String newTable) throws SQLException {
        run("UPDATE \"_zero.column_metadata\" SET table_name = ? WHERE table_name = ?", newTable, oldTable);
    }

    // ---- _zero.tableMetadata (keyed by upstream schema and table name, not the replica name) ----

    /**
     * Sets a table's {@code upstreamMetadata}, creating its row if needed.
     *
     * @param schema the upstream schema
     * @param table the upstream table name
     * @param metadata the metadata sent by the change source
     * @throws SQLException if SQLite fails
     */
    public void setUpstreamMetadata(String schema, String table, TableMetadata metadata) throws SQLException {
        run("INSERT INTO \"_zero.tableMetadata\" (\"schema\", \"table\", \"upstreamMetadata\") VALUES (?, ?, ?) "
                + "ON CONFLICT (\"schema\", \"table\") DO UPDATE SET \"upstreamMetadata\" = excluded.\"upstreamMetadata\"",
                schema, table, json(metadata));
    }

    /**
     * Sets a table's {@code minRowVersion}, creating its row if needed: every row of the table
     * counts as changed at {@code version} (upstream {@code bumpVersions}).
     *
     * @param schema the upstream schema
     * @param table the upstream table name
     * @param version the state version
     * @throws SQLException if SQLite fails
     */
    public void setMinRowVersion(String schema, String table, String version) throws SQLException {
        run("INSERT INTO \"_zero.tableMetadata\" (\"schema\", \"table\", \"minRowVersion\") VALUES (?, ?, ?) "
                + "ON CONFLICT (\"schema\", \"table\") DO UPDATE SET \"minRowVersion\" = excluded.\"minRowVersion\"",
                schema, table, version);
    }

    /**
     * Moves a table's row to its new identity.
     *
     * @param oldSchema the old upstream schema
     * @param oldTable the old upstream table name
     * @param newSchema the new upstream schema
     * @param newTable the new upstream table name
     * @throws SQLException if SQLite fails
     */
    public void renameTable(String oldSchema, String oldTable, String newSchema, String newTable) throws SQLException {
        run("UPDATE \"_zero.tableMetadata\" SET \"schema\" = ?, \"table\" = ? WHERE \"schema\" = ? AND \"table\" = ?",
                newSchema, newTable, oldSchema, oldTable);
    }

    /**
     * Deletes a table's row.
     *
     * @param schema the upstream schema
     * @param table the upstream table name
     * @throws SQLException if SQLite fails
     */
    public void dropTable(String schema, String table) throws SQLException {
        run("DELETE FROM \"_zero.tableMetadata\" WHERE \"schema\" = ? AND \"table\" = ?", schema, table);
    }

    // ---- _zero.replicationState ----

    /**
     * Advances the replica's watermark and write time; must run inside the transaction that
     * applied the data, so that readers never see data without its watermark or the reverse.
     *
     * @param watermark the commit watermark
     * @throws SQLException if SQLite fails or the table has no row
     */
    public void updateWatermark(String watermark) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(
                "UPDATE \"_zero.replicationState\" SET stateVersion=?, writeTimeMs=unixepoch('subsec') * 1000")) {
            ps.setString(1, watermark);
            if (ps.executeUpdate() != 1) {
                throw new SQLException("_zero.replicationState has no row to update");
            }
        }
    }

    /**
     * The JSON text upstream stores for table metadata ({@code JSON.stringify} of the object it
     * received). The codec writes whole changes only, so the metadata goes out inside one and is read
     * back, which keeps member order and big integers exactly as received.
     */
    private static String json(TableMetadata md) {
        String change = CODEC.encodeChange(new UpdateTableMetadata(new Identifier("s", "t"), md, md, Passthrough.NONE));
        Object decoded = CODEC.decodeValue(change);
        return CODEC.encodeValue(((Map<?, ?>) decoded).get("new"));
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

package org.zrm.replicator.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.CreateIndex;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DropColumn;
import org.zrm.protocol.DropIndex;
import org.zrm.protocol.DropTable;
import org.zrm.protocol.Identifier;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.RenameTable;
import org.zrm.protocol.SchemaChange;
import org.zrm.protocol.TableMetadata;
import org.zrm.protocol.UpdateColumn;
import org.zrm.protocol.UpdateTableMetadata;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteDefaults;
import org.zrm.replica.LiteNames;
import org.zrm.replica.LiteTypes;
import org.zrm.replica.UnsupportedColumnDefaultException;

/**
 * Applies schema changes to the replica (the DDL half of upstream's {@code ChangeProcessor}):
 * tables are created as the initial sync creates them (lite type strings, {@code _0_version}
 * last, no NOT NULL, no PRIMARY KEY, no defaults), and the {@code _zero.tableMetadata} and
 * {@code _zero.column_metadata} rows follow every change in the same transaction.
 */
final class SchemaChangeApplier {

    private static final Logger LOG = LoggerFactory.getLogger(SchemaChangeApplier.class);

    private final ChangeProcessor tx;
    private final Connection db;
    private final ReplicaMetadata metadata;
    private final ProtocolCodec codec;

    SchemaChangeApplier(ChangeProcessor tx, Connection db, ReplicaMetadata metadata, ProtocolCodec codec) {
        this.tx = tx;
        this.db = db;
        this.metadata = metadata;
        this.codec = codec;
    }

    void apply(SchemaChange change) throws SQLException, ChangeProcessingException {
        if (change instanceof CreateTable c) {
            createTable(c);
        } else if (change instanceof RenameTable r) {
            renameTable(r);
        } else if (change instanceof AddColumn a) {
            addColumn(a);
        } else if (change instanceof UpdateColumn u) {
            updateColumn(u);
        } else if (change instanceof DropColumn d) {
            dropColumn(d);
        } else if (change instanceof DropTable d) {
            dropTable(d);
        } else if (change instanceof CreateIndex c) {
            createIndex(c);
        } else if (change instanceof DropIndex d) {
            exec("DROP INDEX IF EXISTS " + LiteNames.quote(LiteNames.tableName(d.id().schema(), d.id().name())));
        } else if (change instanceof UpdateTableMetadata u) {
            metadata.setUpstreamMetadata(u.table().schema(), u.table().name(), json(u.newMetadata()));
        } else if (change instanceof BackfillCompleted b) {
            backfillCompleted(b);
        } else {
            throw new ChangeProcessingException("unsupported schema change " + change.tag());
        }
        LOG.info("replicator: applied {} at {}", change.tag(), tx.version());
    }

    private void createTable(CreateTable create) throws SQLException, ChangeProcessingException {
        if (create.metadata() != null) {
            metadata.setUpstreamMetadata(create.spec().schema(), create.spec().name(), json(create.metadata()));
        }
        String table = LiteNames.tableName(create.spec().schema(), create.spec().name());
        List<Map.Entry<String, ColumnSpec>> cols = new ArrayList<>(create.spec().columns().entrySet());
        cols.sort(Comparator.comparingLong(e -> e.getValue().pos()));
        List<String> defs = new ArrayList<>();
        for (Map.Entry<String, ColumnSpec> e : cols) {
            defs.add(LiteNames.quote(e.getKey()) + " " + LiteNames.quote(LiteTypes.forColumn(e.getValue())));
        }
        defs.add(LiteNames.quote(LiteNames.ZERO_VERSION_COLUMN) + " " + LiteNames.quote("text"));
        exec("CREATE TABLE " + LiteNames.quote(table) + " (\n" + String.join(",\n", defs) + "\n);");
        Map<String, BackfillId> backfill = create.backfill() == null ? Map.of() : create.backfill();
        for (Map.Entry<String, ColumnSpec> e : create.spec().columns().entrySet()) {
            BackfillId id = backfill.get(e.getKey());
            metadata.insertColumn(table, e.getKey(), e.getValue(), id == null ? null : codec.encodeValue(id.value()));
        }
        if (backfill.size() == create.spec().columns().size()) {
            tx.reloadTableSpecs(); // invisible until the backfill completes, which bumps versions then
        } else {
            tx.resetTable();
        }
    }

    private void renameTable(RenameTable rename) throws SQLException {
        Identifier from = rename.oldId();
        Identifier to = rename.newId();
        metadata.renameTable(from.schema(), from.name(), to.schema(), to.name());
        String oldName = LiteNames.tableName(from.schema(), from.name());
        String newName = LiteNames.tableName(to.schema(), to.name());
        exec("ALTER TABLE " + LiteNames.quote(oldName) + " RENAME TO " + LiteNames.quote(newName));
        metadata.renameTableColumns(oldName, newName);
        tx.bumpVersions(to.schema(), to.name());
    }

    private void addColumn(AddColumn add) throws SQLException, ChangeProcessingException {
        if (add.tableMetadata() != null) {
            metadata.setUpstreamMetadata(add.table().schema(), add.table().name(), json(add.tableMetadata()));
        }
        String table = LiteNames.tableName(add.table().schema(), add.table().name());
        String name = add.column().name();
        ColumnSpec spec = add.column().spec();
        String dflt = liteDefault(table, name, spec.dflt().value());
        exec("ALTER TABLE " + LiteNames.quote(table) + " ADD " + LiteNames.quote(name) + " " + LiteNames.quote(LiteTypes.forColumn(spec))
                + (dflt == null ? "" : " DEFAULT " + dflt));
        metadata.insertColumn(table, name, spec, add.backfill() == null ? null : codec.encodeValue(add.backfill().value()));
        if (add.backfill() != null) {
            tx.reloadTableSpecs(); // becomes visible when the backfill completes
        } else {
            tx.bumpVersions(add.table().schema(), add.table().name());
        }
    }

    /**
     * Renames a column and/or changes its type. Defaults are ignored: changing a default does not
     * change existing rows. A type change goes through a {@code tmp.<name>} column (SQLite cannot
     * alter a column's declared type), re-creating the indexes that covered the old column.
     */
    private void updateColumn(UpdateColumn update) throws SQLException {
        String table = LiteNames.tableName(update.table().schema(), update.table().name());
        String oldName = update.oldColumn().name();
        String newName = update.newColumn().name();
        String oldType = LiteTypes.forColumn(update.oldColumn().spec());
        String newType = LiteTypes.forColumn(update.newColumn().spec());
        if (oldName.equals(newName) && oldType.equals(newType)) {
            LOG.info("replicator: update-column of {}.{} changes nothing in the replica", table, oldName);
            return;
        }
        String current = oldName;
        if (!oldType.equals(newType)) {
            List<LiteIndexSpec> indexes = new ArrayList<>();
            for (LiteIndexSpec idx : ReplicaSchema.listIndexes(db)) {
                if (idx.tableName().equals(table) && idx.columns().containsKey(oldName)) {
                    indexes.add(idx);
                }
            }
            for (LiteIndexSpec idx : indexes) {
                exec("DROP INDEX IF EXISTS " + LiteNames.quote(idx.name()));
            }
            String tmp = "tmp." + newName;
            exec("ALTER TABLE " + LiteNames.quote(table) + " ADD " + LiteNames.quote(tmp) + " " + LiteNames.quote(newType));
            exec("UPDATE " + LiteNames.quote(table) + " SET " + LiteNames.quote(tmp) + " = " + LiteNames.quote(oldName));
            exec("ALTER TABLE " + LiteNames.quote(table) + " DROP " + LiteNames.quote(oldName));
            for (LiteIndexSpec idx : indexes) {
                Map<String, String> cols = new LinkedHashMap<>();
                idx.columns().forEach((c, dir) -> cols.put(c.equals(oldName) ? tmp : c, dir));
                exec(new LiteIndexSpec(idx.name(), idx.tableName(), idx.unique(), cols).createStatement());
            }
            current = tmp;
        }
        if (!current.equals(newName)) {
            exec("ALTER TABLE " + LiteNames.quote(table) + " RENAME " + LiteNames.quote(current) + " TO " + LiteNames.quote(newName));
        }
        metadata.updateColumn(table, oldName, newName, update.newColumn().spec());
        tx.bumpVersions(update.table().schema(), update.table().name());
    }

    private void dropColumn(DropColumn drop) throws SQLException {
        String table = LiteNames.tableName(drop.table().schema(), drop.table().name());
        exec("ALTER TABLE " + LiteNames.quote(table) + " DROP " + LiteNames.quote(drop.column()));
        metadata.deleteColumn(table, drop.column());
        tx.bumpVersions(drop.table().schema(), drop.table().name());
    }

    private void dropTable(DropTable drop) throws SQLException {
        metadata.dropTable(drop.id().schema(), drop.id().name());
        String table = LiteNames.tableName(drop.id().schema(), drop.id().name());
        exec("DROP TABLE IF EXISTS " + LiteNames.quote(table));
        metadata.deleteTableColumns(table);
        tx.resetTable();
    }

    private void createIndex(CreateIndex create) throws SQLException, ChangeProcessingException {
        IndexSpec spec = create.spec();
        Map<String, String> cols = new LinkedHashMap<>();
        spec.columns().forEach((c, dir) -> cols.put(c, dir.wire()));
        LiteIndexSpec index = new LiteIndexSpec(LiteNames.tableName(spec.schema(), spec.name()),
                LiteNames.tableName(spec.schema(), spec.tableName()), spec.unique(), cols);
        exec(index.createStatement());
        LiteTableSpec table = tx.tableSpec(index.tableName());
        if (table.allColumnsBackfilling()) {
            tx.reloadTableSpecs(); // the table is not visible yet, so nothing to reset
        } else {
            tx.resetTable();
        }
    }

    private void backfillCompleted(BackfillCompleted done) throws SQLException {
        String table = LiteNames.tableName(done.relation().schema(), done.relation().name());
        List<String> cols = new ArrayList<>(done.relation().rowKey().columns());
        cols.addAll(done.columns());
        for (String col : cols) {
            metadata.clearBackfilling(table, col);
        }
        // Every row gains the newly visible columns, so every row's version is bumped.
        tx.bumpVersions(done.relation().schema(), done.relation().name());
        LOG.info("replicator: finished backfilling {}", table);
    }

    /**
     * The SQLite default of an added column ({@link LiteDefaults}); a default SQLite cannot
     * reproduce fails the transaction, since upstream sends such columns with a backfill instead.
     */
    static String liteDefault(String table, String column, String expression) throws ChangeProcessingException {
        try {
            return LiteDefaults.mapPostgresToLiteDefault(table, column, expression);
        } catch (UnsupportedColumnDefaultException e) {
            throw new ChangeProcessingException(e.getMessage(), e);
        }
    }

    /**
     * The JSON text upstream stores for table metadata ({@code JSON.stringify} of the received
     * object). The codec only writes whole changes, so the metadata is written inside a change and
     * read back out, which keeps the member order and bigints exactly as received.
     */
    private String json(TableMetadata md) {
        Identifier any = new Identifier("s", "t");
        String change = codec.encodeChange(new UpdateTableMetadata(any, md, md, Passthrough.NONE));
        Object decoded = codec.decodeValue(change);
        return codec.encodeValue(((Map<?, ?>) decoded).get("new"));
    }

    private void exec(String sql) throws SQLException {
        try (Statement st = db.createStatement()) {
            st.execute(sql);
        }
    }
}

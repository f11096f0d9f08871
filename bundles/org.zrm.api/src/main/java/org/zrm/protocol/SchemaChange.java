package org.zrm.protocol;

/** Schema changes (DDL and backfill completion). */
public sealed interface SchemaChange extends DataOrSchemaChange
        permits CreateTable, RenameTable, UpdateTableMetadata, AddColumn, UpdateColumn, DropColumn,
                DropTable, CreateIndex, DropIndex, BackfillCompleted {

    @Override
    default ChangeKind kind() {
        return ChangeKind.SCHEMA;
    }
}

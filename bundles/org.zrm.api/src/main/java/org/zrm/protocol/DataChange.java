package org.zrm.protocol;

/** Row-level changes: {@code insert}, {@code update}, {@code delete}, {@code truncate}, {@code backfill}. */
public sealed interface DataChange extends DataOrSchemaChange
        permits Insert, Update, Delete, Truncate, Backfill {

    @Override
    default ChangeKind kind() {
        return ChangeKind.DATA;
    }
}

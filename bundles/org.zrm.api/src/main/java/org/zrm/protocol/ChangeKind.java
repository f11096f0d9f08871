package org.zrm.protocol;

/**
 * Classification of a change, as upstream's {@code isDataChange}/{@code isSchemaChange} do:
 * row-level data changes, schema changes (including {@code backfill-completed}), and everything
 * else ({@code begin}, {@code commit}, {@code rollback}, {@code status}, {@code control}).
 */
public enum ChangeKind {
    /** {@code insert}, {@code update}, {@code delete}, {@code truncate}, {@code backfill}. */
    DATA,
    /** The ten schema-change tags, {@code create-table} … {@code backfill-completed}. */
    SCHEMA,
    /** Transaction boundaries and non-change messages. */
    NONE
}

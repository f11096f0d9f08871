package org.zrm.changesource.pg.internal.replication;

import java.util.List;
import java.util.Map;
import org.zrm.protocol.ReplicaIdentity;

/**
 * One pgoutput (protocol version 1) message as parsed from an XLogData payload.
 *
 * <p>Row values are insertion-ordered maps in relation column order. A column whose value is not
 * known (an unchanged TOASTed value without an old-row fallback, or a non-key column of a key
 * tuple) is <em>absent</em> from the map, never mapped to {@code null}; {@code null} means SQL
 * NULL.
 *
 * <p>Times ({@code commitTimeMicros}) are microseconds since the Unix epoch: the parser converts
 * them from Postgres' epoch, 2000-01-01.
 */
public sealed interface PgOutputMessage {

    /** {@code B}: {@code commitLsn} is the start of the transaction's commit record. */
    record Begin(long commitLsn, long commitTimeMicros, long xid) implements PgOutputMessage {}

    /** {@code C}. */
    record Commit(int flags, long commitLsn, long commitEndLsn, long commitTimeMicros) implements PgOutputMessage {}

    /** {@code O}: ignored by the change maker (ZRM is not a Postgres replication origin). */
    record Origin(long originLsn, String originName) implements PgOutputMessage {}

    /** {@code Y}: a non-built-in type referenced by a following relation. */
    record Type(long typeOid, String typeSchema, String typeName) implements PgOutputMessage {}

    /** {@code R}; {@link RelationInfo} is what later tuples are decoded with. */
    record Relation(RelationInfo relation) implements PgOutputMessage {}

    /** {@code I}. */
    record Insert(RelationInfo relation, Map<String, Object> newRow) implements PgOutputMessage {}

    /**
     * {@code U}: {@code key} is set for a {@code K} tuple (key changed under DEFAULT/INDEX identity),
     * {@code old} for an {@code O} tuple (FULL identity); both are {@code null} otherwise.
     */
    record Update(RelationInfo relation, Map<String, Object> key, Map<String, Object> old, Map<String, Object> newRow)
            implements PgOutputMessage {}

    /** {@code D}: exactly one of {@code key} ({@code K}) and {@code old} ({@code O}) is set. */
    record Delete(RelationInfo relation, Map<String, Object> key, Map<String, Object> old) implements PgOutputMessage {}

    /** {@code T}. */
    record Truncate(boolean cascade, boolean restartIdentity, List<RelationInfo> relations) implements PgOutputMessage {}

    /** {@code M}: a logical decoding message ({@code pg_logical_emit_message}). */
    record Message(int flags, long messageLsn, String prefix, byte[] content) implements PgOutputMessage {
        /** Whether the message was emitted inside (and delivered as part of) a transaction. */
        public boolean transactional() {
            return (flags & 1) != 0;
        }
    }

    /**
     * A relation as announced by the last {@code R} message for its OID.
     *
     * @param oid the table's OID, unsigned
     * @param schema schema name
     * @param name table name
     * @param identity the replica identity
     * @param columns published columns in tuple order
     * @param keyColumns names of the columns flagged as part of the replica identity key
     * @param protocolRelation the relation object sent downstream, built once per {@code R} message
     */
    record RelationInfo(long oid, String schema, String name, ReplicaIdentity identity, List<Column> columns,
            List<String> keyColumns, org.zrm.protocol.Relation protocolRelation) {}

    /**
     * @param name column name
     * @param flags bit 0 = part of the key
     * @param typeOid type OID, unsigned
     * @param typeMod type modifier
     * @param parser converts the column's text values
     */
    record Column(String name, int flags, long typeOid, int typeMod,
            org.zrm.changesource.pg.internal.types.PgValueParser parser) {
        public boolean isKey() {
            return (flags & 1) != 0;
        }
    }
}

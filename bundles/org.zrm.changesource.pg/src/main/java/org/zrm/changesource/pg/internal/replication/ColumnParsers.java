package org.zrm.changesource.pg.internal.replication;

import org.zrm.changesource.pg.internal.types.PgValueParser;

/** Chooses the text-value parser for a column type announced in a Relation message. */
@FunctionalInterface
public interface ColumnParsers {

    /** Keeps every value as its Postgres text form (for tests and for benchmarks of raw parsing). */
    ColumnParsers TEXT = oid -> text -> text;

    /**
     * @param typeOid the column's type OID (unsigned)
     * @return the parser; never {@code null} (unknown types keep their text form)
     */
    PgValueParser forType(long typeOid);
}

package org.zrm.changesource.pg.internal.types;

import java.util.function.IntFunction;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Entry point for converting Postgres text values (pgoutput tuples, text COPY) into values (spec
 * §7.1–7.3).
 *
 * <p>Two targets differ only for {@code bytea}:
 * <ul>
 *   <li>{@link Target#PROTOCOL}: JSON values per {@link org.zrm.protocol.JsonValues}, for change
 *       messages: bool → Boolean; int2/int4/oid → Long; int8 → Long within ±(2^53−1), else
 *       BigInteger; float4/float8/numeric → Double (non-finite allowed, written as {@code null});
 *       date/timestamp/timestamptz → Double ms; time/timetz → Long ms; json/jsonb → the raw text
 *       (the transaction is {@code json:"s"}); bytea → {@code {"type":"Buffer","data":[…]}};
 *       arrays → unmodifiable nested lists (json/jsonb elements parsed, bigint-aware); everything
 *       else (enums, uuid, text, interval, …) → the text itself.</li>
 *   <li>{@link Target#REPLICA}: as above but bytea → {@code byte[]} (stored as a BLOB), for text
 *       COPY at initial sync. Feed the result to {@link org.zrm.replica.LiteValues#liteValue}.</li>
 * </ul>
 *
 * <p>Parsers are stateless and may be cached per column.
 */
public final class PgValueParsers {

    /** What the parsed values are for. */
    public enum Target {
        PROTOCOL,
        REPLICA
    }

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    private static final PgValueParser IDENTITY = text -> text;

    private PgValueParsers() {}

    /**
     * The parser for a built-in scalar type, or the identity (raw text) parser for any other OID.
     * Arrays need {@link #forType(int, IntFunction, Target)}.
     */
    public static PgValueParser forScalarOid(int oid, Target target) {
        switch (oid) {
            case PgTypeOids.BOOL:
                return PgTextValues::bool;
            case PgTypeOids.BYTEA:
                return target == Target.PROTOCOL
                        ? text -> PgTextValues.bufferJson(PgTextValues.bytea(text))
                        : PgTextValues::bytea;
            case PgTypeOids.INT8:
                return PgTextValues::int8;
            case PgTypeOids.INT2:
            case PgTypeOids.INT4:
            case PgTypeOids.OID:
                return PgTextValues::integer;
            case PgTypeOids.FLOAT4:
            case PgTypeOids.FLOAT8:
            case PgTypeOids.NUMERIC:
                return PgTextValues::number;
            case PgTypeOids.DATE:
                return PgTextValues::dateToUtcMidnight;
            case PgTypeOids.TIME:
            case PgTypeOids.TIMETZ:
                return PgTextValues::timeToMillis;
            case PgTypeOids.TIMESTAMP:
            case PgTypeOids.TIMESTAMPTZ:
                return PgTextValues::timestampToFpMillis;
            default:
                // json/jsonb (kept as text), enums, uuid, text, interval, …
                return IDENTITY;
        }
    }

    /**
     * The parser for any type, resolving array types through {@code lookup} (typically a
     * {@link PgTypeCatalog}). An OID that {@code lookup} does not know is treated as a scalar.
     *
     * <p>DECISION (QUIRK "array types created after the parser snapshot"): upstream falls back to
     * the raw {@code {a,b}} text for array types it did not know when its pool started; we resolve
     * every OID on demand, so the caller should refresh its catalog for unknown OIDs instead.
     *
     * @param oid the column's type OID
     * @param lookup resolves {@code pg_type} rows by OID; returns {@code null} if unknown
     */
    public static PgValueParser forType(int oid, IntFunction<PgType> lookup, Target target) {
        PgType type = lookup.apply(oid);
        if (type != null && type.isArray()) {
            return arrayOf(forElement(type.elemOid(), lookup, target), type.delimiter());
        }
        return forScalarOid(oid, target);
    }

    /**
     * Like {@link #forType(int, IntFunction, Target)} for a column described by the published
     * schema, where only the type class of the element is known: non-null
     * {@code elemTypeOid} marks an array. Array element parsers for built-in element types are
     * resolved without a catalog.
     */
    public static PgValueParser forColumn(int typeOid, int elemTypeOid, PgTypeClass elemTypeClass, char delimiter,
            Target target) {
        if (elemTypeOid != 0 && elemTypeClass != null) {
            return arrayOf(forElement(elemTypeOid, oid -> null, target), delimiter);
        }
        return forScalarOid(typeOid, target);
    }

    /** A parser for arrays whose elements are converted by {@code element}. */
    public static PgValueParser arrayOf(PgValueParser element, char delimiter) {
        return new PgArrayParser(element, delimiter);
    }

    private static PgValueParser forElement(int elemOid, IntFunction<PgType> lookup, Target target) {
        if (elemOid == PgTypeOids.JSON || elemOid == PgTypeOids.JSONB) {
            // json[]/jsonb[] elements are parsed (bigint-aware), unlike json columns.
            return CODEC::decodeValue;
        }
        if (elemOid == PgTypeOids.BYTEA) {
            // Inside arrays a Buffer can only be represented by its JSON form.
            return text -> PgTextValues.bufferJson(PgTextValues.bytea(text));
        }
        return forType(elemOid, lookup, target);
    }
}

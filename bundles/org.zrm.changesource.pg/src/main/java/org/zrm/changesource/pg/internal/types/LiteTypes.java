package org.zrm.changesource.pg.internal.types;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.zrm.protocol.PgTypeClass;

/**
 * The SQLite replica's column type strings ("lite type strings", spec §6.3): the upstream data type
 * followed by attributes {@code |NOT_NULL}, {@code |TEXT_ENUM}, {@code |TEXT_ARRAY}. SQLite derives
 * each column's affinity from this string, so it must be byte-identical to zero-cache's.
 */
public final class LiteTypes {

    public static final String NOT_NULL = "|NOT_NULL";
    public static final String TEXT_ENUM = "|TEXT_ENUM";
    public static final String TEXT_ARRAY = "|TEXT_ARRAY";

    private static final Map<String, ZqlType> ZQL_TYPES = Map.ofEntries(
            Map.entry("smallint", ZqlType.NUMBER), Map.entry("integer", ZqlType.NUMBER),
            Map.entry("int", ZqlType.NUMBER), Map.entry("int2", ZqlType.NUMBER),
            Map.entry("int4", ZqlType.NUMBER), Map.entry("int8", ZqlType.NUMBER),
            Map.entry("bigint", ZqlType.NUMBER), Map.entry("smallserial", ZqlType.NUMBER),
            Map.entry("serial", ZqlType.NUMBER), Map.entry("serial2", ZqlType.NUMBER),
            Map.entry("serial4", ZqlType.NUMBER), Map.entry("serial8", ZqlType.NUMBER),
            Map.entry("bigserial", ZqlType.NUMBER), Map.entry("decimal", ZqlType.NUMBER),
            Map.entry("numeric", ZqlType.NUMBER), Map.entry("real", ZqlType.NUMBER),
            Map.entry("double precision", ZqlType.NUMBER), Map.entry("float", ZqlType.NUMBER),
            Map.entry("float4", ZqlType.NUMBER), Map.entry("float8", ZqlType.NUMBER),
            Map.entry("date", ZqlType.NUMBER), Map.entry("time", ZqlType.NUMBER),
            Map.entry("timetz", ZqlType.NUMBER), Map.entry("time with time zone", ZqlType.NUMBER),
            Map.entry("time without time zone", ZqlType.NUMBER), Map.entry("timestamp", ZqlType.NUMBER),
            Map.entry("timestamptz", ZqlType.NUMBER), Map.entry("timestamp with time zone", ZqlType.NUMBER),
            Map.entry("timestamp without time zone", ZqlType.NUMBER),
            Map.entry("bpchar", ZqlType.STRING), Map.entry("character", ZqlType.STRING),
            Map.entry("character varying", ZqlType.STRING), Map.entry("text", ZqlType.STRING),
            Map.entry("varchar", ZqlType.STRING), Map.entry("cidr", ZqlType.STRING),
            Map.entry("ean13", ZqlType.STRING), Map.entry("inet", ZqlType.STRING),
            Map.entry("isbn", ZqlType.STRING), Map.entry("isbn13", ZqlType.STRING),
            Map.entry("ismn", ZqlType.STRING), Map.entry("ismn13", ZqlType.STRING),
            Map.entry("issn", ZqlType.STRING), Map.entry("issn13", ZqlType.STRING),
            Map.entry("macaddr", ZqlType.STRING), Map.entry("macaddr8", ZqlType.STRING),
            Map.entry("pg_lsn", ZqlType.STRING), Map.entry("upc", ZqlType.STRING),
            Map.entry("uuid", ZqlType.STRING),
            Map.entry("bool", ZqlType.BOOLEAN), Map.entry("boolean", ZqlType.BOOLEAN),
            Map.entry("json", ZqlType.JSON), Map.entry("jsonb", ZqlType.JSON));

    private LiteTypes() {}

    /**
     * Formats a lite type string.
     *
     * @throws IllegalArgumentException if the upstream type contains {@code |}
     */
    public static String liteTypeString(String upstreamDataType, boolean notNull, boolean textEnum, boolean textArray) {
        if (upstreamDataType.indexOf('|') >= 0) {
            throw new IllegalArgumentException("Upstream type should not contain |: " + upstreamDataType);
        }
        StringBuilder sb = new StringBuilder(upstreamDataType);
        if (notNull) {
            sb.append(NOT_NULL);
        }
        if (textEnum) {
            sb.append(TEXT_ENUM);
        }
        if (textArray) {
            sb.append(TEXT_ARRAY);
        }
        return sb.toString();
    }

    /**
     * The lite type string of an upstream column: enum if the (element) type class is enum, array
     * if it has an element type class.
     */
    public static String forColumn(String dataType, boolean notNull, PgTypeClass typeClass, PgTypeClass elemTypeClass) {
        return liteTypeString(dataType, notNull, isEnumColumn(typeClass, elemTypeClass), elemTypeClass != null);
    }

    /** {@code (elemPgTypeClass ?? pgTypeClass) == enum}. */
    public static boolean isEnumColumn(PgTypeClass typeClass, PgTypeClass elemTypeClass) {
        return (elemTypeClass != null ? elemTypeClass : typeClass) == PgTypeClass.ENUM;
    }

    /** The upstream type part of a lite type string. */
    public static String upstreamDataType(String liteType) {
        int i = liteType.indexOf('|');
        return i > 0 ? liteType.substring(0, i) : liteType;
    }

    public static boolean isEnum(String liteType) {
        return liteType.contains(TEXT_ENUM);
    }

    /** Arrays: {@code |TEXT_ARRAY}, or the legacy {@code []} suffix (also plain upstream array types). */
    public static boolean isArray(String liteType) {
        return liteType.contains(TEXT_ARRAY) || liteType.contains("[]");
    }

    /**
     * The ZQL value type of a lite type string or upstream data type; empty for types ZQL does not
     * support (replicated but not synced to clients).
     */
    public static Optional<ZqlType> zqlType(String liteTypeOrDataType) {
        if (isArray(liteTypeOrDataType)) {
            return Optional.of(ZqlType.JSON);
        }
        String t = upstreamDataType(liteTypeOrDataType).toLowerCase(Locale.ROOT);
        int paren = t.indexOf('(');
        if (paren >= 0) {
            t = t.substring(0, paren);
        }
        ZqlType z = ZQL_TYPES.get(t);
        if (z == null && isEnum(liteTypeOrDataType)) {
            return Optional.of(ZqlType.STRING);
        }
        return Optional.ofNullable(z);
    }
}

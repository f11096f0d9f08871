package org.zrm.replica;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.PgTypeClass;

/**
 * The replica's declared column types, "lite type strings" (upstream {@code liteTypeString} and
 * {@code liteTypeToZqlValueType}): the upstream Postgres data type followed by the attributes
 * {@link #NOT_NULL}, {@link #TEXT_ENUM} and {@link #TEXT_ARRAY}, in that order, e.g.
 * {@code mood[]|NOT_NULL|TEXT_ENUM|TEXT_ARRAY}. SQLite derives each column's affinity from this
 * string, so it must be byte-identical to zero-cache's.
 */
public final class LiteTypes {

    /** Attribute of a column that is {@code NOT NULL} upstream. */
    public static final String NOT_NULL = "|NOT_NULL";
    /** Attribute of an enum column (or an array of enums). */
    public static final String TEXT_ENUM = "|TEXT_ENUM";
    /** Attribute of an array column; the values are stored as JSON arrays. */
    public static final String TEXT_ARRAY = "|TEXT_ARRAY";

    /** Upstream type names (lower case, without modifiers) that ZQL supports, by value type. */
    private static final Map<String, ZqlType> ZQL_TYPES = byName(Map.of(
            ZqlType.NUMBER, List.of("smallint", "integer", "int", "int2", "int4", "int8", "bigint", "smallserial",
                    "serial", "serial2", "serial4", "serial8", "bigserial", "decimal", "numeric", "real",
                    "double precision", "float", "float4", "float8", "date", "time", "timetz", "time with time zone",
                    "time without time zone", "timestamp", "timestamptz", "timestamp with time zone",
                    "timestamp without time zone"),
            ZqlType.STRING, List.of("bpchar", "character", "character varying", "text", "varchar", "cidr", "ean13",
                    "inet", "isbn", "isbn13", "ismn", "ismn13", "issn", "issn13", "macaddr", "macaddr8", "pg_lsn",
                    "upc", "uuid"),
            ZqlType.BOOLEAN, List.of("bool", "boolean"),
            ZqlType.JSON, List.of("json", "jsonb")));

    private LiteTypes() {}

    private static Map<String, ZqlType> byName(Map<ZqlType, List<String>> namesByType) {
        Map<String, ZqlType> out = new HashMap<>();
        namesByType.forEach((type, names) -> names.forEach(n -> out.put(n, type)));
        return Map.copyOf(out);
    }

    /**
     * Formats a lite type string from its parts.
     *
     * @param upstreamDataType the Postgres type name as published, e.g. {@code int4} or
     *     {@code varchar[]}
     * @param notNull whether to append {@link #NOT_NULL}
     * @param textEnum whether to append {@link #TEXT_ENUM}
     * @param textArray whether to append {@link #TEXT_ARRAY}
     * @return the lite type string
     * @throws IllegalArgumentException if {@code upstreamDataType} contains {@code |}
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
     * The lite type string of an upstream column (upstream {@code mapPostgresToLiteColumn}): an
     * enum column if the element type class, or else the type class, is {@link PgTypeClass#ENUM};
     * an array column if it has an element type class.
     *
     * @param dataType the Postgres type name
     * @param notNull whether the column is {@code NOT NULL} upstream
     * @param typeClass the column's type class; may be {@code null}
     * @param elemTypeClass the element type class of an array column, {@code null} otherwise
     * @return the lite type string
     * @throws IllegalArgumentException if {@code dataType} contains {@code |}
     */
    public static String forColumn(String dataType, boolean notNull, PgTypeClass typeClass, PgTypeClass elemTypeClass) {
        return liteTypeString(dataType, notNull, isEnumColumn(typeClass, elemTypeClass), elemTypeClass != null);
    }

    /**
     * The lite type string of a column of the change-source protocol, as
     * {@link #forColumn(String, boolean, PgTypeClass, PgTypeClass)}; an absent or {@code null}
     * {@code notNull} counts as nullable.
     *
     * @param spec the column
     * @return the lite type string
     * @throws IllegalArgumentException if the data type contains {@code |}
     */
    public static String forColumn(ColumnSpec spec) {
        return forColumn(spec.dataType(), Boolean.TRUE.equals(spec.notNull().value()), spec.pgTypeClass(),
                spec.elemPgTypeClass().value());
    }

    /**
     * Whether a column is an enum column: {@code (elemTypeClass ?? typeClass) == ENUM}.
     *
     * @param typeClass the column's type class; may be {@code null}
     * @param elemTypeClass the element type class of an array column, {@code null} otherwise
     * @return {@code true} for enums and arrays of enums
     */
    public static boolean isEnumColumn(PgTypeClass typeClass, PgTypeClass elemTypeClass) {
        return (elemTypeClass != null ? elemTypeClass : typeClass) == PgTypeClass.ENUM;
    }

    /**
     * The upstream type part of a lite type string (everything before the first attribute).
     *
     * @param liteType a lite type string or plain upstream type
     * @return the upstream type
     */
    public static String upstreamDataType(String liteType) {
        int i = liteType.indexOf('|');
        return i > 0 ? liteType.substring(0, i) : liteType;
    }

    /**
     * Whether a lite type string carries {@link #NOT_NULL}.
     *
     * @param liteType a lite type string
     * @return {@code true} if the upstream column is {@code NOT NULL}
     */
    public static boolean isNotNull(String liteType) {
        return liteType.contains(NOT_NULL);
    }

    /**
     * Whether a lite type string carries {@link #TEXT_ENUM}.
     *
     * @param liteType a lite type string
     * @return {@code true} for enum columns
     */
    public static boolean isEnum(String liteType) {
        return liteType.contains(TEXT_ENUM);
    }

    /**
     * Whether a lite type string denotes an array: it carries {@link #TEXT_ARRAY} or, as older
     * replicas and plain upstream array types do, contains {@code []}.
     *
     * @param liteType a lite type string or plain upstream type
     * @return {@code true} for array columns
     */
    public static boolean isArray(String liteType) {
        return liteType.contains(TEXT_ARRAY) || liteType.contains("[]");
    }

    /**
     * The ZQL value type of a column: {@link ZqlType#JSON} for arrays, else by the upstream type
     * (case-insensitive, ignoring a type modifier such as {@code (20)}), else
     * {@link ZqlType#STRING} for enums.
     *
     * @param liteTypeOrDataType a lite type string or plain upstream type
     * @return the value type, or empty for types ZQL does not support (such columns are replicated
     *     but not synced to clients)
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

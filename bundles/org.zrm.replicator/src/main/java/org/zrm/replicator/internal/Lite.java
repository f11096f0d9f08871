package org.zrm.replicator.internal;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.PgTypeClass;

/**
 * Naming and typing conventions of Zero's SQLite replica (backup-monitors spec §5.1): table names,
 * identifier quoting and the "lite type strings" ({@code upstreamType|NOT_NULL|TEXT_ENUM|TEXT_ARRAY})
 * that SQLite keeps as declared column types. They must be byte-identical to what the change
 * source's initial sync writes, because SQLite derives column affinity from them.
 */
final class Lite {

    static final String ZERO_VERSION_COLUMN = "_0_version";

    private static final String NOT_NULL = "|NOT_NULL";
    private static final String TEXT_ENUM = "|TEXT_ENUM";
    private static final String TEXT_ARRAY = "|TEXT_ARRAY";

    /** Upstream types whose ZQL value type is {@code json}; arrays are json too. */
    private static final Set<String> JSON_TYPES = Set.of("json", "jsonb");

    /** Upstream types ZQL can sync (any other column is replicated but not synced to clients). */
    private static final Set<String> ZQL_TYPES = Set.of("smallint", "integer", "int", "int2", "int4", "int8",
            "bigint", "smallserial", "serial", "serial2", "serial4", "serial8", "bigserial", "decimal", "numeric",
            "real", "double precision", "float", "float4", "float8", "date", "time", "timetz",
            "time with time zone", "time without time zone", "timestamp", "timestamptz",
            "timestamp with time zone", "timestamp without time zone", "bpchar", "character",
            "character varying", "text", "varchar", "cidr", "ean13", "inet", "isbn", "isbn13", "ismn", "ismn13",
            "issn", "issn13", "macaddr", "macaddr8", "pg_lsn", "upc", "uuid", "bool", "boolean", "json", "jsonb");

    private Lite() {}

    /** SQLite identifier quoting. */
    static String id(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    /** Quotes and joins a list of identifiers with {@code ,}. */
    static String idList(List<String> names) {
        StringBuilder sb = new StringBuilder();
        for (String n : names) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(id(n));
        }
        return sb.toString();
    }

    /** Zero's {@code liteTableName}: {@code name} in schema {@code public}, else {@code schema.name}. */
    static String tableName(String schema, String name) {
        return "public".equals(schema) ? name : schema + "." + name;
    }

    /** The lite type string of an upstream column spec, as {@code mapPostgresToLiteColumn} builds it. */
    static String liteType(ColumnSpec spec) {
        String dataType = spec.dataType();
        if (dataType.indexOf('|') >= 0) {
            throw new IllegalArgumentException("Upstream type should not contain |: " + dataType);
        }
        StringBuilder sb = new StringBuilder(dataType);
        if (Boolean.TRUE.equals(spec.notNull().value())) {
            sb.append(NOT_NULL);
        }
        if (isEnum(spec)) {
            sb.append(TEXT_ENUM);
        }
        if (isArray(spec)) {
            sb.append(TEXT_ARRAY);
        }
        return sb.toString();
    }

    /** {@code (elemPgTypeClass ?? pgTypeClass) == enum}. */
    static boolean isEnum(ColumnSpec spec) {
        PgTypeClass elem = spec.elemPgTypeClass().value();
        return (elem != null ? elem : spec.pgTypeClass()) == PgTypeClass.ENUM;
    }

    /** Array columns have a non-null element type class. */
    static boolean isArray(ColumnSpec spec) {
        return spec.elemPgTypeClass().value() != null;
    }

    /** Whether values of a column with this declared (lite) type are stored as JSON text. */
    static boolean isJson(String liteType) {
        if (isArrayType(liteType)) {
            return true;
        }
        return JSON_TYPES.contains(baseType(liteType));
    }

    /** Whether ZQL can sync a column of this declared type (upstream {@code liteTypeToZqlValueType} is defined). */
    static boolean isZqlType(String liteType) {
        return isArrayType(liteType) || ZQL_TYPES.contains(baseType(liteType)) || liteType.contains(TEXT_ENUM);
    }

    /** Whether the declared type says the upstream column is NOT NULL. */
    static boolean isNotNull(String liteType) {
        return liteType.contains(NOT_NULL);
    }

    private static boolean isArrayType(String liteType) {
        return liteType.contains(TEXT_ARRAY) || liteType.contains("[]");
    }

    private static String baseType(String liteType) {
        int bar = liteType.indexOf('|');
        String t = (bar > 0 ? liteType.substring(0, bar) : liteType).toLowerCase(Locale.ROOT);
        int paren = t.indexOf('(');
        return paren >= 0 ? t.substring(0, paren) : t;
    }

    /** Columns of {@code row} in order, as a fresh list (for binding). */
    static List<String> columns(Map<String, ?> row) {
        return List.copyOf(row.keySet());
    }
}

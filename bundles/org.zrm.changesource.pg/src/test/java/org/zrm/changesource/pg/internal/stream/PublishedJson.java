package org.zrm.changesource.pg.internal.stream;

import java.util.List;
import java.util.Map;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Published-schema JSON as the shard's {@code schema_specs()} writes it (member order included),
 * for the pure DDL tests.
 */
final class PublishedJson {

    static final ProtocolCodec CODEC = new ProtocolCodec();
    static final long SCHEMA_OID = 2200;

    private PublishedJson() {}

    /** A column of a base type; {@code dflt} is raw JSON ({@code null} or a quoted string). */
    static String col(String name, int pos, String type, int typeOid, boolean notNull, String dflt) {
        return "\"" + name + "\":{\"pos\":" + pos + ",\"dataType\":\"" + type + "\",\"pgTypeClass\":\"b\","
                + "\"elemPgTypeClass\":null,\"typeOID\":" + typeOid + ",\"characterMaximumLength\":null,\"notNull\":"
                + notNull + ",\"dflt\":" + dflt + "}";
    }

    static String text(String name, int pos, boolean notNull) {
        return col(name, pos, "text", 25, notNull, "null");
    }

    static String int8(String name, int pos, boolean notNull) {
        return col(name, pos, "int8", 20, notNull, "null");
    }

    /** A table in publication {@code zero_all}; {@code pk} is a JSON array or {@code null}. */
    static String table(long oid, String schema, String name, char identity, String pk, String... cols) {
        return "{\"oid\":" + oid + ",\"schema\":\"" + schema + "\",\"schemaOID\":" + SCHEMA_OID + ",\"name\":\"" + name
                + "\",\"replicaIdentity\":\"" + identity + "\",\"columns\":{" + String.join(",", cols)
                + "},\"primaryKey\":" + pk + ",\"publications\":{\"zero_all\":{\"rowFilter\":null}}}";
    }

    /** An index; {@code cols} is the JSON object body, e.g. {@code "id":"ASC"}. */
    static String index(String schema, String table, String name, boolean unique, boolean pk, boolean identity,
            String cols) {
        return "{\"schema\":\"" + schema + "\",\"tableName\":\"" + table + "\",\"name\":\"" + name + "\",\"unique\":"
                + unique + ",\"isPrimaryKey\":" + pk + ",\"isReplicaIdentity\":" + identity
                + ",\"isImmediate\":true,\"columns\":{" + cols + "}}";
    }

    static String schemaJson(List<String> tables, List<String> indexes) {
        return "{\"tables\":[" + String.join(",", tables) + "],\"indexes\":[" + String.join(",", indexes) + "]}";
    }

    @SuppressWarnings("unchecked")
    static PublishedSchema schema(List<String> tables, List<String> indexes) {
        return PublishedSchema.parse((Map<String, Object>) CODEC.decodeValue(schemaJson(tables, indexes)));
    }

    /** An event; {@code prev} is raw JSON, or {@code null} to leave {@code previousSchema} out. */
    static String event(String type, String prev, String schema, String tag, String query) {
        return "{\"type\":\"" + type + "\",\"version\":1," + (prev == null ? "" : "\"previousSchema\":" + prev + ",")
                + "\"schema\":" + schema + ",\"event\":{\"tag\":\"" + tag + "\"},\"context\":{\"query\":\"" + query
                + "\"}}";
    }
}

package org.zrm.replica.sync;

import java.util.ArrayList;
import java.util.List;

/** Message texts of a snapshot transaction as a custom change source sends them. */
final class Snapshot {

    private Snapshot() {}

    static String begin(String watermark) {
        return "[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"" + watermark + "\"}]";
    }

    static String commit(String watermark) {
        return "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"" + watermark + "\"}]";
    }

    static String col(String name, int pos, String type, boolean notNull) {
        return "\"" + name + "\":{\"pos\":" + pos + ",\"dataType\":\"" + type + "\",\"notNull\":" + notNull + "}";
    }

    static String createTable(String schema, String name, List<String> key, String... cols) {
        return "[\"data\",{\"tag\":\"create-table\",\"spec\":{\"schema\":\"" + schema + "\",\"name\":\"" + name
                + "\",\"columns\":{" + String.join(",", cols) + "},\"primaryKey\":" + jsonList(key) + "}}]";
    }

    static String createUniqueIndex(String schema, String table, List<String> key) {
        StringBuilder cols = new StringBuilder();
        for (String k : key) {
            cols.append(cols.length() == 0 ? "" : ",").append('"').append(k).append("\":\"ASC\"");
        }
        return "[\"data\",{\"tag\":\"create-index\",\"spec\":{\"schema\":\"" + schema + "\",\"tableName\":\"" + table
                + "\",\"name\":\"" + table + "_pkey\",\"unique\":true,\"columns\":{" + cols + "}}}]";
    }

    static String insert(String schema, String table, List<String> key, String rowJson) {
        return "[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"" + schema + "\",\"name\":\"" + table
                + "\",\"rowKey\":{\"columns\":" + jsonList(key) + "}},\"new\":" + rowJson + "}]";
    }

    /** Table and index of {@code {app}_{n}.mutations}, with {@code mutationType} as the mutation column's type. */
    static List<String> mutations(String app, String mutationColumn, String mutationType) {
        String shard = app + "_0";
        List<String> key = List.of("clientGroupID", "clientID", "mutationID");
        return List.of(createTable(shard, "mutations", key, col("clientGroupID", 1, "text", true),
                col("clientID", 2, "text", true), col("mutationID", 3, "int8", true),
                col(mutationColumn, 4, mutationType, false)), createUniqueIndex(shard, "mutations", key));
    }

    static List<String> clients(String app) {
        String shard = app + "_0";
        List<String> key = List.of("clientGroupID", "clientID");
        return List.of(createTable(shard, "clients", key, col("clientGroupID", 1, "text", true),
                col("clientID", 2, "text", true), col("lastMutationID", 3, "int8", true), col("userID", 4, "text", false)),
                createUniqueIndex(shard, "clients", key));
    }

    static List<String> permissions(String app) {
        List<String> key = List.of("lock");
        return List.of(createTable(app, "permissions", key, col("lock", 1, "bool", true),
                col("permissions", 2, "json", false), col("hash", 3, "text", false)),
                createUniqueIndex(app, "permissions", key));
    }

    /** The required tables of app {@code zero}, shard 0, plus {@code public.items(id, title)} with one row. */
    static List<String> snapshot(String watermark) {
        List<String> m = new ArrayList<>();
        m.add(begin(watermark));
        m.addAll(clients("zero"));
        m.addAll(mutations("zero", "mutation", "json"));
        m.addAll(permissions("zero"));
        m.addAll(items());
        m.add(insert("public", "items", List.of("id"), "{\"id\":1,\"title\":\"hello\"}"));
        m.add(commit(watermark));
        return m;
    }

    static List<String> items() {
        return List.of(createTable("public", "items", List.of("id"), col("id", 1, "int4", true),
                col("title", 2, "text", false)), createUniqueIndex("public", "items", List.of("id")));
    }

    private static String jsonList(List<String> items) {
        StringBuilder sb = new StringBuilder("[");
        for (String s : items) {
            sb.append(sb.length() == 1 ? "" : ",").append('"').append(s).append('"');
        }
        return sb.append(']').toString();
    }
}

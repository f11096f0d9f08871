package org.zrm.storer.internal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.zrm.changelog.ChangeLogException;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Derives the {@code tableMetadata}/{@code backfilling} bookkeeping a schema change implies
 * (spec §3.7), written in the same database transaction right after the schema-change row, so
 * that a restarted change source can resume unfinished backfills.
 *
 * <p>The change is read from its stored JSON text as plain JSON values rather than as protocol
 * records: only a few members matter, and re-encoding them with the codec keeps metadata and
 * backfill ids exactly as the source sent them.
 */
final class SchemaChangeTracker {

    /** One parameterised statement; parameters are strings or {@code String[]}. */
    record Sql(String text, Object... params) {
    }

    private static final Set<String> SCHEMA_CHANGE_TAGS = Set.of("create-table", "rename-table",
            "update-table-metadata", "add-column", "update-column", "drop-column", "drop-table", "create-index",
            "drop-index", "backfill-completed");

    private final CdcSchema schema;
    private final ProtocolCodec codec;

    SchemaChangeTracker(CdcSchema schema, ProtocolCodec codec) {
        this.schema = schema;
        this.codec = codec;
    }

    static boolean isSchemaChange(String tag) {
        return SCHEMA_CHANGE_TAGS.contains(tag);
    }

    /**
     * @param tag the change's tag
     * @param changeJson the change's JSON text
     * @return the statements to run, in order (possibly none)
     * @throws ChangeLogException if the change is not the JSON object its tag requires
     */
    List<Sql> statements(String tag, String changeJson) throws ChangeLogException {
        Map<String, Object> c;
        try {
            c = object(codec.decodeValue(changeJson), "change");
        } catch (RuntimeException e) {
            throw new ChangeLogException("malformed " + tag + " change: " + e.getMessage(), e);
        }
        List<Sql> out = new ArrayList<>();
        try {
            switch (tag) {
                case "update-table-metadata" -> {
                    Map<String, Object> table = object(c.get("table"), "table");
                    out.add(upsertTableMetadata(str(table, "schema"), str(table, "name"), c.get("new")));
                }
                case "create-table" -> {
                    Map<String, Object> spec = object(c.get("spec"), "spec");
                    String s = str(spec, "schema");
                    String n = str(spec, "name");
                    if (c.get("metadata") != null) {
                        out.add(upsertTableMetadata(s, n, c.get("metadata")));
                    }
                    if (c.get("backfill") != null) {
                        for (Map.Entry<String, Object> e : object(c.get("backfill"), "backfill").entrySet()) {
                            out.add(upsertBackfill(s, n, e.getKey(), e.getValue()));
                        }
                    }
                }
                case "rename-table" -> {
                    Map<String, Object> old = object(c.get("old"), "old");
                    Map<String, Object> neu = object(c.get("new"), "new");
                    for (String t : List.of("tableMetadata", "backfilling")) {
                        out.add(new Sql("UPDATE " + schema.table(t) + " SET \"schema\" = ?, \"table\" = ?"
                                + " WHERE \"schema\" = ? AND \"table\" = ?",
                                str(neu, "schema"), str(neu, "name"), str(old, "schema"), str(old, "name")));
                    }
                }
                case "drop-table" -> {
                    Map<String, Object> id = object(c.get("id"), "id");
                    for (String t : List.of("tableMetadata", "backfilling")) {
                        out.add(new Sql("DELETE FROM " + schema.table(t) + " WHERE \"schema\" = ? AND \"table\" = ?",
                                str(id, "schema"), str(id, "name")));
                    }
                }
                case "add-column" -> {
                    Map<String, Object> table = object(c.get("table"), "table");
                    String s = str(table, "schema");
                    String n = str(table, "name");
                    if (c.get("tableMetadata") != null) {
                        out.add(upsertTableMetadata(s, n, c.get("tableMetadata")));
                    }
                    if (c.get("backfill") != null) {
                        out.add(upsertBackfill(s, n, str(object(c.get("column"), "column"), "name"), c.get("backfill")));
                    }
                }
                case "update-column" -> {
                    Map<String, Object> table = object(c.get("table"), "table");
                    String oldName = str(object(c.get("old"), "old"), "name");
                    String newName = str(object(c.get("new"), "new"), "name");
                    if (!oldName.equals(newName)) {
                        out.add(new Sql("UPDATE " + schema.table("backfilling") + " SET \"column\" = ?"
                                + " WHERE \"schema\" = ? AND \"table\" = ? AND \"column\" = ?",
                                newName, str(table, "schema"), str(table, "name"), oldName));
                    }
                }
                case "drop-column" -> {
                    Map<String, Object> table = object(c.get("table"), "table");
                    out.add(new Sql("DELETE FROM " + schema.table("backfilling")
                            + " WHERE \"schema\" = ? AND \"table\" = ? AND \"column\" = ?",
                            str(table, "schema"), str(table, "name"), str(c, "column")));
                }
                case "backfill-completed" -> {
                    Map<String, Object> rel = object(c.get("relation"), "relation");
                    Set<String> cols = new LinkedHashSet<>();
                    cols.addAll(strings(object(rel.get("rowKey"), "relation.rowKey").get("columns"), "rowKey.columns"));
                    cols.addAll(strings(c.get("columns"), "columns"));
                    out.add(new Sql("DELETE FROM " + schema.table("backfilling")
                            + " WHERE \"schema\" = ? AND \"table\" = ? AND \"column\" = ANY(?)",
                            str(rel, "schema"), str(rel, "name"), cols.toArray(String[]::new)));
                }
                default -> {
                    // create-index and drop-index carry no backfill state.
                }
            }
        } catch (IllegalArgumentException e) {
            throw new ChangeLogException("malformed " + tag + " change: " + e.getMessage(), e);
        }
        return out;
    }

    private Sql upsertTableMetadata(String s, String t, Object metadata) {
        return new Sql("INSERT INTO " + schema.table("tableMetadata") + " (\"schema\", \"table\", \"metadata\")"
                + " VALUES (?, ?, ?::jsonb) ON CONFLICT (\"schema\", \"table\") DO UPDATE SET"
                + " \"schema\" = EXCLUDED.\"schema\", \"table\" = EXCLUDED.\"table\", \"metadata\" = EXCLUDED.\"metadata\"",
                s, t, codec.encodeValue(object(metadata, "metadata")));
    }

    private Sql upsertBackfill(String s, String t, String column, Object backfill) {
        return new Sql("INSERT INTO " + schema.table("backfilling") + " (\"schema\", \"table\", \"column\", \"backfill\")"
                + " VALUES (?, ?, ?, ?::jsonb) ON CONFLICT (\"schema\", \"table\", \"column\") DO UPDATE SET"
                + " \"schema\" = EXCLUDED.\"schema\", \"table\" = EXCLUDED.\"table\", \"column\" = EXCLUDED.\"column\","
                + " \"backfill\" = EXCLUDED.\"backfill\"",
                s, t, column, codec.encodeValue(object(backfill, "backfill")));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object v, String what) {
        if (v instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new IllegalArgumentException(what + " must be an object");
    }

    private static String str(Map<String, Object> m, String key) {
        if (m.get(key) instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException(key + " must be a string");
    }

    private static List<String> strings(Object v, String what) {
        if (v instanceof List<?> list) {
            List<String> out = new ArrayList<>(list.size());
            for (Object o : list) {
                if (!(o instanceof String s)) {
                    throw new IllegalArgumentException(what + " must hold strings");
                }
                out.add(s);
            }
            return out;
        }
        throw new IllegalArgumentException(what + " must be an array");
    }
}

package org.zrm.example.jsonl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One line of a change file: one transaction, parsed and checked completely before anything of it
 * is emitted.
 *
 * <pre>
 * {"changes": [
 *   {"op": "insert", "table": "public.items", "row": {"id": 1, "title": "first"}},
 *   {"op": "update", "table": "public.items", "row": {"id": 1, "title": "renamed"}},
 *   {"op": "delete", "table": "public.items", "key": {"id": 1}}
 * ]}
 * </pre>
 *
 * <p>{@code insert} and {@code update} carry the whole new row (a column left out is null);
 * {@code update} of a missing row inserts it, {@code insert} of an existing row replaces it
 * (ZRM's replica applies both as upserts). The primary key of a row never changes: write a delete
 * and an insert instead. Unknown fields, tables and columns are errors, not ignored, so that a
 * typo cannot drop data.
 *
 * @param changes the row changes, in order (possibly none: a transaction that only advances the
 *     watermark)
 */
public record TransactionLine(List<RowChange> changes) {

    /** What a row change does. */
    public enum Op { INSERT, UPDATE, DELETE }

    /**
     * One row change.
     *
     * @param op what it does
     * @param table the table
     * @param values for insert and update the whole new row, every column present; for delete the
     *     primary key
     */
    public record RowChange(Op op, DirectorySchema.Table table, ObjectNode values) {}

    /**
     * Parses and checks one line.
     *
     * @param line the line without its newline
     * @param where names the line in errors: {@code changes-000001.jsonl:17}
     * @param schema the directory's tables
     * @return the transaction
     * @throws BadInputException naming {@code where} and the problem, if the line is not a valid
     *     transaction
     */
    public static TransactionLine parse(String line, String where, DirectorySchema schema) {
        JsonNode root;
        try {
            root = DirectorySchema.MAPPER.readTree(line);
        } catch (JsonProcessingException e) {
            throw new BadInputException(where + ": not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new BadInputException(where + ": a line must be a JSON object {\"changes\": [...]}");
        }
        onlyFields(where, root, Set.of("changes"));
        JsonNode list = root.get("changes");
        if (list == null || !list.isArray()) {
            throw new BadInputException(where + ": \"changes\" must be an array");
        }
        List<RowChange> changes = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            changes.add(change(where + ": changes[" + i + "]", list.get(i), schema));
        }
        return new TransactionLine(List.copyOf(changes));
    }

    private static RowChange change(String where, JsonNode c, DirectorySchema schema) {
        if (!c.isObject()) {
            throw new BadInputException(where + ": must be an object");
        }
        JsonNode opNode = c.get("op");
        Op op;
        if (opNode == null || !opNode.isTextual()) {
            throw new BadInputException(where + ": \"op\" must be \"insert\", \"update\" or \"delete\"");
        }
        switch (opNode.asText()) {
            case "insert" -> op = Op.INSERT;
            case "update" -> op = Op.UPDATE;
            case "delete" -> op = Op.DELETE;
            default -> throw new BadInputException(where + ": unknown op \"" + opNode.asText()
                    + "\" (expected insert, update or delete)");
        }
        JsonNode tableNode = c.get("table");
        DirectorySchema.Table table = tableNode != null && tableNode.isTextual()
                ? schema.tables().get(tableNode.asText()) : null;
        if (table == null) {
            throw new BadInputException(where + ": unknown table " + tableNode + " (schema.json has "
                    + String.join(", ", schema.tableNames()) + ")");
        }
        String valuesField = op == Op.DELETE ? "key" : "row";
        onlyFields(where, c, Set.of("op", "table", valuesField));
        JsonNode values = c.get(valuesField);
        if (values == null || !values.isObject()) {
            throw new BadInputException(where + ": \"" + valuesField + "\" must be an object");
        }
        ObjectNode out = DirectorySchema.MAPPER.createObjectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = values.fields(); it.hasNext();) {
            String col = it.next().getKey();
            boolean allowed = op == Op.DELETE ? table.primaryKey().contains(col) : table.columns().containsKey(col);
            if (!allowed) {
                throw new BadInputException(where + ": " + table.qualifiedName() + " has no "
                        + (op == Op.DELETE ? "key " : "") + "column \"" + col + "\"");
            }
        }
        for (String col : table.columns().keySet()) {
            boolean key = table.primaryKey().contains(col);
            JsonNode v = values.get(col);
            if (key && (v == null || v.isNull())) {
                throw new BadInputException(where + ": primary key column \"" + col + "\" of "
                        + table.qualifiedName() + " is missing or null");
            }
            if (key || op != Op.DELETE) {
                out.set(col, v == null ? DirectorySchema.MAPPER.nullNode() : v);
            }
        }
        return new RowChange(op, table, out);
    }

    private static void onlyFields(String where, JsonNode node, Set<String> allowed) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext();) {
            String f = it.next();
            if (!allowed.contains(f)) {
                throw new BadInputException(where + ": unknown field \"" + f + "\" (expected " + allowed + ")");
            }
        }
    }
}

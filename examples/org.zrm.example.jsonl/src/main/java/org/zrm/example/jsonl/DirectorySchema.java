package org.zrm.example.jsonl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tables of a change directory, read from {@code schema.json}, plus the three tables every
 * Zero replica must have.
 *
 * <pre>
 * {
 *   "id": "orders-2026-12-03",                      // names this directory; a new id means a new history
 *   "tables": [
 *     {"schema": "public", "name": "items",
 *      "columns": {"id": "int8", "title": "text", "tags": "json"},
 *      "primaryKey": ["id"]}
 *   ]
 * }
 * </pre>
 *
 * <p>Column types are Postgres type names ({@code int2/int4/int8}, {@code float8}, {@code numeric},
 * {@code bool}, {@code text}, {@code json}/{@code jsonb}, {@code timestamp}, …); ZRM maps them to
 * the replica's types as it does for Postgres. Every table needs a primary key (Zero requires a
 * unique index over non-null columns); its columns are created {@code NOT NULL}.
 *
 * <p><b>SPI obligation: the tables Zero requires.</b> The snapshot must hold
 * {@code {app}_{n}.clients}, {@code {app}_{n}.mutations} (with a json {@code mutation} column) and
 * {@code {app}.permissions}. This class adds them, so that {@code schema.json} lists only the
 * user's tables; change lines may write to them like to any other table (for example to publish
 * permissions into {@code zero.permissions}).
 *
 * <p>Immutable and thread-safe.
 */
public final class DirectorySchema {

    /** The one JSON mapper of this bundle; big integers stay exact, as in Zero's BigIntJSON. */
    static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    /**
     * One table.
     *
     * @param schema schema name
     * @param name table name
     * @param columns column name to Postgres type name, in column order
     * @param primaryKey the key columns
     */
    public record Table(String schema, String name, Map<String, String> columns, List<String> primaryKey) {

        /** @return {@code schema.name}, as change lines name the table */
        public String qualifiedName() {
            return schema + "." + name;
        }
    }

    private final String id;
    private final String fingerprint;
    private final Map<String, Table> tables;

    private DirectorySchema(String id, String fingerprint, Map<String, Table> tables) {
        this.id = id;
        this.fingerprint = fingerprint;
        this.tables = Collections.unmodifiableMap(tables);
    }

    /**
     * Reads {@code schema.json} of a directory.
     *
     * @param dir the change directory
     * @param appId the app id, naming the required tables
     * @param shardNum the shard number
     * @return the schema
     * @throws BadInputException if the file is missing or not a valid schema (the message says why)
     * @throws IOException if the file cannot be read
     */
    public static DirectorySchema read(ChangeDirectory dir, String appId, int shardNum) throws IOException {
        Path file = dir.path().resolve(ChangeDirectory.SCHEMA);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new BadInputException(file + ": missing; the directory must have a schema.json");
        }
        return parse(file.toString(), new String(bytes, StandardCharsets.UTF_8), appId, shardNum);
    }

    /**
     * Parses a schema text.
     *
     * @param where names the text in errors, e.g. the file
     * @param json the text
     * @param appId the app id
     * @param shardNum the shard number
     * @return the schema
     * @throws BadInputException if the text is not a valid schema
     */
    public static DirectorySchema parse(String where, String json, String appId, int shardNum) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new BadInputException(where + ": not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new BadInputException(where + ": must be a JSON object");
        }
        JsonNode id = root.get("id");
        if (id == null || !id.isTextual() || id.asText().isBlank()) {
            throw new BadInputException(where + ": \"id\" must be a non-empty string naming this directory");
        }
        Map<String, Table> tables = new LinkedHashMap<>();
        String shard = appId + "_" + shardNum;
        add(tables, where, new Table(shard, "clients", ordered("clientGroupID", "text", "clientID", "text",
                "lastMutationID", "int8", "userID", "text"), List.of("clientGroupID", "clientID")));
        add(tables, where, new Table(shard, "mutations", ordered("clientGroupID", "text", "clientID", "text",
                "mutationID", "int8", "mutation", "json"), List.of("clientGroupID", "clientID", "mutationID")));
        add(tables, where, new Table(appId, "permissions", ordered("lock", "bool", "permissions", "json",
                "hash", "text"), List.of("lock")));
        JsonNode list = root.get("tables");
        if (list == null || !list.isArray()) {
            throw new BadInputException(where + ": \"tables\" must be an array");
        }
        for (int i = 0; i < list.size(); i++) {
            add(tables, where, table(where + ": tables[" + i + "]", list.get(i)));
        }
        return new DirectorySchema(id.asText(), sha256(json), tables);
    }

    private static Table table(String where, JsonNode t) {
        if (!t.isObject()) {
            throw new BadInputException(where + ": must be an object");
        }
        String schema = text(where, t, "schema");
        String name = text(where, t, "name");
        JsonNode cols = t.get("columns");
        if (cols == null || !cols.isObject() || cols.isEmpty()) {
            throw new BadInputException(where + ": \"columns\" must be a non-empty object of column name to type");
        }
        Map<String, String> columns = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = cols.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> c = it.next();
            if (!c.getValue().isTextual() || c.getValue().asText().isBlank()) {
                throw new BadInputException(where + ": the type of column \"" + c.getKey() + "\" must be a type name");
            }
            columns.put(c.getKey(), c.getValue().asText());
        }
        JsonNode key = t.get("primaryKey");
        if (key == null || !key.isArray() || key.isEmpty()) {
            throw new BadInputException(where + ": \"primaryKey\" must be a non-empty array of column names");
        }
        List<String> primaryKey = new ArrayList<>();
        for (JsonNode k : key) {
            if (!k.isTextual() || !columns.containsKey(k.asText()) || primaryKey.contains(k.asText())) {
                throw new BadInputException(where + ": primary key column " + k + " is not a column of the table"
                        + " (or repeated)");
            }
            primaryKey.add(k.asText());
        }
        return new Table(schema, name, columns, List.copyOf(primaryKey));
    }

    private static void add(Map<String, Table> tables, String where, Table t) {
        if (tables.putIfAbsent(t.qualifiedName(), t) != null) {
            throw new BadInputException(where + ": table " + t.qualifiedName() + " is defined twice"
                    + " (the tables Zero requires are added by the source)");
        }
    }

    private static String text(String where, JsonNode t, String field) {
        JsonNode v = t.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank() || v.asText().contains(".")) {
            throw new BadInputException(where + ": \"" + field + "\" must be a non-empty name without dots");
        }
        return v.asText();
    }

    private static Map<String, String> ordered(String... nameType) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < nameType.length; i += 2) {
            m.put(nameType[i], nameType[i + 1]);
        }
        return m;
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    /** @return the directory's id from {@code schema.json} */
    public String id() {
        return id;
    }

    /**
     * @return a digest of the schema text: a replica synced from one schema cannot follow lines
     *     written for another, so a change means a new initial sync
     */
    public String fingerprint() {
        return fingerprint;
    }

    /** @return the tables by {@code schema.name}, the required ones first */
    public Map<String, Table> tables() {
        return tables;
    }

    /** @return the qualified names of the tables */
    public Set<String> tableNames() {
        return tables.keySet();
    }
}

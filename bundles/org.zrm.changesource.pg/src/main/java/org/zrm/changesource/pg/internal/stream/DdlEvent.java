package org.zrm.changesource.pg.internal.stream;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.protocol.JsonValues;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * One message of the shard's event triggers (spec §4.4–4.5, upstream {@code ddl.ts}):
 * {@code {type, version, previousSchema?, schema, event: {tag}, context: {query, …}}}.
 *
 * <p>The checks are those of upstream's schemas, which it applies in "passthrough" mode (extra
 * members are allowed and kept): {@code version} must be exactly {@link #PROTOCOL_VERSION}
 * (upstream's {@code v.literal(1)} for all three types, so a trigger of a newer, incompatible
 * format halts replication instead of being misread); {@code event} may be absent only on
 * {@code ddlStart} (read as tag {@code UNKNOWN}); {@code previousSchema} may be absent on every
 * type (events of triggers older than shard v21) but {@code null} only on {@code ddlStart};
 * {@code context} needs a string {@code query} and only string members. Tables must carry
 * {@code schemaOID} and {@code replicaIdentity}, which upstream's schema leaves optional (for
 * {@code initialSchema} rows of old replicas); the triggers always send both, and upstream's diff
 * fails without {@code schemaOID} anyway.
 *
 * <p>The JSON is read with {@code JSON.parse}'s rule for duplicate members, because the trigger's
 * index query repeats the columns of an index whose table is in several of the shard's
 * publications.
 *
 * <p>DECISION (unknown {@code type}): the spec (§4.5 step 2) and upstream's code ignore an unknown
 * type for forward compatibility, and so do we ({@link #known()} is false, nothing else is read).
 * Upstream's validation runs first and only knows the three types, so there the branch is never
 * reached and such a message halts replication; the triggers never emit one, so the difference
 * shows only for a message written by hand.
 *
 * @param type {@code ddlStart}, {@code ddlUpdate}, {@code schemaSnapshot} or an unknown type
 * @param previousSchemaPresent whether the event has a {@code previousSchema} member
 * @param previousSchema the schema before the change; {@code null} if absent or null
 * @param schema the current published schema; {@code null} for an unknown type
 * @param tag the command tag
 * @param context the trigger context ({@code query}, …); empty for an unknown type
 */
public record DdlEvent(String type, boolean previousSchemaPresent, PublishedSchema previousSchema,
        PublishedSchema schema, String tag, Map<String, Object> context) {

    public DdlEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(context, "context");
    }

    /** The only event format version the triggers of shard v23 emit and this code reads. */
    public static final int PROTOCOL_VERSION = 1;

    static final String DDL_START = "ddlStart";
    static final String DDL_UPDATE = "ddlUpdate";
    static final String SCHEMA_SNAPSHOT = "schemaSnapshot";
    private static final Set<String> TYPES = Set.of(DDL_START, DDL_UPDATE, SCHEMA_SNAPSHOT);
    private static final Set<String> TYPE_CLASSES = Set.of("b", "c", "d", "e", "p", "r", "m");
    private static final Set<String> IDENTITIES = Set.of("d", "n", "f", "i");

    /** Whether the type is one of the three this code processes. */
    public boolean known() {
        return TYPES.contains(type);
    }

    /** The trigger's {@code context.query}, or {@code null}. */
    public String query() {
        return (String) context.get("query");
    }

    /**
     * Parses and checks an event.
     *
     * @param json the message content
     * @throws MalformedDdlEventException if the content is not JSON or not a valid event
     */
    @SuppressWarnings("unchecked")
    public static DdlEvent parse(String json, ProtocolCodec codec) {
        Object value;
        try {
            // As upstream's JSON.parse: the index columns of a table in several of the shard's
            // publications repeat (the trigger's json_object_agg), which is not an error.
            value = codec.decodeValueLikeJsonParse(json);
        } catch (RuntimeException e) {
            throw new MalformedDdlEventException("DDL event is not valid JSON: " + e.getMessage(), e);
        }
        Map<String, Object> m = object(value, "the event");
        Object type = m.get("type");
        if (!(type instanceof String t)) {
            throw new MalformedDdlEventException("DDL event has no string \"type\"");
        }
        if (!TYPES.contains(t)) {
            return new DdlEvent(t, false, null, null, null, Map.of());
        }
        Object version = m.get("version");
        if (!(version instanceof Number n) || n.doubleValue() != PROTOCOL_VERSION) {
            throw new MalformedDdlEventException("DDL event " + t + " has unsupported version "
                    + (m.containsKey("version") ? codec.encodeValue(version) : "(none)") + " (expected "
                    + PROTOCOL_VERSION + ")");
        }
        Map<String, Object> context = object(m.get("context"), "context");
        if (!(context.get("query") instanceof String)) {
            throw new MalformedDdlEventException("DDL event context has no string \"query\"");
        }
        context.forEach((k, v) -> {
            if (!(v instanceof String)) {
                throw new MalformedDdlEventException("DDL event context member \"" + k + "\" is not a string");
            }
        });
        String tag;
        if (m.get("event") == null && !m.containsKey("event") && t.equals(DDL_START)) {
            tag = "UNKNOWN";
        } else {
            Object e = object(m.get("event"), "event").get("tag");
            if (!(e instanceof String s)) {
                throw new MalformedDdlEventException("DDL event has no string \"event.tag\"");
            }
            tag = s;
        }
        PublishedSchema schema = schema(m.get("schema"), "schema");
        boolean prevPresent = m.containsKey("previousSchema");
        PublishedSchema prev = null;
        if (prevPresent) {
            Object p = m.get("previousSchema");
            if (p == null) {
                if (!t.equals(DDL_START)) {
                    throw new MalformedDdlEventException("DDL event " + t + " has a null \"previousSchema\"");
                }
            } else {
                prev = schema(p, "previousSchema");
            }
        }
        return new DdlEvent(t, prevPresent, prev, schema, tag, JsonValues.freezeObject(context));
    }

    @SuppressWarnings("unchecked")
    private static PublishedSchema schema(Object value, String path) {
        Map<String, Object> s = object(value, path);
        for (Object t : list(s.get("tables"), path + ".tables")) {
            checkTable(object(t, path + ".tables[]"), path + ".tables[]");
        }
        for (Object i : list(s.get("indexes"), path + ".indexes")) {
            checkIndex(object(i, path + ".indexes[]"), path + ".indexes[]");
        }
        return PublishedSchema.parse(s);
    }

    private static void checkTable(Map<String, Object> t, String where) {
        number(t, "oid", where, false);
        number(t, "schemaOID", where, false);
        string(t, "schema", where);
        string(t, "name", where);
        String path = where + " " + t.get("schema") + "." + t.get("name");
        Object ident = t.get("replicaIdentity");
        if (!(ident instanceof String id) || !IDENTITIES.contains(id)) {
            throw new MalformedDdlEventException(path + ": \"replicaIdentity\" must be one of d, n, f, i");
        }
        Map<String, Object> columns = object(t.get("columns"), path + ".columns");
        columns.forEach((name, c) -> checkColumn(object(c, path + ".columns." + name), path + ".columns." + name));
        Object pk = t.get("primaryKey");
        if (pk == null && t.containsKey("primaryKey")) {
            throw new MalformedDdlEventException(path + ": \"primaryKey\" must be an array of strings");
        }
        if (pk != null) {
            for (Object k : list(pk, path + ".primaryKey")) {
                if (!(k instanceof String)) {
                    throw new MalformedDdlEventException(path + ".primaryKey: not a list of strings");
                }
            }
        }
        Map<String, Object> pubs = object(t.get("publications"), path + ".publications");
        pubs.forEach((name, p) -> {
            Map<String, Object> pub = object(p, path + ".publications." + name);
            if (!pub.containsKey("rowFilter") || (pub.get("rowFilter") != null && !(pub.get("rowFilter") instanceof String))) {
                throw new MalformedDdlEventException(path + ".publications." + name + ": \"rowFilter\" must be a string or null");
            }
        });
    }

    private static void checkColumn(Map<String, Object> c, String path) {
        number(c, "pos", path, false);
        string(c, "dataType", path);
        number(c, "typeOID", path, false);
        typeClass(c, "pgTypeClass", path, false);
        typeClass(c, "elemPgTypeClass", path, true);
        number(c, "characterMaximumLength", path, true);
        Object notNull = c.get("notNull");
        if (notNull != null && !(notNull instanceof Boolean)) {
            throw new MalformedDdlEventException(path + ": \"notNull\" must be a boolean or null");
        }
        Object dflt = c.get("dflt");
        if (dflt != null && !(dflt instanceof String)) {
            throw new MalformedDdlEventException(path + ": \"dflt\" must be a string or null");
        }
    }

    private static void checkIndex(Map<String, Object> i, String path) {
        string(i, "schema", path);
        string(i, "tableName", path);
        string(i, "name", path);
        path = path + " " + i.get("schema") + "." + i.get("name");
        if (!(i.get("unique") instanceof Boolean)) {
            throw new MalformedDdlEventException(path + ": \"unique\" must be a boolean");
        }
        for (String b : List.of("isReplicaIdentity", "isPrimaryKey", "isImmediate")) {
            if (i.get(b) != null && !(i.get(b) instanceof Boolean)) {
                throw new MalformedDdlEventException(path + ": \"" + b + "\" must be a boolean");
            }
        }
        String p = path;
        object(i.get("columns"), path + ".columns").forEach((col, dir) -> {
            if (!"ASC".equals(dir) && !"DESC".equals(dir)) {
                throw new MalformedDdlEventException(p + ".columns." + col + ": direction must be ASC or DESC");
            }
        });
    }

    private static void typeClass(Map<String, Object> m, String key, String path, boolean nullable) {
        Object v = m.get(key);
        if (v == null) {
            // absent is allowed for both; an explicit null only where the schema is nullable
            if (m.containsKey(key) && !nullable) {
                throw new MalformedDdlEventException(path + ": \"" + key + "\" must not be null");
            }
            return;
        }
        if (!(v instanceof String s) || !TYPE_CLASSES.contains(s)) {
            throw new MalformedDdlEventException(path + ": \"" + key + "\" is not a type class: " + v);
        }
    }

    private static void number(Map<String, Object> m, String key, String path, boolean optional) {
        Object v = m.get(key);
        if (v == null && optional) {
            return;
        }
        if (!(v instanceof Number)) {
            throw new MalformedDdlEventException(path + ": \"" + key + "\" must be a number");
        }
    }

    private static void string(Map<String, Object> m, String key, String path) {
        if (!(m.get(key) instanceof String)) {
            throw new MalformedDdlEventException(path + ": \"" + key + "\" must be a string");
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object v, String path) {
        if (!(v instanceof Map<?, ?> m)) {
            throw new MalformedDdlEventException("DDL event " + path + " is not an object: "
                    + JsonValues.typeName(v));
        }
        return (Map<String, Object>) m;
    }

    private static List<?> list(Object v, String path) {
        if (!(v instanceof List<?> l)) {
            throw new MalformedDdlEventException("DDL event " + path + " is not an array: " + JsonValues.typeName(v));
        }
        return l;
    }

}

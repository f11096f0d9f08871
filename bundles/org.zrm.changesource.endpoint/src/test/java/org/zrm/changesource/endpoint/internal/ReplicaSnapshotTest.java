package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.sync.StreamFedInitialSync;

/**
 * A replica built by the stream-fed initial sync from a source stream, snapshotted by
 * {@link ReplicaSnapshot}, and fed to a second stream-fed initial sync: both replicas hold the
 * same tables, column metadata, indexes and values (the {@code _0_version} of each row excepted).
 */
class ReplicaSnapshotTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    @TempDir
    Path dir;

    static String col(String name, int pos, String type, boolean notNull, String extra) {
        return "\"" + name + "\":{\"pos\":" + pos + ",\"dataType\":\"" + type + "\",\"notNull\":" + notNull + extra + "}";
    }

    static String table(String schema, String name, String key, String columns) {
        return "[\"data\",{\"tag\":\"create-table\",\"spec\":{\"schema\":\"" + schema + "\",\"name\":\"" + name
                + "\",\"columns\":{" + columns + "},\"primaryKey\":[" + key + "]}}]";
    }

    static String index(String schema, String table, String name, String columns) {
        return "[\"data\",{\"tag\":\"create-index\",\"spec\":{\"schema\":\"" + schema + "\",\"tableName\":\"" + table
                + "\",\"name\":\"" + name + "\",\"unique\":true,\"columns\":{" + columns + "}}}]";
    }

    static String insert(String schema, String name, String row) {
        String key = name.equals("permissions") ? "lock" : "id";
        return "[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"" + schema + "\",\"name\":\"" + name
                + "\",\"rowKey\":{\"columns\":[\"" + key + "\"]}},\"new\":{" + row + "}}]";
    }

    static List<String> source() {
        List<String> m = new ArrayList<>();
        m.add("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"0a\"}]");
        m.add(table("zero_0", "clients", "\"clientGroupID\",\"clientID\"", col("clientGroupID", 1, "text", true, "") + ","
                + col("clientID", 2, "text", true, "") + "," + col("lastMutationID", 3, "int8", true, "") + ","
                + col("userID", 4, "text", false, "")));
        m.add(index("zero_0", "clients", "clients_key", "\"clientGroupID\":\"ASC\",\"clientID\":\"ASC\""));
        m.add(table("zero_0", "mutations", "\"clientGroupID\",\"clientID\",\"mutationID\"", col("clientGroupID", 1,
                "text", true, "") + "," + col("clientID", 2, "text", true, "") + "," + col("mutationID", 3, "int8", true, "")
                + "," + col("mutation", 4, "json", false, "")));
        m.add(index("zero_0", "mutations", "mutations_key",
                "\"clientGroupID\":\"ASC\",\"clientID\":\"ASC\",\"mutationID\":\"ASC\""));
        m.add(table("zero", "permissions", "\"lock\"", col("lock", 1, "bool", true, "") + ","
                + col("permissions", 2, "json", false, "") + "," + col("hash", 3, "text", false, "")));
        m.add(index("zero", "permissions", "permissions_key", "\"lock\":\"ASC\""));
        m.add(insert("zero", "permissions", "\"lock\":true,\"permissions\":{\"tables\":{}},\"hash\":\"h\""));
        m.add(table("public", "matrix", "\"id\"", String.join(",",
                col("id", 1, "int8", true, ""),
                col("big", 2, "int8", false, ""),
                col("num", 3, "numeric", false, ""),
                col("flag", 4, "bool", false, ""),
                col("label", 5, "varchar", false, ",\"characterMaximumLength\":20"),
                col("doc", 6, "json", false, ""),
                col("docb", 7, "jsonb", false, ""),
                col("ts", 8, "timestamp", false, ""),
                col("tstz", 9, "timestamptz", false, ""),
                col("day", 10, "date", false, ""),
                col("ints", 11, "int4[]", false, ",\"elemPgTypeClass\":\"b\""),
                col("mood", 12, "mood", false, ",\"pgTypeClass\":\"e\""))));
        m.add(index("public", "matrix", "matrix_pkey", "\"id\":\"ASC\""));
        m.add(insert("public", "matrix", "\"id\":1,\"big\":9007199254740993,\"num\":12.5,\"flag\":true,\"label\":\"héllo\","
                + "\"doc\":{\"a\":[1,2.5,\"x\"],\"b\":null},\"docb\":[true,false],\"ts\":1700000000123.5,"
                + "\"tstz\":1700000000000,\"day\":1699920000000,\"ints\":[1,2,3],\"mood\":\"happy\""));
        m.add(insert("public", "matrix", "\"id\":2,\"big\":null,\"num\":null,\"flag\":false,\"label\":null,\"doc\":\"a string\","
                + "\"docb\":null,\"ts\":null,\"tstz\":null,\"day\":null,\"ints\":[],\"mood\":null"));
        m.add(insert("public", "matrix", "\"id\":-9223372036854775808,\"big\":-9007199254740993,\"num\":-0.001,"
                + "\"flag\":null,\"label\":\"\",\"doc\":123,\"docb\":{},\"ts\":0,\"tstz\":-1,\"day\":0,\"ints\":null,"
                + "\"mood\":\"sad\""));
        m.add("[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"0a\"}]");
        return m;
    }

    private Path build(String name, List<String> frames) throws Exception {
        Path file = dir.resolve(name);
        StreamFedInitialSync sync = new StreamFedInitialSync("test", file, "zero", 0, List.of(), Map.of());
        try (StreamFedInitialSync.Session s = sync.open()) {
            Optional<SubscriptionState> done = Optional.empty();
            for (String f : frames) {
                done = s.accept(CODEC.decodeChangeStreamMessage(f));
            }
            assertTrue(done.isPresent(), "sync did not complete");
        }
        return file;
    }

    private static List<String> dump(Path file) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + file, new Properties());
             Statement st = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT type, name, sql FROM sqlite_master WHERE substr(name, 1, 6) <> '_zero.'"
                    + " AND substr(name, 1, 7) <> 'sqlite_' ORDER BY name")) {
                while (rs.next()) {
                    out.add(rs.getString(1) + " " + rs.getString(2) + ": " + rs.getString(3));
                    if ("table".equals(rs.getString(1))) {
                        tables.add(rs.getString(2));
                    }
                }
            }
            try (ResultSet rs = st.executeQuery("SELECT table_name, column_name, upstream_type, is_not_null, is_enum, is_array,"
                    + " character_max_length FROM \"_zero.column_metadata\" ORDER BY 1, 2")) {
                while (rs.next()) {
                    StringBuilder b = new StringBuilder("meta");
                    for (int i = 1; i <= 7; i++) {
                        b.append(' ').append(rs.getString(i));
                    }
                    out.add(b.toString());
                }
            }
            for (String t : tables) {
                try (ResultSet rs = st.executeQuery("SELECT * FROM \"" + t + "\" ORDER BY rowid")) {
                    ResultSetMetaData md = rs.getMetaData();
                    while (rs.next()) {
                        StringBuilder b = new StringBuilder("row " + t);
                        for (int i = 1; i <= md.getColumnCount(); i++) {
                            if (md.getColumnName(i).equals("_0_version")) {
                                continue;
                            }
                            Object v = rs.getObject(i);
                            b.append(' ').append(md.getColumnName(i)).append('=')
                                    .append(v == null ? "null" : v.getClass().getSimpleName() + ":" + v);
                        }
                        out.add(b.toString());
                    }
                }
            }
        }
        return out;
    }

    @Test
    void aReplicaBuiltFromTheSnapshotEqualsTheOriginal() throws Exception {
        Path original = build("original.db", source());
        List<String> frames = new ArrayList<>();
        String w = new ReplicaSnapshot(original, "zero_0.mutations").stream((json, commit) -> frames.add(json));
        assertEquals("0a", w);
        assertTrue(frames.get(0).contains("\"json\":\"s\""), frames.get(0));
        Path copy = build("copy.db", frames);
        List<String> expected = dump(original);
        assertTrue(expected.stream().anyMatch(l -> l.contains("big=Long:9007199254740993")), expected.toString());
        assertEquals(expected, dump(copy));
    }
}

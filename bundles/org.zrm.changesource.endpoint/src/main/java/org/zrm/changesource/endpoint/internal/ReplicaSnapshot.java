package org.zrm.changesource.endpoint.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.Commit;
import org.zrm.protocol.CreateIndex;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.IndexDirection;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.Insert;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.Relation;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.TableSpec;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteNames;
import org.zrm.replica.ReplicaState;
import org.zrm.replica.ReplicaStateReader;

/**
 * The initial snapshot read from the replica file the replicator keeps, in one read transaction,
 * so that it is consistent at the replica's state version W, which is the snapshot's begin and
 * commit watermark. Tables come from {@code _zero.column_metadata} (upstream types, nullability,
 * enum and array flags, length) and the replica's indexes; rows are sent as stored, under
 * {@code json:"s"}: JSON and array columns hold JSON text, which a client stores unchanged, and
 * every other stored value (0/1 for booleans, numbers for timestamps) is what a client would store
 * for it again. The replica's {@code _0_version} column is not sent (the client sets it to W).
 */
final class ReplicaSnapshot implements InitialSnapshot {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    private final Path replicaFile;
    private final String mutationsTable;

    /**
     * @param mutationsTable the shard's {@code {app}_{n}.mutations} table (see {@link #table})
     */
    ReplicaSnapshot(Path replicaFile, String mutationsTable) {
        this.replicaFile = replicaFile;
        this.mutationsTable = mutationsTable;
    }

    @Override
    public String stream(Sink sink) throws Exception {
        if (!Files.isRegularFile(replicaFile)) {
            throw new IllegalStateException("no replica at " + replicaFile + " yet");
        }
        Properties props = new Properties();
        props.setProperty("open_mode", "1"); // SQLITE_OPEN_READONLY
        try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + replicaFile.toAbsolutePath(), props)) {
            if (c == null) {
                throw new SQLException("sqlite-jdbc did not accept " + replicaFile);
            }
            try (Statement st = c.createStatement()) {
                st.execute("PRAGMA busy_timeout = 10000");
                st.execute("BEGIN");
                // A read transaction starts at the first read; this one pins the snapshot.
                ReplicaState state = ReplicaStateReader.read(c).orElseThrow(
                        () -> new IllegalStateException("the replica at " + replicaFile + " is not complete yet"));
                String w = state.stateVersion();
                if (!sink.frame(CODEC.encode(new BeginMessage(new Begin(JsonFormat.STRINGIFIED, null, Passthrough.NONE), w)),
                        null)) {
                    return null;
                }
                for (String table : tables(c)) {
                    if (!table(c, table, table.equals(mutationsTable), sink)) {
                        return null;
                    }
                }
                if (!sink.frame(CODEC.encode(new CommitMessage(new Commit(Passthrough.NONE), w, Passthrough.NONE)), w)) {
                    return null;
                }
                st.execute("COMMIT");
                return w;
            }
        }
    }

    private static List<String> tables(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT DISTINCT table_name FROM \"_zero.column_metadata\" ORDER BY table_name")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private record Index(String name, boolean unique, Map<String, IndexDirection> columns) {}

    /**
     * Streams one table. For the shard's mutations table ({@code addMutationColumn}): a custom
     * client's initial sync requires a {@code mutation} json column there (Appendix A, QUIRK),
     * while the Postgres shard table a pg source replicates has {@code result} instead. Without it
     * every client refuses the snapshot ("table is missing the "mutation" column"), so the
     * snapshot adds it as a nullable json column, null in every row; the live stream never
     * mentions it, so it stays null.
     */
    private static boolean table(Connection c, String table, boolean addMutationColumn, Sink sink) throws Exception {
        int dot = table.indexOf('.');
        String schema = dot < 0 ? "public" : table.substring(0, dot);
        String name = dot < 0 ? table : table.substring(dot + 1);
        Map<String, ColumnSpec> columns = new LinkedHashMap<>();
        Map<String, Integer> positions = new LinkedHashMap<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT cid, name FROM pragma_table_info(" + literal(table) + ")")) {
            while (rs.next()) {
                positions.put(rs.getString(2), rs.getInt(1) + 1);
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT column_name, upstream_type, is_not_null, is_enum, is_array,"
                + " character_max_length FROM \"_zero.column_metadata\" WHERE table_name = ?")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                List<Object[]> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(new Object[] {rs.getString(1), rs.getString(2), rs.getInt(3) != 0, rs.getInt(4) != 0,
                            rs.getInt(5) != 0, rs.getObject(6)});
                }
                rows.sort((a, b) -> Integer.compare(positions.getOrDefault((String) a[0], 0),
                        positions.getOrDefault((String) b[0], 0)));
                for (Object[] r : rows) {
                    boolean isEnum = (Boolean) r[3];
                    boolean isArray = (Boolean) r[4];
                    Long len = r[5] == null ? null : ((Number) r[5]).longValue();
                    columns.put((String) r[0], new ColumnSpec(positions.getOrDefault((String) r[0], 0),
                            (String) r[1], isEnum && !isArray ? PgTypeClass.ENUM : PgTypeClass.BASE,
                            isArray ? Maybe.of(isEnum ? PgTypeClass.ENUM : PgTypeClass.BASE) : Maybe.absent(),
                            len == null ? Maybe.absent() : Maybe.of(len), Maybe.of((Boolean) r[2]), Maybe.absent(),
                            Passthrough.NONE));
                }
            }
        }
        if (addMutationColumn && !columns.containsKey("mutation")) {
            columns.put("mutation", new ColumnSpec(columns.size() + 1, "json", PgTypeClass.BASE, Maybe.absent(),
                    Maybe.absent(), Maybe.of(false), Maybe.absent(), Passthrough.NONE));
        }
        List<Index> indexes = indexes(c, table);
        List<String> key = indexes.stream().filter(Index::unique).findFirst()
                .map(i -> List.copyOf(i.columns().keySet())).orElse(null);
        if (!sink.frame(CODEC.encode(new DataMessage(new CreateTable(new TableSpec(schema, name, columns, key,
                Passthrough.NONE), null, null, Passthrough.NONE))), null)) {
            return false;
        }
        for (Index i : indexes) {
            int idot = i.name().indexOf('.');
            String indexName = dot < 0 || idot < 0 ? i.name() : i.name().substring(idot + 1);
            if (!sink.frame(CODEC.encode(new DataMessage(new CreateIndex(new IndexSpec(schema, name, indexName, i.unique(),
                    i.columns(), Passthrough.NONE), Passthrough.NONE))), null)) {
                return false;
            }
        }
        Relation relation = new Relation(schema, name, new RowKey(key == null ? List.of() : key));
        StringBuilder select = new StringBuilder("SELECT ");
        List<String> names = new ArrayList<>(positions.keySet());
        names.retainAll(columns.keySet()); // stored columns only: not _0_version, not an added mutation column
        for (int i = 0; i < names.size(); i++) {
            select.append(i == 0 ? "" : ", ").append(LiteNames.quote(names.get(i)));
        }
        select.append(" FROM ").append(LiteNames.quote(table));
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(select.toString())) {
            while (rs.next()) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 0; i < names.size(); i++) {
                    row.put(names.get(i), rs.getObject(i + 1));
                }
                if (!sink.frame(CODEC.encode(new DataMessage(new Insert(relation, row, Passthrough.NONE))), null)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static List<Index> indexes(Connection c, String table) throws SQLException {
        List<Index> out = new ArrayList<>();
        List<String[]> list = new ArrayList<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT name, \"unique\", origin FROM pragma_index_list(" + literal(table) + ")")) {
            while (rs.next()) {
                list.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
            }
        }
        for (String[] l : list) {
            if (!"c".equals(l[2])) {
                continue; // only indexes made by CREATE INDEX are Zero's
            }
            Map<String, IndexDirection> cols = new LinkedHashMap<>();
            try (Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT name, \"desc\" FROM pragma_index_xinfo(" + literal(l[0])
                         + ") WHERE key = 1 ORDER BY seqno")) {
                while (rs.next()) {
                    cols.put(rs.getString(1), rs.getInt(2) != 0 ? IndexDirection.DESC : IndexDirection.ASC);
                }
            }
            out.add(new Index(l[0], "1".equals(l[1]), cols));
        }
        out.sort((a, b) -> a.name().compareTo(b.name()));
        return out;
    }

    private static String literal(String s) {
        return "'" + s.replace("'", "''") + "'";
    }
}

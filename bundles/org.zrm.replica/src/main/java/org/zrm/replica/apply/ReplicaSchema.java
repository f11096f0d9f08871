package org.zrm.replica.apply;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.zrm.replica.LiteTypes;

/**
 * Reads the replicated tables and indexes from the replica (upstream {@code listTables},
 * {@code listIndexes} and the key choice of {@code computeZqlSpecs}). Internal tables
 * ({@code sqlite_*}, {@code _zero.*}, {@code _litestream_*}) are skipped.
 */
final class ReplicaSchema {

    // GLOB, not LIKE: in LIKE patterns '_' is a wildcard, so '_zero.%' would also hide e.g. "azero.x".
    private static final String APP_OBJECT = "NOT GLOB 'sqlite_*' AND %1$s NOT GLOB '_zero.*' AND %1$s NOT GLOB '_litestream_*'";

    private ReplicaSchema() {}

    /** All app tables by lite name. */
    static Map<String, LiteTableSpec> listTables(Connection db) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table' AND name "
                        + APP_OBJECT.formatted("name") + " ORDER BY name")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        Map<String, List<List<String>>> uniqueKeys = new TreeMap<>();
        for (LiteIndexSpec idx : listIndexes(db)) {
            if (idx.unique()) {
                uniqueKeys.computeIfAbsent(idx.tableName(), t -> new ArrayList<>()).add(List.copyOf(idx.columns().keySet()));
            }
        }
        Map<String, LiteTableSpec> tables = new LinkedHashMap<>();
        try (PreparedStatement info = db.prepareStatement("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid");
                PreparedStatement backfill = db.prepareStatement("SELECT column_name FROM \"_zero.column_metadata\" "
                        + "WHERE table_name = ? AND backfill IS NOT NULL")) {
            for (String name : names) {
                Map<String, String> columns = new LinkedHashMap<>();
                TreeMap<Integer, String> declaredPk = new TreeMap<>();
                info.setString(1, name);
                try (ResultSet rs = info.executeQuery()) {
                    while (rs.next()) {
                        columns.put(rs.getString(1), rs.getString(2));
                        if (rs.getInt(3) > 0) {
                            declaredPk.put(rs.getInt(3), rs.getString(1));
                        }
                    }
                }
                Set<String> backfilling = new HashSet<>();
                backfill.setString(1, name);
                try (ResultSet rs = backfill.executeQuery()) {
                    while (rs.next()) {
                        backfilling.add(rs.getString(1));
                    }
                }
                List<String> pk = declaredPk.isEmpty()
                        ? chooseKey(columns, uniqueKeys.getOrDefault(name, List.of()))
                        : List.copyOf(declaredPk.values());
                tables.put(name, new LiteTableSpec(name, Collections.unmodifiableMap(columns), pk,
                        Set.copyOf(backfilling)));
            }
        }
        return tables;
    }

    /** The shortest unique key over NOT NULL, syncable columns; ties broken by column names. */
    private static List<String> chooseKey(Map<String, String> columns, List<List<String>> uniqueKeys) {
        List<List<String>> candidates = new ArrayList<>();
        for (List<String> key : uniqueKeys) {
            boolean ok = true;
            for (String col : key) {
                String type = columns.get(col);
                if (type == null || LiteTypes.zqlType(type).isEmpty() || !LiteTypes.isNotNull(type)) {
                    ok = false;
                    break;
                }
            }
            if (ok) {
                candidates.add(key);
            }
        }
        candidates.sort(Comparator.<List<String>>comparingInt(List::size).thenComparing(String::valueOf));
        return candidates.isEmpty() ? List.of() : candidates.get(0);
    }

    /** All indexes on app tables, with their key columns in order. */
    static List<LiteIndexSpec> listIndexes(Connection db) throws SQLException {
        Map<String, String> tableOf = new LinkedHashMap<>();
        Map<String, Boolean> uniqueOf = new LinkedHashMap<>();
        Map<String, Map<String, String>> columnsOf = new LinkedHashMap<>();
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery("SELECT idx.name, idx.tbl_name, info.\"unique\", col.name, col.\"desc\" "
                        + "FROM sqlite_master AS idx JOIN pragma_index_list(idx.tbl_name) AS info ON info.name = idx.name "
                        + "JOIN pragma_index_xinfo(idx.name) AS col WHERE idx.type = 'index' AND col.key = 1 "
                        + "AND col.cid >= 0 AND idx.tbl_name " + APP_OBJECT.formatted("idx.tbl_name")
                        + " ORDER BY idx.name, col.seqno")) {
            while (rs.next()) {
                String name = rs.getString(1);
                tableOf.put(name, rs.getString(2));
                uniqueOf.put(name, rs.getInt(3) != 0);
                columnsOf.computeIfAbsent(name, n -> new LinkedHashMap<>()).put(rs.getString(4),
                        rs.getInt(5) == 0 ? "ASC" : "DESC");
            }
        }
        List<LiteIndexSpec> out = new ArrayList<>();
        for (Map.Entry<String, String> e : tableOf.entrySet()) {
            out.add(new LiteIndexSpec(e.getKey(), e.getValue(), uniqueOf.get(e.getKey()), columnsOf.get(e.getKey())));
        }
        return out;
    }
}

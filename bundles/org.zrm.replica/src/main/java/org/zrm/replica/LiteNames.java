package org.zrm.replica;

import java.util.Map;

/**
 * Names and statement texts of the replica's data tables: Zero's table naming, SQLite identifier
 * quoting, the row version column and the index DDL. Statement texts matter because SQLite keeps
 * them verbatim in {@code sqlite_master}, where a replica written by ZRM must look like one
 * written by zero-cache.
 */
public final class LiteNames {

    /** The column every replicated table gets: the version at which its row last changed. */
    public static final String ZERO_VERSION_COLUMN = "_0_version";

    private LiteNames() {}

    /**
     * The replica table (or index) name of an upstream one (upstream {@code liteTableName}):
     * {@code name} for schema {@code public}, {@code schema.name} otherwise.
     *
     * @param schema the upstream schema
     * @param name the upstream table or index name
     * @return the name in the replica
     */
    public static String tableName(String schema, String name) {
        return "public".equals(schema) ? name : schema + "." + name;
    }

    /**
     * Quotes an identifier for SQLite: wrapped in {@code "}, with {@code "} doubled.
     *
     * @param name the identifier
     * @return the quoted identifier
     */
    public static String quote(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    /**
     * {@code CREATE [UNIQUE] INDEX} for a replica index, formatted exactly as upstream's
     * {@code createLiteIndexStatement} (including the double space of a non-unique index).
     *
     * @param name the index name in the replica
     * @param table the table name in the replica
     * @param unique whether the index is unique
     * @param columns column name to direction ({@code ASC}/{@code DESC}), in index order
     * @return the statement, ending in {@code ;}
     */
    public static String createIndexStatement(String name, String table, boolean unique, Map<String, String> columns) {
        StringBuilder cols = new StringBuilder();
        for (Map.Entry<String, String> e : columns.entrySet()) {
            if (cols.length() > 0) {
                cols.append(',');
            }
            cols.append(quote(e.getKey())).append(' ').append(e.getValue());
        }
        return "CREATE " + (unique ? "UNIQUE" : "") + " INDEX " + quote(name) + " ON " + quote(table) + " (" + cols
                + ");";
    }
}

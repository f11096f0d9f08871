package org.zrm.replicator.internal;

import java.util.Map;

/**
 * An index of the replica.
 *
 * @param name lite index name
 * @param tableName lite table name
 * @param unique whether it is unique
 * @param columns column to {@code ASC}/{@code DESC}, in index order
 */
record LiteIndexSpec(String name, String tableName, boolean unique, Map<String, String> columns) {

    /** {@code CREATE [UNIQUE] INDEX}, formatted exactly as upstream's {@code createLiteIndexStatement}. */
    String createStatement() {
        StringBuilder cols = new StringBuilder();
        for (Map.Entry<String, String> e : columns.entrySet()) {
            if (cols.length() > 0) {
                cols.append(',');
            }
            cols.append(Lite.id(e.getKey())).append(' ').append(e.getValue());
        }
        return "CREATE " + (unique ? "UNIQUE" : "") + " INDEX " + Lite.id(name) + " ON " + Lite.id(tableName)
                + " (" + cols + ");";
    }
}

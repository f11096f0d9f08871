package org.zrm.replica.apply;

import java.util.Map;
import org.zrm.replica.LiteNames;

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
        return LiteNames.createIndexStatement(name, tableName, unique, columns);
    }
}

package org.zrm.changesource.pg.internal.setup;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ALTER TABLE … REPLICA IDENTITY USING INDEX …} for a published table that has no primary
 * key and identity DEFAULT but an index that can serve (upstream
 * {@code replicaIdentitiesForTablesWithoutPrimaryKeys}): without it Postgres rejects the table's
 * updates and deletes once it is published. Used at shard setup and after each DDL event.
 *
 * @param schema the table's schema
 * @param table the table
 * @param index the index to use
 */
public record ReplicaIdentityFix(String schema, String table, String index) {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaIdentityFix.class);

    /**
     * For each table without primary key and with identity DEFAULT, the first index (in schema
     * order) that is unique, immediate (not deferrable) and over NOT NULL columns only; partial
     * indexes are not in the published schema at all.
     */
    public static List<ReplicaIdentityFix> forTablesWithoutPrimaryKeys(PublishedSchema schema) {
        List<ReplicaIdentityFix> out = new ArrayList<>();
        for (PublishedTable t : schema.tables()) {
            if (!t.primaryKey().isEmpty() || t.replicaIdentity() != 'd') {
                continue;
            }
            for (PublishedIndex idx : schema.indexes()) {
                if (!idx.schema().equals(t.schema()) || !idx.tableName().equals(t.name()) || !idx.unique()
                        || !idx.isImmediate()) {
                    continue;
                }
                boolean allNotNull = idx.columns().keySet().stream()
                        .allMatch(c -> t.columns().get(c) != null && t.columns().get(c).notNull());
                if (allNotNull) {
                    out.add(new ReplicaIdentityFix(t.schema(), t.name(), idx.name()));
                    break;
                }
            }
        }
        return List.copyOf(out);
    }

    /** The ALTER TABLE statement. */
    public String sql() {
        return "ALTER TABLE " + ShardSql.quoteId(schema) + "." + ShardSql.quoteId(table) + " REPLICA IDENTITY USING INDEX "
                + ShardSql.quoteId(index);
    }

    /** Runs the statement on {@code c}. */
    public void apply(Connection c) throws SQLException {
        LOG.info("setting \"{}\" as the REPLICA IDENTITY for \"{}\"", index, table);
        try (Statement s = c.createStatement()) {
            s.execute(sql());
        }
    }
}

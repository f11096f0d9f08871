package org.zrm.changesource.pg.internal.setup;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.SortedMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upstream schema-migration framework (upstream {@code db/migration.ts}): one transaction
 * holding {@code pg_advisory_xact_lock(hashtext('migrate-schema:{schema}'))} and a
 * {@code "{schema}"."versionHistory"} row with data, schema and min-safe versions.
 */
final class PgMigrations {

    private static final Logger LOG = LoggerFactory.getLogger(PgMigrations.class);

    /** One migration step; run inside the migration transaction. */
    interface Migration {
        void migrateSchema(Connection tx) throws SQLException;

        /** The rollback limit this step establishes, or 0 to leave it. */
        default int minSafeVersion() {
            return 0;
        }
    }

    record Versions(int dataVersion, int schemaVersion, int minSafeVersion) {}

    private PgMigrations() {}

    /**
     * Migrates {@code schemaName} to the highest version of {@code incremental}.
     *
     * @param conn a connection in auto-commit mode; used for one transaction
     */
    static void run(Connection conn, String debugName, String schemaName, Migration setup,
            SortedMap<Integer, Migration> incremental) throws SQLException {
        int codeVersion = incremental.lastKey();
        boolean autoCommit = conn.getAutoCommit();
        conn.setAutoCommit(false);
        try {
            try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
                ps.setString(1, "migrate-schema:" + schemaName);
                ps.execute();
            }
            Versions versions = ensureVersionHistory(conn, schemaName);
            if (codeVersion < versions.minSafeVersion()) {
                throw new SQLException("Cannot run " + debugName + " at schema v" + codeVersion
                        + " because rollback limit is v" + versions.minSafeVersion());
            }
            if (versions.dataVersion() > codeVersion) {
                LOG.info("schema {}: data is at v{}, resetting to v{}", schemaName, versions.dataVersion(), codeVersion);
                update(conn, schemaName, versions, codeVersion, 0);
            } else if (versions.dataVersion() < codeVersion) {
                Iterable<Map.Entry<Integer, Migration>> steps = versions.dataVersion() == 0
                        ? Map.of(codeVersion, setup).entrySet()
                        : incremental.entrySet();
                for (Map.Entry<Integer, Migration> step : steps) {
                    int dest = step.getKey();
                    if (versions.dataVersion() < dest) {
                        LOG.info("schema {}: migrating from v{} to v{}", schemaName, versions.dataVersion(), dest);
                        if (versions.schemaVersion() < dest) {
                            step.getValue().migrateSchema(conn);
                        }
                        versions = update(conn, schemaName, versions, dest, step.getValue().minSafeVersion());
                    }
                }
            }
            conn.commit();
        } catch (SQLException | RuntimeException e) {
            rollbackQuietly(conn, e);
            throw e;
        } finally {
            conn.setAutoCommit(autoCommit);
        }
    }

    static void rollbackQuietly(Connection conn, Exception cause) {
        try {
            conn.rollback();
        } catch (SQLException re) {
            cause.addSuppressed(re);
        }
    }

    /** The shard's version history, or {@code null} if it has none. */
    static Versions read(Connection conn, String schemaName) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT 1 FROM pg_class JOIN pg_namespace ON relnamespace = "
                + "pg_namespace.oid WHERE nspname = ? AND relname = 'versionHistory'")) {
            ps.setString(1, schemaName);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
            }
        }
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT \"dataVersion\", \"schemaVersion\", \"minSafeVersion\" FROM "
                        + ShardSql.quoteId(schemaName) + ".\"versionHistory\"")) {
            return rs.next() ? new Versions(rs.getInt(1), rs.getInt(2), rs.getInt(3)) : null;
        }
    }

    private static Versions ensureVersionHistory(Connection conn, String schemaName) throws SQLException {
        Versions v = read(conn, schemaName);
        if (v != null) {
            return v;
        }
        String s = ShardSql.quoteId(schemaName);
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE SCHEMA IF NOT EXISTS " + s + ";\n"
                    + "    CREATE TABLE IF NOT EXISTS " + s + ".\"versionHistory\" (\n"
                    + "      \"dataVersion\" int NOT NULL,\n"
                    + "      \"schemaVersion\" int NOT NULL,\n"
                    + "      \"minSafeVersion\" int NOT NULL,\n\n"
                    + "      lock char(1) NOT NULL CONSTRAINT DF_schema_meta_lock DEFAULT 'v',\n"
                    + "      CONSTRAINT PK_schema_meta_lock PRIMARY KEY (lock),\n"
                    + "      CONSTRAINT CK_schema_meta_lock CHECK (lock='v')\n"
                    + "    );");
        }
        return new Versions(0, 0, 0);
    }

    private static Versions update(Connection conn, String schemaName, Versions prev, int newVersion,
            int proposedMinSafe) throws SQLException {
        int minSafe = proposedMinSafe > prev.minSafeVersion() ? proposedMinSafe : prev.minSafeVersion();
        Versions v = new Versions(newVersion, Math.max(newVersion, prev.schemaVersion()), minSafe);
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + ShardSql.quoteId(schemaName)
                + ".\"versionHistory\" (\"dataVersion\", \"schemaVersion\", \"minSafeVersion\") VALUES (?, ?, ?) "
                + "ON CONFLICT (lock) DO UPDATE SET \"dataVersion\" = excluded.\"dataVersion\", "
                + "\"schemaVersion\" = excluded.\"schemaVersion\", \"minSafeVersion\" = excluded.\"minSafeVersion\"")) {
            ps.setInt(1, v.dataVersion());
            ps.setInt(2, v.schemaVersion());
            ps.setInt(3, v.minSafeVersion());
            ps.execute();
        }
        return v;
    }
}

package org.zrm.storer.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLogException;

/**
 * Creates or upgrades the {@code "<app>_<shard>/cdc"} schema to version {@value #CODE_VERSION},
 * exactly as zero-cache's {@code initChangeStreamerSchema} does, so that either implementation
 * accepts a change database the other has written.
 *
 * <p>All steps run in one transaction that first takes
 * {@code pg_advisory_xact_lock(hashtext('migrate-schema:<schema>'))}, the lock zero-cache takes,
 * so concurrent starts (of ZRM or zero-cache) serialise. Versions are kept in
 * {@code "versionHistory"} ({@code dataVersion}, {@code schemaVersion}, {@code minSafeVersion}):
 * a blank database runs only the setup (all current tables, rollback limit 1); older ones run the
 * incremental steps 2…6; a database written by a newer code version is accepted (its
 * {@code dataVersion} is reset to 6, the schema version never moves back) unless its rollback
 * limit is above 6, which fails with zero-cache's message.
 */
public final class SchemaMigrator {

    /** The schema version this code writes. */
    public static final int CODE_VERSION = 6;

    private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrator.class);

    private final CdcSchema schema;
    private final String appId;

    public SchemaMigrator(CdcSchema schema, String appId) {
        this.schema = schema;
        this.appId = appId;
    }

    private record Versions(int dataVersion, int schemaVersion, int minSafeVersion) {
    }

    /**
     * Migrates the schema on {@code c} (auto-commit mode; left in auto-commit mode).
     *
     * @throws ChangeLogException if the schema is too new for this code or a statement failed
     */
    public void migrate(Connection c) throws ChangeLogException {
        try {
            migrateFromLegacySchemas(c);
            c.setAutoCommit(false);
            try {
                runInTransaction(c);
                c.commit();
            } catch (SQLException | ChangeLogException | RuntimeException e) {
                rollbackQuietly(c);
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new ChangeLogException("migrating change-db schema " + schema + " failed: " + e.getMessage(), e);
        }
    }

    private void runInTransaction(Connection c) throws SQLException, ChangeLogException {
        try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
            lock.setString(1, "migrate-schema:" + schema.name());
            lock.execute();
        }
        Versions v = ensureVersionHistory(c);
        if (CODE_VERSION < v.minSafeVersion()) {
            throw new ChangeLogException("Cannot run change-streamer at schema v" + CODE_VERSION
                    + " because rollback limit is v" + v.minSafeVersion());
        }
        if (v.dataVersion() > CODE_VERSION) {
            LOG.info("change-db schema {}: data is at v{}, resetting to v{}", schema, v.dataVersion(), CODE_VERSION);
            update(c, v, CODE_VERSION, null);
            return;
        }
        if (v.dataVersion() == CODE_VERSION) {
            LOG.info("change-db schema {} is at v{}", schema, CODE_VERSION);
            return;
        }
        if (v.dataVersion() == 0) {
            LOG.info("change-db schema {}: setting up v{}", schema, CODE_VERSION);
            if (v.schemaVersion() < CODE_VERSION) {
                execute(c, setupSql());
                compressChangesWithLz4(c);
            }
            update(c, v, CODE_VERSION, 1);
            return;
        }
        for (int dest = 2; dest <= CODE_VERSION; dest++) {
            if (v.dataVersion() < dest) {
                LOG.info("change-db schema {}: migrating from v{} to v{}", schema, v.dataVersion(), dest);
                if (v.schemaVersion() < dest) {
                    migrateSchema(c, dest);
                }
                if (dest == 3) {
                    migrateDataV3(c);
                }
                v = update(c, v, dest, null);
            }
        }
    }

    private void migrateSchema(Connection c, int dest) throws SQLException {
        switch (dest) {
            case 2 -> execute(c, "ALTER TABLE " + schema.table("replicationConfig") + " ADD \"resetRequired\" BOOL");
            // BUG (upstream, not in the spec): zero-cache creates the table here with today's DDL,
            // which already has "ownerAddress", so its v5 step fails on any database older than v3.
            // Create it as it was at v3; v5 adds the column, and the result equals the setup's.
            case 3 -> execute(c, "CREATE TABLE " + schema.table("replicationState") + " ("
                    + "\"lastWatermark\" TEXT NOT NULL, \"owner\" TEXT, "
                    + "\"lock\" INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1))");
            case 4 -> execute(c, "ALTER TABLE " + schema.table("changeLog") + " ALTER \"change\" TYPE JSON");
            case 5 -> execute(c, "ALTER TABLE " + schema.table("replicationState") + " ADD \"ownerAddress\" TEXT");
            case 6 -> execute(c, backfillDdl());
            default -> throw new IllegalStateException("no migration to v" + dest);
        }
    }

    /** v3 data step (idempotent): {@code lastWatermark} = newest log watermark, else the replica version. */
    private void migrateDataV3(Connection c) throws SQLException {
        String last = lastWatermarkV2(c);
        execute(c, "TRUNCATE TABLE " + schema.table("replicationState"));
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + schema.table("replicationState") + " (\"lastWatermark\") VALUES (?)")) {
            ps.setString(1, last);
            ps.executeUpdate();
        }
    }

    /** Zero's {@code getLastWatermarkV2}. */
    String lastWatermarkV2(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT MAX(watermark) FROM " + schema.table("changeLog"))) {
            rs.next();
            String max = rs.getString(1);
            if (max != null) {
                return max;
            }
        }
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT \"replicaVersion\" FROM " + schema.table("replicationConfig"))) {
            if (!rs.next()) {
                throw new SQLException("replicationConfig of " + schema + " has no row");
            }
            return rs.getString(1);
        }
    }

    private Versions ensureVersionHistory(Connection c) throws SQLException {
        boolean exists;
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_class JOIN pg_namespace"
                + " ON relnamespace = pg_namespace.oid WHERE nspname = ? AND relname = 'versionHistory'")) {
            ps.setString(1, schema.name());
            try (ResultSet rs = ps.executeQuery()) {
                exists = rs.next();
            }
        }
        if (!exists) {
            execute(c, "CREATE SCHEMA IF NOT EXISTS " + schema.quoted());
            execute(c, "CREATE TABLE IF NOT EXISTS " + schema.table("versionHistory") + " ("
                    + "\"dataVersion\" int NOT NULL, \"schemaVersion\" int NOT NULL, \"minSafeVersion\" int NOT NULL, "
                    + "lock char(1) NOT NULL CONSTRAINT DF_schema_meta_lock DEFAULT 'v', "
                    + "CONSTRAINT PK_schema_meta_lock PRIMARY KEY (lock), "
                    + "CONSTRAINT CK_schema_meta_lock CHECK (lock='v'))");
        }
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT \"dataVersion\", \"schemaVersion\", \"minSafeVersion\" FROM " + schema.table("versionHistory"))) {
            return rs.next() ? new Versions(rs.getInt(1), rs.getInt(2), rs.getInt(3)) : new Versions(0, 0, 0);
        }
    }

    private Versions update(Connection c, Versions prev, int newVersion, Integer minSafe) throws SQLException {
        int minSafeVersion = minSafe == null ? prev.minSafeVersion() : Math.max(prev.minSafeVersion(), minSafe);
        Versions next = new Versions(newVersion, Math.max(newVersion, prev.schemaVersion()), minSafeVersion);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema.table("versionHistory")
                + " (\"dataVersion\", \"schemaVersion\", \"minSafeVersion\") VALUES (?, ?, ?)"
                + " ON CONFLICT (lock) DO UPDATE SET \"dataVersion\" = EXCLUDED.\"dataVersion\","
                + " \"schemaVersion\" = EXCLUDED.\"schemaVersion\", \"minSafeVersion\" = EXCLUDED.\"minSafeVersion\"")) {
            ps.setInt(1, next.dataVersion());
            ps.setInt(2, next.schemaVersion());
            ps.setInt(3, next.minSafeVersion());
            ps.executeUpdate();
        }
        return next;
    }

    /** Renames a pre-shard schema ({@code cdc_0} / {@code cdc_<app>}, then {@code cdc}) like zero-cache. */
    private void migrateFromLegacySchemas(Connection c) throws SQLException {
        List<String> legacy = List.of("zero".equals(appId) ? "cdc_0" : "cdc_" + appId, "cdc");
        java.util.Set<String> present = new java.util.HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT nspname FROM pg_namespace WHERE nspname = ANY(?)")) {
            ps.setArray(1, c.createArrayOf("text", new String[] {schema.name(), legacy.get(0), legacy.get(1)}));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    present.add(rs.getString(1));
                }
            }
        }
        if (present.contains(schema.name())) {
            return;
        }
        for (String old : legacy) {
            if (present.contains(old)) {
                LOG.info("migrating legacy change-db schema {} to {}", old, schema);
                execute(c, "ALTER SCHEMA " + CdcSchema.quoteIdent(old) + " RENAME TO " + schema.quoted());
                return;
            }
        }
    }

    /**
     * Stores new {@code change} values with lz4 rather than Postgres's default pglz. A change
     * larger than the TOAST threshold (about 2 KB: a wide row, a backfill message of up to 64 KiB
     * of rows) is compressed on insert, and pglz made that the most expensive step of storing a
     * backfill: the change DB ingested a 1,000,000-row backfill's 46 MB of change-log rows in 1.38 s
     * with pglz and in 0.47 s with lz4 (docs/BENCHMARKS.md). The column's type and values are
     * unchanged, so zero-cache reads and writes the table as before. A server built without lz4
     * (feature_not_supported) keeps pglz; that is logged, and nothing else changes.
     */
    private void compressChangesWithLz4(Connection c) throws SQLException {
        java.sql.Savepoint before = c.setSavepoint();
        try {
            execute(c, "ALTER TABLE " + schema.table("changeLog") + " ALTER \"change\" SET COMPRESSION lz4");
            c.releaseSavepoint(before);
        } catch (SQLException e) {
            if (!"0A000".equals(e.getSQLState())) {
                throw e;
            }
            c.rollback(before);
            LOG.info("change-db schema {}: this server has no lz4 ({}); large changes are compressed with pglz", schema,
                    e.getMessage());
        }
    }

    /** The v6 tables, as zero-cache's {@code setupCDCTables} creates them. */
    String setupSql() {
        return "CREATE SCHEMA IF NOT EXISTS " + schema.quoted() + ";"
                + "CREATE TABLE " + schema.table("changeLog") + " ("
                + "watermark TEXT, pos INT8, change JSON NOT NULL, precommit TEXT, PRIMARY KEY (watermark, pos));"
                + replicationStateDdl()
                + "CREATE TABLE " + schema.table("replicationConfig") + " ("
                + "\"replicaVersion\" TEXT NOT NULL, \"publications\" TEXT[] NOT NULL, \"resetRequired\" BOOL, "
                + "\"lock\" INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1));"
                + backfillDdl();
    }

    private String replicationStateDdl() {
        return "CREATE TABLE " + schema.table("replicationState") + " ("
                + "\"lastWatermark\" TEXT NOT NULL, \"owner\" TEXT, \"ownerAddress\" TEXT, "
                + "\"lock\" INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1));";
    }

    private String backfillDdl() {
        return "CREATE TABLE " + schema.table("tableMetadata") + " ("
                + "\"schema\" TEXT NOT NULL, \"table\" TEXT NOT NULL, \"metadata\" JSONB NOT NULL, "
                + "PRIMARY KEY(\"schema\", \"table\"));"
                + "CREATE TABLE " + schema.table("backfilling") + " ("
                + "\"schema\" TEXT NOT NULL, \"table\" TEXT NOT NULL, \"column\" TEXT NOT NULL, "
                + "\"backfill\" JSONB NOT NULL, PRIMARY KEY(\"schema\", \"table\", \"column\"));";
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException e) {
            // The original failure is what matters; a broken connection discards the transaction.
            LOG.warn("rollback of change-db migration failed: {}", e.getMessage());
        }
    }
}

package org.zrm.changesource.pg.internal.setup;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;

/**
 * Creates and migrates the upstream shard (spec §4.2, §4.6): shard schema {@code "{app}_{n}"},
 * its tables, publications and event triggers, at upstream shard schema version {@value #CODE_VERSION}.
 *
 * <p>All methods take a plain (non-replication) connection in auto-commit mode and run their own
 * transaction.
 */
public final class ShardSchema {

    /** Upstream shard schema version of zero-cache 1.8; a lower value would roll data back. */
    public static final int CODE_VERSION = 23;

    private static final Logger LOG = LoggerFactory.getLogger(ShardSchema.class);
    private static final String INSUFFICIENT_PRIVILEGE = "42501";

    private ShardSchema() {}

    /** The shard's internal configuration row. */
    public record InternalShardConfig(List<String> publications, boolean ddlDetection) {}

    /**
     * Ensures the shard exists for initial sync (upstream {@code ensureShardSchema}): a fresh shard
     * gets the full setup at v{@value #CODE_VERSION}, an older one is migrated.
     */
    public static void ensureShardSchema(Connection conn, ShardConfig shard) throws SQLException {
        shard.validatePublicationNames();
        PgMigrations.Migration setup = new PgMigrations.Migration() {
            @Override
            public void migrateSchema(Connection tx) throws SQLException {
                setupTablesAndReplication(tx, shard);
            }

            @Override
            public int minSafeVersion() {
                return 1;
            }
        };
        PgMigrations.run(conn, "upstream-shard-" + shard.id().appId(), shard.id().schema(), setup,
                migrations(shard, null));
    }

    /**
     * Migrates an existing shard at startup (upstream {@code updateShardSchema}).
     *
     * @throws AutoResetException if the shard does not exist (or is too old to migrate)
     */
    public static void updateShardSchema(Connection conn, ShardConfig shard, String replicaVersion)
            throws SQLException, AutoResetException {
        try {
            PgMigrations.run(conn, "upstream-shard-" + shard.id().appId(), shard.id().schema(), tx -> {
                throw new AutoResetRequest("upstream shard " + shard.id().schema() + " is not initialized");
            }, migrations(shard, replicaVersion));
        } catch (AutoResetRequest e) {
            throw new AutoResetException(e.getMessage());
        }
    }

    /** Unchecked carrier for an auto-reset decision raised inside a migration step. */
    static final class AutoResetRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        AutoResetRequest(String message) {
            super(message);
        }
    }

    private static TreeMap<Integer, PgMigrations.Migration> migrations(ShardConfig shard, String replicaVersion) {
        String s = ShardSql.quoteId(shard.id().schema());
        TreeMap<Integer, PgMigrations.Migration> m = new TreeMap<>();
        m.put(4, new PgMigrations.Migration() {
            @Override
            public void migrateSchema(Connection tx) {
                throw new AutoResetRequest("resetting to upgrade shard schema");
            }

            @Override
            public int minSafeVersion() {
                return 3;
            }
        });
        m.put(6, tx -> {
            if (replicaVersion == null) {
                throw new IllegalStateException("replicaVersion is always passed for incremental migrations");
            }
            exec(tx, "ALTER TABLE " + s + ".\"shardConfig\" ADD \"replicaVersion\" TEXT");
            try (PreparedStatement ps = tx.prepareStatement("UPDATE " + s + ".\"shardConfig\" SET \"replicaVersion\" = ?")) {
                ps.setString(1, replicaVersion);
                ps.execute();
            }
        });
        m.put(7, tx -> setupTriggers(tx, shard.id(), readInternalConfig(tx, shard.id()).publications()));
        m.put(8, tx -> {
            exec(tx, "CREATE TABLE " + s + ".replicas (\"slot\" TEXT PRIMARY KEY, \"version\" TEXT NOT NULL, "
                    + "\"initialSchema\" JSON NOT NULL)");
            try (PreparedStatement ps = tx.prepareStatement("INSERT INTO " + s + ".replicas (slot, version, \"initialSchema\") "
                    + "SELECT ?, \"replicaVersion\", \"initialSchema\" FROM " + s + ".\"shardConfig\"")) {
                ps.setString(1, shard.id().legacySlot());
                ps.execute();
            }
            exec(tx, "ALTER TABLE " + s + ".\"shardConfig\" DROP \"replicaVersion\", DROP \"initialSchema\"");
        });
        m.put(10, tx -> exec(tx, ShardSql.mutationsTable(s) + "\nALTER PUBLICATION "
                + ShardSql.quoteId(shard.id().metadataPublication()) + " ADD TABLE " + s + ".\"mutations\";"));
        m.put(13, tx -> {
            exec(tx, "CREATE TABLE IF NOT EXISTS " + s + ".\"schemaVersions\" (\"minSupportedVersion\" INT4, "
                    + "\"maxSupportedVersion\" INT4, \"lock\" BOOL PRIMARY KEY DEFAULT true CHECK (lock))");
            exec(tx, "INSERT INTO " + s + ".\"schemaVersions\" (\"lock\", \"minSupportedVersion\", \"maxSupportedVersion\") "
                    + "VALUES (true, 1, 1) ON CONFLICT DO NOTHING");
        });
        m.put(15, tx -> exec(tx, "ALTER TABLE " + s + ".replicas ADD COLUMN \"initialSyncContext\" JSON, "
                + "ADD COLUMN \"subscriberContext\" JSON"));
        m.put(22, tx -> {
            exec(tx, "ALTER TABLE " + s + ".replicas ALTER \"initialSchema\" DROP NOT NULL");
            exec(tx, "ALTER TABLE " + s + ".replicas DROP CONSTRAINT replicas_pkey");
            exec(tx, "ALTER TABLE " + s + ".replicas ADD COLUMN id TEXT PRIMARY KEY DEFAULT "
                    + "replace(gen_random_uuid()::text, '-', '')");
            exec(tx, "ALTER TABLE " + s + ".replicas ADD COLUMN rank BIGSERIAL");
        });
        m.put(CODE_VERSION, tx -> setupTriggers(tx, shard.id(), readInternalConfig(tx, shard.id()).publications()));
        return m;
    }

    /**
     * Fresh setup (upstream {@code setupTablesAndReplication}), inside the migration transaction.
     */
    static void setupTablesAndReplication(Connection tx, ShardConfig shard) throws SQLException {
        ShardId id = shard.id();
        List<String> all = new ArrayList<>();
        if (!shard.publications().isEmpty()) {
            List<String> found = new ArrayList<>();
            try (Statement st = tx.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT pubname from pg_publication WHERE pubname IN (" + ShardSql.literalList(shard.publications()) + ")")) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
            if (found.size() != shard.publications().size()) {
                throw new UnsupportedTableSchemaException("Unknown or invalid publications. Specified: ["
                        + String.join(",", shard.publications()) + "]. Found: [" + String.join(",", found) + "]");
            }
            all.addAll(shard.publications());
        } else {
            exec(tx, "DROP PUBLICATION IF EXISTS " + ShardSql.quoteId(id.defaultPublication()));
            exec(tx, "CREATE PUBLICATION " + ShardSql.quoteId(id.defaultPublication())
                    + " FOR TABLES IN SCHEMA public WITH (publish_via_partition_root = true)");
            all.add(id.defaultPublication());
        }
        all.add(id.metadataPublication());
        exec(tx, ShardSql.globalSetup(id.appId()) + ShardSql.shardSetup(id, all));
        PublicationInfo info = PublicationInfo.read(tx, all);
        setReplicaIdentitiesForTablesWithoutPrimaryKeys(tx, info.schema());
        setupTriggers(tx, id, all);
    }

    /**
     * For published tables without primary key and with identity DEFAULT, uses the first unique,
     * immediate index over NOT NULL columns as REPLICA IDENTITY (updates and deletes would fail
     * otherwise).
     */
    static void setReplicaIdentitiesForTablesWithoutPrimaryKeys(Connection tx, PublishedSchema schema) throws SQLException {
        for (ReplicaIdentityFix fix : ReplicaIdentityFix.forTablesWithoutPrimaryKeys(schema)) {
            fix.apply(tx);
        }
    }

    /**
     * Installs the event functions and, in a savepoint, the event triggers; without the privilege
     * to create event triggers on a shard that never had them, continues in degraded mode
     * ({@code ddlDetection = false}). The functions are installed either way, so that
     * {@code update_schemas()} stays available as a manual hook.
     *
     * @return the warning logged for degraded mode, or {@code null} if the triggers were installed
     */
    static String setupTriggers(Connection tx, ShardId id, List<String> publications) throws SQLException {
        String s = ShardSql.quoteId(id.schema());
        boolean ddlDetection = readInternalConfig(tx, id).ddlDetection();
        exec(tx, ShardSql.eventFunctions(id, publications));
        Savepoint sp = tx.setSavepoint();
        try {
            exec(tx, ShardSql.eventTriggers(id, publications) + "UPDATE " + s + ".\"shardConfig\" SET \"ddlDetection\" = true;");
            tx.releaseSavepoint(sp);
            return null;
        } catch (SQLException e) {
            tx.rollback(sp);
            // Once triggers were installed, losing them (e.g. an upgrade run by another user) would
            // silently stop schema replication: that must fail, not degrade.
            if (ddlDetection || !INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                throw e;
            }
            String warning = degradedModeWarning(e);
            LOG.warn(warning);
            return warning;
        }
    }

    /**
     * The degraded-mode warning, worded as zero-cache words it (operators and their log searches
     * know that text): the server's hint when it gives one ("Must be superuser to create an event
     * trigger."), else its message.
     */
    static String degradedModeWarning(SQLException e) {
        String reason = e.getMessage();
        if (e instanceof PSQLException p && p.getServerErrorMessage() != null) {
            ServerErrorMessage m = p.getServerErrorMessage();
            reason = m.getHint() != null ? m.getHint() : m.getMessage();
        }
        return "Unable to create event triggers for schema change detection:\n\n"
                + "\"" + reason + "\"\n\n"
                + "Proceeding in degraded mode: schema changes will halt replication,\n"
                + "requiring the replica to be reset (manually or with --auto-reset).";
    }

    /** Reads {@code "{app}_{n}"."shardConfig"}. */
    public static InternalShardConfig readInternalConfig(Connection conn, ShardId id) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT \"publications\", \"ddlDetection\" FROM " + ShardSql.quoteId(id.schema()) + ".\"shardConfig\"")) {
            if (!rs.next()) {
                throw new SQLException("Expected exactly one shardConfig row, got 0");
            }
            Array a = rs.getArray(1);
            List<String> pubs = Arrays.asList((String[]) a.getArray());
            return new InternalShardConfig(List.copyOf(pubs), rs.getBoolean(2));
        }
    }

    /** Drops the shard (publications and schema; cascades to functions and event triggers). */
    public static void dropShard(Connection conn, ShardId id) throws SQLException {
        exec(conn, ShardSql.dropShard(id));
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}

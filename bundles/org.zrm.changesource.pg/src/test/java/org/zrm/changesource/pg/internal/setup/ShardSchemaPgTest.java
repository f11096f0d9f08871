package org.zrm.changesource.pg.internal.setup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.changesource.AutoResetException;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Ports of upstream {@code shard.pg.test.ts}, {@code init.pg.test.ts} and {@code ddl.pg.test.ts} basics. */
@PostgresTest
class ShardSchemaPgTest {

    private static List<String> strings(Connection c, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    @Test
    void defaultPublicationSetup(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("defpub", 0, List.of());
        try (Connection c = db.connect()) {
            ShardSchema.ensureShardSchema(c, shard);
            assertEquals(List.of("_defpub_metadata_0", "_defpub_public_0"),
                    strings(c, "SELECT pubname FROM pg_publication WHERE pubname LIKE '_defpub%' ORDER BY pubname"));
            ShardSchema.InternalShardConfig cfg = ShardSchema.readInternalConfig(c, shard.id());
            assertEquals(List.of("_defpub_metadata_0", "_defpub_public_0"), cfg.publications());
            assertTrue(cfg.ddlDetection());
            assertEquals(List.of("defpub_ddl_end_0", "defpub_ddl_start_0"),
                    strings(c, "SELECT evtname FROM pg_event_trigger WHERE evtname LIKE 'defpub%' ORDER BY evtname"));
            assertEquals(List.of("23,23,1"), strings(c, "SELECT \"dataVersion\" || ',' || \"schemaVersion\" || ',' || "
                    + "\"minSafeVersion\" FROM defpub_0.\"versionHistory\""));
            assertEquals(List.of("defpub.permissions", "defpub_0.clients", "defpub_0.mutations"),
                    strings(c, "SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = "
                            + "'_defpub_metadata_0' ORDER BY 1"));
            // the published schema snapshot table was filled by schema_specs()
            assertTrue(strings(c, "SELECT current::text FROM defpub_0.\"publishedSchema\"").get(0)
                    .contains("\"tables\""));
            assertEquals(List.of("clientGroupID,clientID,lastMutationID,userID"), strings(c,
                    "SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = "
                            + "'defpub_0.clients'::regclass AND attnum > 0"));
            assertEquals(List.of("id,rank,slot,version,initialSchema,initialSyncContext,subscriberContext"), strings(c,
                    "SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = "
                            + "'defpub_0.replicas'::regclass AND attnum > 0"));
        }
    }

    @Test
    void setupIsIdempotent(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("idem", 0, List.of());
        try (Connection c = db.connect()) {
            ShardSchema.ensureShardSchema(c, shard);
            try (Statement st = c.createStatement()) {
                st.execute("INSERT INTO idem_0.replicas (id, slot, version) VALUES ('x', 'idem_0_a', '01')");
            }
            ShardSchema.ensureShardSchema(c, shard);
            ShardSchema.updateShardSchema(c, shard, "01");
            assertEquals(List.of("x"), strings(c, "SELECT id FROM idem_0.replicas"));
            assertEquals(List.of("23"), strings(c, "SELECT \"dataVersion\" FROM idem_0.\"versionHistory\""));
        }
    }

    @Test
    void newerDataVersionIsRolledBackToCodeVersion(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("rollback", 0, List.of());
        try (Connection c = db.connect()) {
            ShardSchema.ensureShardSchema(c, shard);
            try (Statement st = c.createStatement()) {
                st.execute("UPDATE rollback_0.\"versionHistory\" SET \"dataVersion\" = 25, \"schemaVersion\" = 25");
            }
            ShardSchema.updateShardSchema(c, shard, "01");
            assertEquals(List.of("23,25,1"), strings(c, "SELECT \"dataVersion\" || ',' || \"schemaVersion\" || ',' || "
                    + "\"minSafeVersion\" FROM rollback_0.\"versionHistory\""));
            try (Statement st = c.createStatement()) {
                st.execute("UPDATE rollback_0.\"versionHistory\" SET \"minSafeVersion\" = 24");
            }
            SQLException e = assertThrows(SQLException.class, () -> ShardSchema.updateShardSchema(c, shard, "01"));
            assertEquals("Cannot run upstream-shard-rollback at schema v23 because rollback limit is v24", e.getMessage());
        }
    }

    @Test
    void updateOfMissingShardRequestsAutoReset(PgDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            AutoResetException e = assertThrows(AutoResetException.class,
                    () -> ShardSchema.updateShardSchema(c, ShardConfig.of("missing", 0, List.of()), "01"));
            assertEquals("upstream shard missing_0 is not initialized", e.getMessage());
        }
    }

    @Test
    void migrationFromV15(PgDatabase db) throws Exception {
        // A shard left at v15 (before the rank/id columns of v22) is migrated, keeping its replica.
        ShardConfig shard = ShardConfig.of("oldv", 0, List.of());
        try (Connection c = db.connect()) {
            ShardSchema.ensureShardSchema(c, shard);
            try (Statement st = c.createStatement()) {
                st.execute("DROP TABLE oldv_0.replicas; CREATE TABLE oldv_0.replicas (slot TEXT PRIMARY KEY, "
                        + "version TEXT NOT NULL, \"initialSchema\" JSON NOT NULL, \"initialSyncContext\" JSON, "
                        + "\"subscriberContext\" JSON); INSERT INTO oldv_0.replicas VALUES ('oldv_0', '01', '{}', '{}', NULL);"
                        + "UPDATE oldv_0.\"versionHistory\" SET \"dataVersion\" = 15, \"schemaVersion\" = 15");
            }
            ShardSchema.updateShardSchema(c, shard, "01");
            assertEquals(List.of("oldv_0|1"), strings(c, "SELECT slot || '|' || rank FROM oldv_0.replicas"));
            assertEquals(List.of("23"), strings(c, "SELECT \"dataVersion\" FROM oldv_0.\"versionHistory\""));
        }
    }

    @Test
    void unknownPublications(PgDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            UnsupportedTableSchemaException e = assertThrows(UnsupportedTableSchemaException.class,
                    () -> ShardSchema.ensureShardSchema(c, ShardConfig.of("unknown", 0, List.of("nope", "zzz"))));
            assertEquals("Unknown or invalid publications. Specified: [nope,zzz]. Found: []", e.getMessage());
        }
    }

    @ParameterizedTest(name = "invalid publication name: {0}")
    @ValueSource(strings = {"_reserved", "has space", "1abc", "semi;colon"})
    void invalidPublicationNames(String name) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ShardConfig.of("x", 0, List.of(name)).validatePublicationNames());
        assertTrue(e.getMessage().contains(name), e.getMessage());
    }

    @Test
    void invalidAppId() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ShardId("Not-Valid", 0));
        assertEquals("The App ID may only consist of lower-case letters, numbers, and the underscore character",
                e.getMessage());
    }

    @Test
    void numericAppIdAndMultipleShards(PgDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            ShardSchema.ensureShardSchema(c, ShardConfig.of("123", 0, List.of()));
            ShardSchema.ensureShardSchema(c, ShardConfig.of("123", 1, List.of()));
            assertEquals(List.of("123_ddl_end_0", "123_ddl_end_1", "123_ddl_start_0", "123_ddl_start_1"),
                    strings(c, "SELECT evtname FROM pg_event_trigger WHERE evtname LIKE '123%' ORDER BY evtname"));
        }
    }

    /** Upstream's "non-superuser: ddlDetection = false", warning text included. */
    @Test
    void nonSuperuserSetsUpDegradedMode(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("supaneon", 0, List.of("zero_supaneon"));
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE supaneon_foo(id INT4 PRIMARY KEY); CREATE PUBLICATION zero_supaneon FOR TABLE"
                    + " supaneon_foo; DROP ROLE IF EXISTS supaneon; CREATE ROLE supaneon NOSUPERUSER IN ROLE current_user;"
                    + " SET ROLE supaneon");
            try {
                ShardSchema.ensureShardSchema(c, shard);
                assertEquals(List.of("_supaneon_metadata_0", "zero_supaneon"),
                        ShardSchema.readInternalConfig(c, shard.id()).publications());
                assertFalse(ShardSchema.readInternalConfig(c, shard.id()).ddlDetection(), "degraded mode");
                assertEquals(List.of(), strings(c, "SELECT evtname FROM pg_event_trigger WHERE evtname LIKE 'supaneon%'"));
                // The functions are there all the same, for the manual update_schemas() hook.
                assertEquals(List.of("update_schemas"), strings(c, "SELECT DISTINCT proname FROM pg_proc WHERE"
                        + " proname = 'update_schemas' AND pronamespace = 'supaneon_0'::regnamespace"));

                // What setup logged, word for word as upstream logs it.
                c.setAutoCommit(false);
                try {
                    assertEquals("Unable to create event triggers for schema change detection:\n\n"
                            + "\"Must be superuser to create an event trigger.\"\n\n"
                            + "Proceeding in degraded mode: schema changes will halt replication,\n"
                            + "requiring the replica to be reset (manually or with --auto-reset).",
                            ShardSchema.setupTriggers(c, shard.id(), List.of("_supaneon_metadata_0", "zero_supaneon")));
                } finally {
                    c.rollback();
                    c.setAutoCommit(true);
                }
            } finally {
                st.execute("RESET ROLE; DROP OWNED BY supaneon; DROP ROLE supaneon");
            }
        }
    }

    /** Once event triggers were installed, failing to (re)create them is an error, not degraded mode. */
    @Test
    void triggerUpgradeFailureIsDetected(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("woo", 0, List.of());
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            ShardSchema.ensureShardSchema(c, shard);
            assertTrue(ShardSchema.readInternalConfig(c, shard.id()).ddlDetection());
            st.execute("DROP ROLE IF EXISTS woo_other; CREATE ROLE woo_other IN ROLE current_user; SET ROLE woo_other");
            try {
                c.setAutoCommit(false);
                try {
                    SQLException e = assertThrows(SQLException.class, () -> ShardSchema.setupTriggers(c, shard.id(),
                            ShardSchema.readInternalConfig(c, shard.id()).publications()));
                    assertTrue(e.getMessage().contains("permission denied to create event trigger \"woo_ddl_start_0\""),
                            e.getMessage());
                } finally {
                    c.rollback();
                    c.setAutoCommit(true);
                }
            } finally {
                st.execute("RESET ROLE; DROP OWNED BY woo_other; DROP ROLE woo_other");
            }
        }
    }

    @Test
    void ddlEventsAreEmittedAsLogicalMessages(PgDatabase db) throws Exception {
        ShardConfig shard = ShardConfig.of("ddl", 0, List.of());
        try (Connection c = db.connect()) {
            ShardSchema.ensureShardSchema(c, shard);
            try (Statement st = c.createStatement()) {
                st.execute("SELECT pg_create_logical_replication_slot('ddl_probe', 'test_decoding')");
                st.execute("CREATE TABLE public.ddl_probe_table (id int PRIMARY KEY)");
                st.execute("SELECT ddl_0.update_schemas()");
            }
            List<String> messages = strings(c, "SELECT data FROM pg_logical_slot_get_changes('ddl_probe', NULL, NULL) "
                    + "WHERE data LIKE 'message:%'");
            try (Statement st = c.createStatement()) {
                st.execute("SELECT pg_drop_replication_slot('ddl_probe')");
            }
            assertTrue(messages.stream().anyMatch(m -> m.contains("prefix: ddl/0/ddl") && m.contains("\"type\" : \"ddlStart\"")
                    && m.contains("\"tag\" : \"CREATE TABLE\"")), messages.toString());
            assertTrue(messages.stream().anyMatch(m -> m.contains("\"type\" : \"ddlUpdate\"")
                    && m.contains("ddl_probe_table")), messages.toString());
            assertTrue(messages.stream().anyMatch(m -> m.contains("\"type\" : \"schemaSnapshot\"")
                    && m.contains("\"tag\" : \"MANUAL\"")), messages.toString());
        }
    }

    @Test
    void publishedSchemaQueryParses(PgDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA pq; CREATE TABLE pq.t (a int NOT NULL, b text[], c varchar(7), d int GENERATED "
                    + "ALWAYS AS (a + 1) STORED, PRIMARY KEY (a)); CREATE INDEX t_b ON pq.t (c DESC) INCLUDE (b); "
                    + "CREATE INDEX t_expr ON pq.t (lower(c)); CREATE PUBLICATION pq_pub FOR TABLE pq.t WHERE (a > 1)");
            PublicationInfo info = PublicationInfo.read(c, List.of("pq_pub"));
            PublishedTable t = info.schema().tables().get(0);
            assertEquals("pq.t", t.liteTableName());
            assertEquals(List.of("a"), t.primaryKey());
            assertEquals(List.of("a"), t.replicaIdentityColumns());
            assertEquals(List.of("(a > 1)"), t.rowFilters());
            assertFalse(t.columns().containsKey("d"), "PG15 generated column excluded");
            assertEquals("text[]", t.columns().get("b").dataType());
            assertEquals(7L, t.columns().get("c").characterMaximumLength());
            List<String> indexes = info.schema().indexes().stream().map(PublishedIndex::name).sorted().toList();
            assertEquals(List.of("t_b", "t_pkey"), indexes);
            PublishedIndex tb = info.schema().indexes().stream().filter(i -> i.name().equals("t_b")).findFirst().get();
            assertEquals(java.util.Map.of("c", "DESC"), tb.columns());
        }
    }

    @Test
    void publishAllOperationsIsRequired(PgDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA ops; CREATE TABLE ops.t (a int PRIMARY KEY); "
                    + "CREATE PUBLICATION ops_pub FOR TABLE ops.t WITH (publish = 'insert, update, delete')");
            PublicationInfo info = PublicationInfo.read(c, List.of("ops_pub"));
            UnsupportedTableSchemaException e = assertThrows(UnsupportedTableSchemaException.class,
                    () -> TableValidator.strict().validate(info));
            assertEquals("PUBLICATION ops_pub must publish insert, update, delete, and truncate", e.getMessage());
        }
    }

    @Test
    void invalidUpstream_replicaIdentityNothingAndInvalidNames(PgDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA inv; CREATE TABLE inv.nothing (a int PRIMARY KEY); "
                    + "ALTER TABLE inv.nothing REPLICA IDENTITY NOTHING; CREATE TABLE inv.\"dotted.name\" (a int PRIMARY KEY);"
                    + "CREATE TABLE inv.badcol (a int PRIMARY KEY, \"b c\" int);"
                    + "CREATE PUBLICATION inv1 FOR TABLE inv.nothing; CREATE PUBLICATION inv2 FOR TABLE inv.\"dotted.name\";"
                    + "CREATE PUBLICATION inv3 FOR TABLE inv.badcol");
            assertEquals("Table \"nothing\" with REPLICA IDENTITY NOTHING cannot be replicated", assertThrows(
                    UnsupportedTableSchemaException.class,
                    () -> TableValidator.strict().validate(PublicationInfo.read(c, List.of("inv1")))).getMessage());
            assertEquals("Table \"dotted.name\" has invalid characters.", assertThrows(
                    UnsupportedTableSchemaException.class,
                    () -> TableValidator.strict().validate(PublicationInfo.read(c, List.of("inv2")))).getMessage());
            assertEquals("Column \"b c\" in table \"badcol\" has invalid characters.", assertThrows(
                    UnsupportedTableSchemaException.class,
                    () -> TableValidator.strict().validate(PublicationInfo.read(c, List.of("inv3")))).getMessage());
        }
    }
}

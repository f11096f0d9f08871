package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Ports of {@code schema/init.pg.test.ts} and the migration framework's rules (spec §3.2–3.3). */
@PostgresTest
class SchemaTest {

    private static int shard = 100;

    private static StorerSettings settings(PgDatabase db, String app) {
        return StorerSettings.of(db.uri(), app, shard++);
    }

    /** Columns, types, nullability, defaults and keys of every table in a schema. */
    private static List<String> catalog(Fixture probe, String schema) throws Exception {
        return probe.strings("SELECT table_name || '.' || column_name || ' ' || data_type || ' '"
                + " || is_nullable || ' ' || coalesce(column_default, '-') FROM information_schema.columns"
                + " WHERE table_schema = '" + schema + "' ORDER BY table_name, column_name");
    }

    private static List<String> keys(Fixture probe, String schema) throws Exception {
        return probe.strings("SELECT c.relname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k"
                + " JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = '" + schema + "' ORDER BY 1");
    }

    private static List<String> indexes(Fixture probe, String schema) throws Exception {
        return probe.strings("SELECT tablename || ' ' || regexp_replace(indexdef, '\"[^\"]*/cdc\"', 'S')"
                + " FROM pg_indexes WHERE schemaname = '" + schema + "' ORDER BY 1");
    }

    @Test
    void freshDatabaseIsSetUpAtV6(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 1);
        String s = f.schema.name();
        assertEquals(List.of("6 6 1"), f.strings("SELECT \"dataVersion\" || ' ' || \"schemaVersion\" || ' ' || "
                + "\"minSafeVersion\" FROM " + f.schema.table("versionHistory")));
        assertEquals(List.of(
                "backfilling.backfill jsonb NO -", "backfilling.column text NO -", "backfilling.schema text NO -",
                "backfilling.table text NO -",
                "changeLog.change json NO -", "changeLog.pos bigint NO -", "changeLog.precommit text YES -",
                "changeLog.watermark text NO -",
                "replicationConfig.lock integer NO 1", "replicationConfig.publications ARRAY NO -",
                "replicationConfig.replicaVersion text NO -", "replicationConfig.resetRequired boolean YES -",
                "replicationState.lastWatermark text NO -", "replicationState.lock integer NO 1",
                "replicationState.owner text YES -", "replicationState.ownerAddress text YES -",
                "tableMetadata.metadata jsonb NO -", "tableMetadata.schema text NO -", "tableMetadata.table text NO -",
                "versionHistory.dataVersion integer NO -", "versionHistory.lock character NO 'v'::bpchar",
                "versionHistory.minSafeVersion integer NO -", "versionHistory.schemaVersion integer NO -"),
                catalog(f, s));
        // Only primary keys: all access goes through them.
        assertEquals(5 + 1, indexes(f, s).size());
        f.close();
    }

    @Test
    void aFreshChangeLogCompressesLargeChangesWithLz4WhenTheServerHasIt(PgDatabase db) throws Exception {
        boolean lz4;
        try (java.sql.Connection c = db.connect(); java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE TEMP TABLE lz4_probe (x text COMPRESSION lz4)");
            lz4 = true;
        } catch (java.sql.SQLException e) {
            assertEquals("0A000", e.getSQLState(), e.getMessage());
            lz4 = false;
        }
        Fixture f = Fixture.empty(db, 1);
        assertEquals(List.of(lz4 ? "l" : ""), f.strings("SELECT attcompression::text FROM pg_attribute WHERE attrelid = '"
                + f.schema.table("changeLog").replace("'", "''") + "'::regclass AND attname = 'change'"));
        // A change past the TOAST threshold is stored compressed and reads back unchanged.
        String big = "{\"tag\":\"backfill\",\"rows\":\"" + "abcdefgh".repeat(4096) + "\"}";
        try (java.sql.Connection c = db.connect(); java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO "
                + f.schema.table("changeLog") + " (watermark, pos, change) VALUES ('zz-big', 0, ?::json)")) {
            ps.setString(1, big);
            ps.executeUpdate();
        }
        String stored = " FROM " + f.schema.table("changeLog") + " WHERE watermark = 'zz-big'";
        assertEquals(List.of(lz4 ? "lz4" : "pglz"), f.strings("SELECT coalesce(pg_column_compression(change), 'none')"
                + stored));
        // Compared whole, but not printed whole: the value is 32 KB.
        List<String> back = f.strings("SELECT change::text" + stored);
        assertTrue(back.size() == 1 && back.get(0).equals(big), "the change reads back unchanged");
        f.close();
    }

    /** A v1 database (as zero-cache 0.x left it) is migrated step by step to exactly the v6 layout. */
    @Test
    void migratesV1ThroughV6ToTheFreshLayout(PgDatabase db) throws Exception {
        Fixture fresh = Fixture.empty(db, 1);
        StorerSettings old = settings(db, "xero");
        CdcSchema s = new CdcSchema(old.schemaName());
        fresh.exec("CREATE SCHEMA " + s.quoted());
        fresh.exec("CREATE TABLE " + s.table("changeLog") + " (watermark TEXT, pos INT8, change JSONB NOT NULL,"
                + " precommit TEXT, PRIMARY KEY (watermark, pos))");
        fresh.exec("CREATE TABLE " + s.table("replicationConfig") + " (\"replicaVersion\" TEXT NOT NULL,"
                + " \"publications\" TEXT[] NOT NULL, \"lock\" INTEGER PRIMARY KEY DEFAULT 1 CHECK (lock=1))");
        fresh.exec("CREATE TABLE " + s.table("versionHistory") + " (\"dataVersion\" int NOT NULL, \"schemaVersion\""
                + " int NOT NULL, \"minSafeVersion\" int NOT NULL, lock char(1) NOT NULL CONSTRAINT DF_schema_meta_lock"
                + " DEFAULT 'v', CONSTRAINT PK_schema_meta_lock PRIMARY KEY (lock), CONSTRAINT CK_schema_meta_lock"
                + " CHECK (lock='v'))");
        fresh.exec("INSERT INTO " + s.table("versionHistory") + " VALUES (1, 1, 1)");
        fresh.exec("INSERT INTO " + s.table("replicationConfig") + " VALUES ('01', '{pub}')");
        fresh.exec("INSERT INTO " + s.table("changeLog") + " VALUES ('04', 0, '{\"tag\":\"begin\"}', NULL),"
                + " ('07', 0, '{\"tag\":\"begin\"}', NULL)");
        PgChangeLog log = new PgChangeLog(old);
        log.initialize();
        assertEquals(catalog(fresh, fresh.schema.name()), catalog(fresh, s.name()));
        assertEquals(keys(fresh, fresh.schema.name()).stream().map(k -> k.replaceAll("\\s+", " ")).toList(),
                keys(fresh, s.name()).stream().map(k -> k.replaceAll("\\s+", " ")).toList());
        assertEquals(indexes(fresh, fresh.schema.name()), indexes(fresh, s.name()));
        assertEquals(List.of("6 6 1"), fresh.strings("SELECT \"dataVersion\" || ' ' || \"schemaVersion\" || ' ' || "
                + "\"minSafeVersion\" FROM " + s.table("versionHistory")));
        // v3 data migration: lastWatermark = max(changeLog.watermark).
        assertEquals("07", log.replicationState().lastWatermark());
        log.close();
        fresh.close();
    }

    /** getLastWatermarkV2: an empty log falls back to the replica version. */
    @Test
    void getLastWatermarkV2(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 1);
        SchemaMigrator m = new SchemaMigrator(f.schema, "xero");
        try (var c = db.connect()) {
            assertEquals("00", m.lastWatermarkV2(c));
            f.store(Fixture.txn("05", 1));
            assertEquals("05", m.lastWatermarkV2(c));
        }
        f.close();
    }

    @Test
    void databaseAtV6IsAcceptedAndNewerDataVersionIsResetButRollbackLimitFails(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 1);
        PgChangeLog again = new PgChangeLog(f.settings);
        again.initialize(); // already v6: no-op
        again.close();
        // Written by a newer zero-cache whose rollback limit still allows v6.
        f.exec("UPDATE " + f.schema.table("versionHistory") + " SET \"dataVersion\" = 7, \"schemaVersion\" = 7");
        PgChangeLog rolledBack = new PgChangeLog(f.settings);
        rolledBack.initialize();
        assertEquals(List.of("6 7 1"), f.strings("SELECT \"dataVersion\" || ' ' || \"schemaVersion\" || ' ' || "
                + "\"minSafeVersion\" FROM " + f.schema.table("versionHistory")));
        rolledBack.close();
        f.exec("UPDATE " + f.schema.table("versionHistory") + " SET \"dataVersion\" = 8, \"minSafeVersion\" = 8");
        PgChangeLog tooOld = new PgChangeLog(f.settings);
        ChangeLogException e = assertThrows(ChangeLogException.class, tooOld::initialize);
        assertEquals("Cannot run change-streamer at schema v6 because rollback limit is v8", e.getMessage());
        // Every operation reports it too, rather than working on an unknown layout.
        assertThrows(ChangeLogException.class, tooOld::replicationState);
        tooOld.close();
        f.close();
    }

    @Test
    void concurrentStartsSerializeOnTheAdvisoryLock(PgDatabase db) throws Exception {
        StorerSettings s = settings(db, "xero");
        List<PgChangeLog> logs = List.of(new PgChangeLog(s), new PgChangeLog(s), new PgChangeLog(s));
        CompletableFuture<?>[] all = logs.stream().map(l -> CompletableFuture.runAsync(() -> {
            try {
                l.initialize();
            } catch (ChangeLogException e) {
                throw new IllegalStateException(e);
            }
        })).toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(all).get(60, TimeUnit.SECONDS);
        logs.get(0).ensureReplicationConfig(new SubscriptionState("00", List.of(), "00"), false);
        assertEquals("00", logs.get(0).replicationState().lastWatermark());
        logs.forEach(PgChangeLog::close);
    }

    @Test
    void legacySchemaIsRenamed(PgDatabase db) throws Exception {
        StorerSettings s = StorerSettings.of(db.uri(), "legacyapp", 0);
        Fixture probe = Fixture.empty(db, 1);
        probe.exec("CREATE SCHEMA cdc_legacyapp");
        probe.exec("CREATE TABLE cdc_legacyapp.marker (x int)");
        PgChangeLog log = new PgChangeLog(s);
        log.initialize();
        assertEquals(List.of("legacyapp_0/cdc"), probe.strings(
                "SELECT table_schema FROM information_schema.tables WHERE table_name = 'marker'"));
        log.close();
        probe.close();
    }
}

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changesource.pg.internal.PgChangeSource;
import org.zrm.changesource.pg.internal.PgSourceSettings;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.changesource.pg.internal.sync.InitialSyncOptions;
import org.zrm.changesource.pg.internal.sync.JdbcPgConnector;
import org.zrm.changesource.pg.internal.sync.ReplicaBootstrap;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * Upstream and replica-file compatibility between ZRM's Postgres change source and the real
 * zero-cache 1.8.0.
 *
 * <p>Run through {@code zero-cache-upstream.sh}, which builds the class path, provides Node 22
 * and zero-cache and compiles this file with {@code CompatSupport.java} (inputs, steps, the
 * zero-cache process); see {@code README.md} next to this file. Prints one
 * {@code COMPAT <check> ok} or {@code COMPAT <check> FAIL <why>} line per check and exits 1 if any
 * failed.
 */
public final class ZeroCacheUpstreamCheck extends CompatSupport {

    private static final String SHARD = APP + "_" + SHARD_NUM;
    private static final ShardConfig SHARD_CONFIG = ShardConfig.of(APP, SHARD_NUM, List.of());

    private static final String ZC_CATALOG = "zc_catalog";
    private static final String ZRM_CATALOG = "zrm_catalog";
    private static final String ZERO_FIRST = "zero_first";
    private static final String ZRM_FIRST = "zrm_first";
    private static final String REPLICA_FILE = "replica_file";

    /**
     * The upstream tables: every type class of spec §7 (numbers, numeric, json/jsonb, arrays,
     * timestamps, bytea, enums, varchar/char lengths, defaults), a secondary index with DESC, and a
     * table without primary key whose unique index becomes the replica identity.
     */
    private static final String[] FIXTURE = {
        "CREATE TYPE mood AS ENUM ('happy', 'sad')",
        "CREATE TABLE items (id int8 PRIMARY KEY, name text, qty int4)",
        "CREATE TABLE types (id text PRIMARY KEY, i2 int2, i4 int4 NOT NULL DEFAULT 3, i8 int8, n numeric(10,2),"
                + " f4 float4, f8 float8, b bool, vc varchar(20), ch char(3), t text DEFAULT 'x', j json, jb jsonb,"
                + " ts timestamp, tstz timestamptz, d date, tm time, u uuid, ba bytea, arr int4[], tarr text[],"
                + " e mood, earr mood[], big int8 NOT NULL DEFAULT 9007199254740993)",
        "CREATE INDEX types_i4_vc ON types (i4 DESC, vc)",
        "CREATE TABLE uniq (a int NOT NULL, b text NOT NULL, c text, UNIQUE (a, b))",
        "INSERT INTO items VALUES (1, 'a', 1), (2, 'b', NULL)",
        "INSERT INTO types VALUES ('r1', -2, 4, 9007199254740993, 12345.67, 1.5, 2.25, true, 'vc', 'ab',"
                + " 'text', '{\"a\":[1,2.5,\"x\"]}', '{\"b\":{\"c\":null}}', '2024-01-02 03:04:05.123456',"
                + " '2024-01-02 03:04:05.5+02', '2024-02-29', '12:34:56.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
                + " '\\xdeadbeef', '{1,2,NULL}', '{\"a b\",\"c\\\"d\"}', 'sad', '{happy,sad}', 1)",
        "INSERT INTO types (id) VALUES ('r2')",
        "INSERT INTO uniq VALUES (1, 'x', NULL), (2, 'y', 'z')",
    };

    public static void main(String[] args) throws Exception {
        new ZeroCacheUpstreamCheck().runAndExit();
    }

    // ------------------------------------------------------------------ scenarios

    @Override
    void checks() throws Exception {
        for (String db : List.of(ZC_CATALOG, ZRM_CATALOG, ZERO_FIRST, ZRM_FIRST, REPLICA_FILE)) {
            cluster.createDatabaseIfMissing(db);
            exec(db, FIXTURE);
        }

        // 1. The upstream catalog each side creates on its own fresh database.
        boolean zcSetUp = step("catalog/zero-cache-setup", () -> {
            ZeroCache zc = new ZeroCache("catalog", ZC_CATALOG, work.resolve("zc-catalog.db"));
            try {
                zc.start();
            } finally {
                zc.stop();
            }
            assertClean(zc);
            expect(zc.ranInitialSync(), "zero-cache did not run initial sync on an empty upstream");
        });
        boolean zrmSetUp = step("catalog/zrm-setup", () -> zrmInitialize(ZRM_CATALOG, work.resolve("zrm-catalog.db")));
        if (zcSetUp && zrmSetUp) {
            step("catalog/pg_dump-identical", this::catalogDumpIdentical);
            step("catalog/event-triggers-identical", () -> sameRows("event triggers", EVENT_TRIGGERS_SQL));
            step("catalog/publications-identical", () -> {
                sameRows("pg_publication", PUBLICATIONS_SQL);
                sameRows("pg_publication_tables", PUBLICATION_TABLES_SQL);
                sameRows("pg_publication_namespace", PUBLICATION_SCHEMAS_SQL);
            });
            step("catalog/version-and-config-rows", this::shardRowsIdentical);
            step("replica/sqlite-schema-identical", this::replicaSchemaIdentical);
            step("replica/zero-tables-identical", this::replicaZeroTablesIdentical);
            step("replica/data-identical", this::replicaDataIdentical);
        } else {
            System.out.println("COMPAT-INFO catalog/replica comparisons skipped: a setup failed");
        }

        // 2a. zero-cache first, then ZRM on the same upstream; both stream.
        zeroFirst();
        // 2b. ZRM first, then zero-cache on the same upstream; both stream.
        zrmFirst();
        // 3. zero-cache serving from the replica file ZRM's initial sync wrote.
        replicaFileScenario();
    }

    private void zeroFirst() throws Exception {
        ZeroCache zc = new ZeroCache("zero-first", ZERO_FIRST, work.resolve("zero-first-zc.db"));
        Path zrmFile = work.resolve("zero-first-zrm.db");
        try {
            if (!step("zero-first/zero-cache-sets-up", zc::start)) {
                return;
            }
            String zcSlot = scalar(ZERO_FIRST, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots");
            String dumpBefore = normalizedDump(ZERO_FIRST);
            List<String> replicasBefore = strings(ZERO_FIRST, REPLICAS_SQL);
            boolean zrmOk = step("zero-first/zrm-initializes", () -> {
                ReplicaBootstrap.Result r = zrmInitialize(ZERO_FIRST, zrmFile);
                String dumpAfter = normalizedDump(ZERO_FIRST);
                expect(dumpBefore.equals(dumpAfter), "ZRM changed the upstream catalog zero-cache set up:\n"
                        + diff(dumpBefore, dumpAfter));
                expect(strings(ZERO_FIRST, VERSION_SQL).equals(List.of("23,23,1")), "versionHistory "
                        + strings(ZERO_FIRST, VERSION_SQL));
                expect(r.subscriptionState().publications().equals(List.of("_zero_metadata_0", "_zero_public_0")),
                        "ZRM subscribed to " + r.subscriptionState().publications());
                List<String> replicasAfter = strings(ZERO_FIRST, REPLICAS_SQL);
                expect(replicasAfter.containsAll(replicasBefore) && replicasAfter.size() == replicasBefore.size() + 1,
                        "replica rows before " + replicasBefore + ", after " + replicasAfter);
                expect(!zcSlot.contains(r.upstreamReplica().slot()), "ZRM reused slot " + r.upstreamReplica().slot());
                expect(strings(ZERO_FIRST, "SELECT slot_name || ':' || active FROM pg_replication_slots WHERE slot_name = '"
                        + zcSlot + "'").equals(List.of(zcSlot + ":true")), "zero-cache's slot " + zcSlot
                        + " is no longer active");
                System.out.println("COMPAT-INFO zero-first: zero-cache slot " + zcSlot + ", ZRM slot "
                        + r.upstreamReplica().slot() + "; replicas " + replicasAfter);
            });
            if (zrmOk) {
                step("zero-first/both-stream-a-write", () -> {
                    try (ZrmStream zrm = new ZrmStream(ZERO_FIRST, zrmFile)) {
                        bothStream(ZERO_FIRST, zrm, 100);
                    }
                });
                // Upstream's startStream hands the shard over to the newest replica: it deletes
                // replica rows of lower rank and drops their slots once inactive (see zrm-first,
                // where zero-cache does this to ZRM). ZRM's PgChangeSource does not (yet).
                List<String> left = strings(ZERO_FIRST, REPLICAS_SQL);
                if (left.size() > 1) {
                    System.out.println("COMPAT-GAP zero-first/zrm-hands-over: after ZRM (the newer replica) streamed,"
                            + " zero-cache's older replica row and slot " + zcSlot + " are still there " + left
                            + "; zero-cache 1.8 would have deleted them (dropOldReplicasAndSlots)");
                }
            }
        } finally {
            if (step("zero-first/zero-cache-stops", zc::stop)) {
                step("zero-first/zero-cache-log-clean", () -> assertClean(zc));
            }
        }
    }

    private void zrmFirst() throws Exception {
        Path zrmFile = work.resolve("zrm-first-zrm.db");
        if (!step("zrm-first/zrm-sets-up", () -> zrmInitialize(ZRM_FIRST, zrmFile))) {
            return;
        }
        String dumpBefore = normalizedDump(ZRM_FIRST);
        List<String> replicasBefore = strings(ZRM_FIRST, REPLICAS_SQL);
        String zrmSlot = scalar(ZRM_FIRST, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots");
        String zrmVersion = scalar(ZRM_FIRST, "SELECT version FROM \"" + SHARD + "\".replicas");
        ZeroCache zc = new ZeroCache("zrm-first", ZRM_FIRST, work.resolve("zrm-first-zc.db"));
        ZrmStream zrm = null;
        try {
            zrm = new ZrmStream(ZRM_FIRST, zrmFile);
            boolean started = step("zrm-first/zero-cache-starts", () -> {
                zc.start();
                expect(zc.ranInitialSync(), "zero-cache did not initial-sync its own (empty) replica");
                String dumpAfter = normalizedDump(ZRM_FIRST);
                expect(dumpBefore.equals(dumpAfter), "zero-cache changed the upstream catalog ZRM set up:\n"
                        + diff(dumpBefore, dumpAfter));
                expect(strings(ZRM_FIRST, VERSION_SQL).equals(List.of("23,23,1")), "versionHistory "
                        + strings(ZRM_FIRST, VERSION_SQL));
                expect(zc.log().contains("Running upstream-shard-" + APP + " at schema v23")
                        && !zc.log().contains("Migrating schema upstream-shard"), "zero-cache migrated ZRM's shard");
                List<String> slots = strings(ZRM_FIRST, "SELECT slot_name || ':' || active FROM pg_replication_slots"
                        + " ORDER BY 1");
                expect(slots.equals(List.of(zrmSlot + ":true", APP + "_" + SHARD_NUM + "_b:true")), "slots " + slots);
                System.out.println("COMPAT-INFO zrm-first: replicas before " + replicasBefore + ", after zero-cache's"
                        + " start " + strings(ZRM_FIRST, REPLICAS_SQL) + "; slots " + slots
                        + "; zero-cache's shard log " + zc.linesMatching("upstream-shard", 150));
            });
            if (started) {
                final ZrmStream open = zrm;
                step("zrm-first/both-stream-a-write", () -> bothStream(ZRM_FIRST, open, 200));
                step("zrm-first/zero-cache-takes-over", () -> {
                    // zero-cache, the newer replica, deleted ZRM's older replica row (upstream's
                    // handoff); ZRM's slot survives while ZRM streams and is dropped once inactive.
                    expect(!strings(ZRM_FIRST, REPLICAS_SQL).contains(zrmSlot + " " + zrmVersion),
                            "ZRM's replica row was not handed over: " + strings(ZRM_FIRST, REPLICAS_SQL));
                    open.close();
                    try {
                        zrmInitialize(ZRM_FIRST, zrmFile);
                        throw new CheckFailed("ZRM re-initialized on a replica that zero-cache took over");
                    } catch (org.zrm.changesource.AutoResetException expected) {
                        expect(expected.getMessage().equals("No replication slot for replica at version " + zrmVersion),
                                "unexpected reset message: " + expected.getMessage());
                        System.out.println("COMPAT-INFO zrm-first: ZRM restarting after the takeover: AutoReset \""
                                + expected.getMessage() + "\"");
                    }
                });
            }
        } finally {
            if (zrm != null) {
                zrm.close();
            }
            if (step("zrm-first/zero-cache-stops", zc::stop)) {
                step("zrm-first/zero-cache-log-clean", () -> assertClean(zc));
            }
        }
    }

    private void replicaFileScenario() throws Exception {
        Path file = work.resolve("replica-file-zrm.db");
        String[] version = new String[1];
        if (!step("replica-file/zrm-initial-sync", () -> {
            version[0] = zrmInitialize(REPLICA_FILE, file).subscriptionState().replicaVersion();
        })) {
            return;
        }
        String schemaBefore = String.join("\n", zeroSqlite(file, SQLITE_MASTER_SQL));
        String slots = scalar(REPLICA_FILE, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots");
        // One sync worker: a replication manager alone never applies changes to its replica (its
        // view-syncers' replicator does), and a view-syncer is what reads the replica's tables.
        ZeroCache zc = new ZeroCache("replica-file", REPLICA_FILE, file, Map.of("ZERO_NUM_SYNC_WORKERS", "1"));
        try {
            boolean started = step("replica-file/zero-cache-accepts-zrm-replica", () -> {
                zc.start();
                expect(!zc.ranInitialSync(), "zero-cache re-synced instead of using ZRM's replica; see " + zc.logFile);
                expect(zc.log().contains(" from " + version[0] + " (replicaVersion: " + version[0] + ")"),
                        "zero-cache did not start ZRM's slot from ZRM's replica version " + version[0] + "; see "
                                + zc.logFile);
                expect(slots.equals(scalar(REPLICA_FILE, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots")),
                        "slots changed: " + slots + " -> "
                                + scalar(REPLICA_FILE, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots"));
                expect(scalar(REPLICA_FILE, "SELECT active FROM pg_replication_slots WHERE slot_name = '" + slots + "'")
                        .equals("t"), "zero-cache is not streaming ZRM's slot " + slots);
                expect(scalar(REPLICA_FILE, "SELECT \"replicaVersion\" FROM \"" + SHARD + "/cdc\".\"replicationConfig\"")
                        .equals(version[0]), "zero-cache's change DB is not at ZRM's replica version");
            });
            if (started) {
                step("replica-file/zero-cache-replicates-into-it", () -> {
                    exec(REPLICA_FILE, "INSERT INTO items VALUES (300, 'into-zrm-file', 300)",
                            "UPDATE types SET i4 = 44, jb = '[1]' WHERE id = 'r1'");
                    awaitTrue(() -> query(() -> count(REPLICA_FILE, "SELECT count(*) FROM \"" + SHARD
                            + "/cdc\".\"changeLog\" WHERE change->>'tag' = 'commit'") >= 2), "zero-cache storing the"
                            + " two transactions");
                    List<String> where = zc.linesMatching("serving-replica", 150);
                    // A replication manager keeps its replica current (it is the litestream backup
                    // source): the rows must show up in ZRM's file, typed as zero-cache writes them.
                    awaitTrue(() -> query(() -> zeroSqlite(file, "SELECT quote(id) || '|' || quote(name) || '|'"
                            + " || quote(qty) FROM items WHERE id = 300").equals(List.of("300|'into-zrm-file'|300"))),
                            "zero-cache applying the insert to ZRM's replica file (log: " + where + ")");
                    awaitTrue(() -> query(() -> zeroSqlite(file, "SELECT quote(i4) || '|' || quote(jb) FROM types"
                            + " WHERE id = 'r1'").equals(List.of("44|'[1]'"))), "zero-cache applying the update");
                    String stateVersion = zeroSqlite(file, "SELECT stateVersion FROM \"_zero.replicationState\"").get(0);
                    expect(stateVersion.compareTo(version[0]) > 0, "replicationState.stateVersion " + stateVersion
                            + " did not advance from " + version[0]);
                    System.out.println("COMPAT-INFO replica-file: zero-cache applied 2 upstream transactions to ZRM's"
                            + " replica (stateVersion " + version[0] + " -> " + stateVersion + ")");
                });
            }
        } finally {
            if (step("replica-file/zero-cache-stops", zc::stop)) {
                step("replica-file/zero-cache-log-clean", () -> assertClean(zc));
            }
        }
        step("replica-file/schema-kept", () -> {
            String schemaAfter = String.join("\n", zeroSqlite(file, SQLITE_MASTER_SQL));
            String d = diff(schemaBefore, schemaAfter);
            System.out.println("COMPAT-INFO replica-file: sqlite_master changes by zero-cache (- before, + after): "
                    + (d.isEmpty() ? "none" : "\n" + d));
            expect(!schemaAfter.isEmpty(), "ZRM's replica file has no schema after zero-cache ran");
        });
    }

    // ------------------------------------------------------------------ ZRM

    private ReplicaBootstrap zrmInitializer(String db, Path file) {
        return new ReplicaBootstrap(SHARD_CONFIG, JdbcPgConnector.fromUri(cluster.uri(db)), file,
                InitialSyncOptions.defaults(), Map.of("appID", APP, "hostname", "zrm-compat"));
    }

    private ReplicaBootstrap.Result zrmInitialize(String db, Path file) throws Exception {
        return zrmInitializer(db, file).initialize(false);
    }

    /** A ZRM change source streaming its replica's slot ({@code PgChangeSource.startStream}). */
    private final class ZrmStream implements AutoCloseable {
        final PgChangeSource source;
        final ChangeStream stream;

        ZrmStream(String db, Path zrmFile) throws Exception {
            ReplicaBootstrap init = zrmInitializer(db, zrmFile);
            PgSourceSettings settings = PgSourceSettings.defaults(cluster.uri(db), new ShardId(APP, SHARD_NUM),
                    List.of()).withReplicaFile(zrmFile.toString()).withLagReportIntervalMs(0);
            source = new PgChangeSource(settings, reset -> init.initialize(reset).subscriptionState());
            try {
                SubscriptionState state = source.initialize(false);
                stream = source.startStream(state.watermark(), List.of());
            } catch (Exception e) {
                source.stop();
                throw e;
            }
        }

        @Override
        public void close() {
            stream.close();
            source.stop();
        }
    }

    /**
     * One upstream insert is streamed by ZRM's open stream and stored by the running zero-cache,
     * and both produce the same change.
     */
    private void bothStream(String db, ZrmStream zrm, int id) throws Exception {
        long commitsBefore = count(db, "SELECT count(*) FROM \"" + SHARD + "/cdc\".\"changeLog\" WHERE"
                + " change->>'tag' = 'commit'");
        exec(db, "INSERT INTO items VALUES (" + id + ", 'both-" + id + "', " + id + ")");
        List<String> txn = zrmTransactionWith(zrm.stream, "\"id\":" + id + ",");
        System.out.println("COMPAT-INFO " + db + ": ZRM streamed " + txn);
        awaitTrue(() -> query(() -> count(db, "SELECT count(*) FROM \"" + SHARD + "/cdc\".\"changeLog\""
                + " WHERE change->>'tag' = 'insert' AND change->'new'->>'id' = '" + id + "'") == 1),
                "zero-cache storing insert id " + id);
        String zcInsert = scalar(db, "SELECT change::text FROM \"" + SHARD + "/cdc\".\"changeLog\""
                + " WHERE change->>'tag' = 'insert' AND change->'new'->>'id' = '" + id + "'");
        String zrmInsert = txn.stream().filter(m -> m.startsWith("[\"data\",{\"tag\":\"insert\""))
                .findFirst().orElseThrow();
        String zrmChange = zrmInsert.substring("[\"data\",".length(), zrmInsert.length() - 1);
        expect(zrmChange.equals(codec.encodeChange(codec.decodeChange(zcInsert))), "the insert differs:\n"
                + "  zero-cache " + zcInsert + "\n         ZRM " + zrmChange);
        expect(count(db, "SELECT count(*) FROM \"" + SHARD + "/cdc\".\"changeLog\" WHERE change->>'tag' ="
                + " 'commit'") > commitsBefore, "zero-cache stored no commit");
        System.out.println("COMPAT-INFO " + db + ": zero-cache stored the same insert: " + zcInsert);
    }

    /** The encoded messages of the next transaction whose text contains {@code needle}; acks commits. */
    private List<String> zrmTransactionWith(ChangeStream stream, String needle) throws Exception {
        List<String> txn = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            ChangeStreamMessage m = stream.poll(Duration.ofMillis(500));
            if (m == null || m instanceof ChangeStreamMessage.StatusMessage) {
                continue;
            }
            String text = codec.encode(m);
            if (m instanceof ChangeStreamMessage.BeginMessage) {
                txn.clear();
            }
            txn.add(text);
            if (m instanceof ChangeStreamMessage.CommitMessage c) {
                stream.ack(new ChangeSourceUpstream(c.commit(), c.watermark()));
                if (String.join("", txn).contains(needle)) {
                    return txn;
                }
            }
        }
        throw new CheckFailed("ZRM's stream delivered no transaction containing " + needle + "; last " + txn);
    }

    // ------------------------------------------------------------------ catalog comparison

    private static final String EVENT_TRIGGERS_SQL = "SELECT concat_ws(' | ', evtname, evtevent, evtfoid::regprocedure,"
            + " evtenabled, evttags::text) FROM pg_event_trigger ORDER BY evtname";
    private static final String PUBLICATIONS_SQL = "SELECT concat_ws(' | ', pubname, puballtables, pubinsert, pubupdate,"
            + " pubdelete, pubtruncate, pubviaroot) FROM pg_publication ORDER BY pubname";
    private static final String PUBLICATION_TABLES_SQL = "SELECT concat_ws(' | ', pubname, schemaname, tablename,"
            + " attnames::text, rowfilter) FROM pg_publication_tables ORDER BY 1";
    private static final String PUBLICATION_SCHEMAS_SQL = "SELECT p.pubname || ' | ' || n.nspname FROM"
            + " pg_publication_namespace pn JOIN pg_publication p ON p.oid = pn.pnpubid JOIN pg_namespace n"
            + " ON n.oid = pn.pnnspid ORDER BY 1";
    private static final String VERSION_SQL = "SELECT concat_ws(',', \"dataVersion\", \"schemaVersion\","
            + " \"minSafeVersion\") FROM \"" + SHARD + "\".\"versionHistory\"";
    private static final String REPLICAS_SQL = "SELECT slot || ' ' || version FROM \"" + SHARD + "\".replicas ORDER BY rank";

    /** {@code pg_dump --schema-only} of the whole upstream except the change and CVR databases' schemas. */
    private void catalogDumpIdentical() throws Exception {
        String zc = normalizedDump(ZC_CATALOG);
        String zrm = normalizedDump(ZRM_CATALOG);
        Files.writeString(work.resolve("upstream-zero-cache.sql"), zc);
        Files.writeString(work.resolve("upstream-zrm.sql"), zrm);
        System.out.println("COMPAT-INFO normalized dumps: " + work.resolve("upstream-zero-cache.sql") + ", "
                + work.resolve("upstream-zrm.sql") + " (" + zc.lines().count() + " lines); schemas zero-cache "
                + strings(ZC_CATALOG, SCHEMAS_SQL) + ", ZRM " + strings(ZRM_CATALOG, SCHEMAS_SQL));
        String d = diff(zc, zrm);
        System.out.println("COMPAT-INFO upstream catalog diff (- zero-cache, + ZRM): " + (d.isEmpty() ? "none" : "\n" + d));
        expect(d.isEmpty(), "upstream catalogs differ");
    }

    private static final String SCHEMAS_SQL = "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%'"
            + " AND nspname <> 'information_schema' ORDER BY 1";

    /** versionHistory, shardConfig, permissions and the replica row (modulo ids, versions, contexts). */
    private void shardRowsIdentical() throws Exception {
        sameRows("versionHistory", VERSION_SQL);
        sameRows("shardConfig", "SELECT concat_ws(' | ', publications::text, \"ddlDetection\", lock) FROM \"" + SHARD
                + "\".\"shardConfig\"");
        sameRows("zero.permissions", "SELECT concat_ws(' | ', permissions::text, hash, lock) FROM \"" + APP
                + "\".permissions");
        // Per-replica values (id, version, contexts) differ by nature; the slot name, the initial
        // schema and which context columns are set must not.
        String replicaSql = "SELECT concat_ws(' | ', slot, rank, length(id), length(version),"
                + " \"initialSchema\"::jsonb::text, \"initialSyncContext\" IS NOT NULL, \"subscriberContext\" IS NOT NULL)"
                + " FROM \"" + SHARD + "\".replicas ORDER BY rank";
        // Table, schema and enum-type OIDs are per database (built-in type OIDs stay).
        List<String> zc = strings(ZC_CATALOG, replicaSql).stream().map(ZeroCacheUpstreamCheck::userOids).toList();
        List<String> zrm = strings(ZRM_CATALOG, replicaSql).stream().map(ZeroCacheUpstreamCheck::userOids).toList();
        System.out.println("COMPAT-INFO replicas row context keys: zero-cache " + strings(ZC_CATALOG,
                "SELECT (SELECT array_agg(k ORDER BY k) FROM json_object_keys(\"initialSyncContext\") k)::text || ' / '"
                        + " || coalesce((SELECT array_agg(k ORDER BY k) FROM json_object_keys(\"subscriberContext\") k)::text,"
                        + " 'null') FROM \"" + SHARD + "\".replicas") + ", ZRM " + strings(ZRM_CATALOG,
                "SELECT (SELECT array_agg(k ORDER BY k) FROM json_object_keys(\"initialSyncContext\") k)::text || ' / '"
                        + " || coalesce((SELECT array_agg(k ORDER BY k) FROM json_object_keys(\"subscriberContext\") k)::text,"
                        + " 'null') FROM \"" + SHARD + "\".replicas"));
        // zero-cache streamed (subscriberContext set); ZRM only initialized. Compare everything else.
        List<String> zcNoSub = zc.stream().map(s -> s.substring(0, s.lastIndexOf(" | "))).toList();
        List<String> zrmNoSub = zrm.stream().map(s -> s.substring(0, s.lastIndexOf(" | "))).toList();
        expect(zcNoSub.equals(zrmNoSub), "replicas rows differ:\n  zero-cache " + zc + "\n         ZRM " + zrm);
    }

    private static String userOids(String json) {
        return json.replaceAll("(\"(?:oid|typeOID|schemaOID)\": )(1[6-9]\\d{3}|[2-9]\\d{4}|\\d{6,})", "$1<user oid>");
    }

    private void sameRows(String what, String sql) throws Exception {
        List<String> zc = strings(ZC_CATALOG, sql);
        List<String> zrm = strings(ZRM_CATALOG, sql);
        expect(!zc.isEmpty(), what + ": zero-cache has no rows");
        expect(zc.equals(zrm), what + " differ:\n  zero-cache " + zc + "\n         ZRM " + zrm);
    }

    private String normalizedDump(String db) throws IOException, InterruptedException {
        return normalizedSchemaDump(db, "-N", "\"" + SHARD + "/cdc\"", "-N", "\"" + SHARD + "/cvr\"");
    }

    // ------------------------------------------------------------------ replica file comparison

    private Path zcCatalogFile() {
        return work.resolve("zc-catalog.db");
    }

    private Path zrmCatalogFile() {
        return work.resolve("zrm-catalog.db");
    }

    private void replicaSchemaIdentical() throws Exception {
        List<String> zc = normalizeVersion(sqliteSchema(zcCatalogFile()), zcCatalogFile());
        List<String> zrm = normalizeVersion(sqliteSchema(zrmCatalogFile()), zrmCatalogFile());
        Files.write(work.resolve("replica-zero-cache.schema"), zc);
        Files.write(work.resolve("replica-zrm.schema"), zrm);
        String d = diff(String.join("\n", zc), String.join("\n", zrm));
        System.out.println("COMPAT-INFO replica sqlite_master (" + zc.size() + " objects) diff (- zero-cache, + ZRM): "
                + (d.isEmpty() ? "none" : "\n" + d));
        expect(d.isEmpty(), "replica schemas differ");
        List<String> zcCols = sqliteColumns(zcCatalogFile());
        List<String> zrmCols = sqliteColumns(zrmCatalogFile());
        zcCols = normalizeVersion(zcCols, zcCatalogFile());
        zrmCols = normalizeVersion(zrmCols, zrmCatalogFile());
        expect(zcCols.equals(zrmCols), "pragma table_xinfo differs:\n" + diff(String.join("\n", zcCols),
                String.join("\n", zrmCols)));
    }

    private void replicaZeroTablesIdentical() throws Exception {
        String zcVersion = sqliteRows(zcCatalogFile(), "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0);
        String zrmVersion = sqliteRows(zrmCatalogFile(), "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0);
        List<String> tables = sqliteRows(zcCatalogFile(), "SELECT name FROM sqlite_master WHERE type = 'table' AND name"
                + " LIKE '\\_zero.%' ESCAPE '\\' ORDER BY name");
        List<String> differences = new ArrayList<>();
        for (String t : tables) {
            String sql = "SELECT * FROM \"" + t + "\"";
            List<String> zc = normalizeZeroRows(t, sqliteQuoted(zcCatalogFile(), sql), zcVersion);
            List<String> zrm = normalizeZeroRows(t, sqliteQuoted(zrmCatalogFile(), sql), zrmVersion);
            String d = diff(String.join("\n", zc), String.join("\n", zrm));
            System.out.println("COMPAT-INFO replica \"" + t + "\": " + zc.size() + " row(s), "
                    + (d.isEmpty() ? "identical" : "diff (- zero-cache, + ZRM):\n" + d));
            if (!d.isEmpty()) {
                differences.add(t);
            }
        }
        expect(differences.isEmpty(), "_zero tables differ: " + differences);
    }

    /**
     * Replaces each side's replica version by {@code <replicaVersion>} and values that depend on
     * the moment or host ({@code writeTimeMs}, {@code runtimeEvents.timestamp}, the
     * {@code initialSyncContext}, which is the server context of whoever synced).
     */
    private static List<String> normalizeZeroRows(String table, List<String> rows, String replicaVersion) {
        List<String> out = new ArrayList<>();
        for (String r : rows) {
            String n = r.replace("'" + replicaVersion + "'", "'<replicaVersion>'");
            if (table.equals("_zero.replicationState")) {
                n = n.replaceAll("\\|[0-9.]+\\|", "|<writeTimeMs>|");
            } else if (table.equals("_zero.runtimeEvents")) {
                n = n.replaceAll("'\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d'", "<timestamp>");
            } else if (table.equals("_zero.replicationConfig")) {
                n = n.replaceAll("\\|'\\{.*\\}'\\|", "|<initialSyncContext>|");
            }
            out.add(n);
        }
        return out;
    }

    private void replicaDataIdentical() throws Exception {
        String zcVersion = sqliteRows(zcCatalogFile(), "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0);
        String zrmVersion = sqliteRows(zrmCatalogFile(), "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0);
        List<String> differences = new ArrayList<>();
        for (String t : List.of("items", "types", "uniq")) {
            String sql = "SELECT * FROM \"" + t + "\"";
            List<String> zc = sqliteQuoted(zcCatalogFile(), sql).stream()
                    .map(r -> r.replace("'" + zcVersion + "'", "'<v>'")).sorted().toList();
            List<String> zrm = sqliteQuoted(zrmCatalogFile(), sql).stream()
                    .map(r -> r.replace("'" + zrmVersion + "'", "'<v>'")).sorted().toList();
            if (!zc.equals(zrm)) {
                differences.add(t + ":\n" + diff(String.join("\n", zc), String.join("\n", zrm)));
            }
        }
        expect(differences.isEmpty(), "replica rows differ (- zero-cache, + ZRM): " + differences);
    }

    /** sqlite_master (type, name, table, sql) in creation order: what {@code sqlite3 .schema} prints. */
    private static final String SQLITE_MASTER_SQL = "SELECT type || ' ' || name || ' ON ' || tbl_name || ': '"
            + " || coalesce(sql, '<auto>') FROM sqlite_master ORDER BY rowid";

    private static List<String> sqliteSchema(Path file) throws SQLException {
        return sqliteRows(file, SQLITE_MASTER_SQL);
    }

    /**
     * Rows of a one-column query read with zero-cache's own SQLite ({@code @rocicorp/zero-sqlite3},
     * read-only): a serving replica is in {@code wal2} journal mode, which stock SQLite cannot open.
     */
    private List<String> zeroSqlite(Path file, String sql) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(nodeBin.resolve("node").toString(), "-e",
                "const D = require('@rocicorp/zero-sqlite3');"
                        + "const db = new D(process.argv[1], {readonly: true, fileMustExist: true});"
                        + "for (const r of db.prepare(process.argv[2]).raw().all()) console.log(JSON.stringify(r[0]));",
                file.toString(), sql).directory(zeroDir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new CheckFailed("reading " + file + " with zero-sqlite3 failed: " + out);
        }
        List<String> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isEmpty()) {
                Object v = codec.decodeValue(line);
                rows.add(v == null ? null : v.toString());
            }
        }
        return rows;
    }

    /** The initial {@code _0_version} default is the replica version, which differs per sync. */
    private static List<String> normalizeVersion(List<String> lines, Path file) throws SQLException {
        String v = sqliteRows(file, "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0);
        return lines.stream().map(l -> l.replace("DEFAULT '" + v + "'", "DEFAULT '<replicaVersion>'")).toList();
    }

    private static List<String> sqliteColumns(Path file) throws SQLException {
        List<String> out = new ArrayList<>();
        for (String t : sqliteRows(file, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
            out.addAll(sqliteRows(file, "SELECT '" + t.replace("'", "''") + "' || ' ' || cid || ' ' || name || ' '"
                    + " || type || ' ' || \"notnull\" || ' DEFAULT ' || coalesce(dflt_value, 'null') || ' ' || pk || ' ' || hidden"
                    + " FROM pragma_table_xinfo('" + t.replace("'", "''") + "')"));
        }
        return out;
    }

    /** Every row of {@code sql} with each column as SQLite's {@code quote()} renders it, joined by {@code |}. */
    private static List<String> sqliteQuoted(Path file, String sql) throws SQLException {
        List<String> cols = new ArrayList<>();
        try (Connection c = sqlite(file); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql + " LIMIT 0")) {
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                cols.add("quote(\"" + rs.getMetaData().getColumnName(i) + "\")");
            }
        }
        return sqliteRows(file, "SELECT " + String.join(" || '|' || ", cols) + " FROM (" + sql + ") ORDER BY 1");
    }

    private static List<String> sqliteRows(Path file, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = sqlite(file); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static Connection sqlite(Path file) throws SQLException {
        Properties p = new Properties();
        p.setProperty("open_mode", "1"); // SQLITE_OPEN_READONLY: never change a file zero-cache may hold
        Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:file:" + file.toAbsolutePath() + "?mode=ro", p);
        if (c == null) {
            throw new SQLException("sqlite-jdbc did not accept " + file);
        }
        return c;
    }

    // ------------------------------------------------------------------ Postgres and zero-cache helpers

    private long count(String db, String sql) throws SQLException {
        return Long.parseLong(scalar(db, sql));
    }

    /** Fails on error-level lines, resets, or a dropped shard. */
    private static void assertClean(ZeroCache zc) {
        zc.assertNoLogLines(line -> commonProblem(line) || line.contains("Dropping shard"));
    }
}

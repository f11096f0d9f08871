import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.zrm.changelog.CatchupFrames;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.watermark.Watermarks;

/**
 * Schema changes (issue 10) between the real ZRM runtime and the real zero-cache 1.8.0, on one
 * upstream database that both replicate, each as its own shard of app {@code zero}: zero-cache
 * (replication manager) as shard 0 with change log {@code "zero_0/cdc"}, ZRM as shard 1 with
 * {@code "zero_1/cdc"}. Both shards' event triggers fire on every upstream DDL statement, so both
 * change sources see the same transactions and must store the same rows.
 *
 * <ul>
 *   <li>{@code change-log/*}: for a workload that mixes DML and DDL (create, add column with and
 *       without default, rename column and table, not-null, indexes, drop column, drop table,
 *       several DDL statements and DML in one transaction, a {@code COMMENT} that changes
 *       nothing), both change logs hold identical rows: watermarks, positions, precommits and
 *       change JSON. The one normalization: publication names carry the shard number.</li>
 *   <li>{@code view-syncer/*}: a zero-cache view-syncer of shard 1, started on a copy of ZRM's
 *       replica with {@code ZERO_CHANGE_STREAMER_URI} = ZRM, follows the migrations: its replica
 *       (written by zero-cache's own replicator) ends with the same schema, column metadata and
 *       rows as ZRM's replica.</li>
 *   <li>{@code zrm-to-zero/*}: ZRM stops; a zero-cache replication manager takes over shard 1 on
 *       a copy of ZRM's replica, resumes after ZRM's last watermark without re-syncing, and serves
 *       ZRM's schema-change rows to a subscriber byte for byte.</li>
 *   <li>{@code zero-to-zrm/*}: zero-cache (shard 0) stops; a ZRM runtime takes over shard 0 on a
 *       copy of zero-cache's replica, serves zero-cache's schema-change rows byte for byte, and
 *       its replicator applies them (zero-cache's replication manager never applied them to its
 *       own file) to the same replica as ZRM's shard-1 replica.</li>
 *   <li>{@code after-takeover/*}: more DDL and DML, now stored by zero-cache for shard 1 and by
 *       ZRM for shard 0: the rows are identical again, and the replicas follow.</li>
 * </ul>
 *
 * <p>Run through {@code zero-cache-ddl.sh}; see {@code README.md} next to this file. ZRM runs as
 * users run it ({@code zrm-launcher.jar run}), so the runtime must be built.
 */
public final class ZeroCacheDdlCheck extends CompatSupport {

    private static final String DB = "ddl_upstream";
    private static final int ZRM_SHARD = 1;

    private static final String[] FIXTURE = {
        "CREATE TABLE items (id int8 PRIMARY KEY, name text, qty int4)",
        "INSERT INTO items VALUES (1, 'one', 1), (2, 'two', 2)",
    };

    /** Upstream transactions between the start and end markers; one inner array per transaction. */
    private static final String[][] WORKLOAD = {
        {"CREATE TABLE t2 (id int4 PRIMARY KEY, a text)", "INSERT INTO t2 VALUES (1, 'x'), (2, 'y')"},
        {"ALTER TABLE t2 ADD COLUMN b int4 DEFAULT 7"},
        {"INSERT INTO t2 (id, a) VALUES (3, 'z')", "UPDATE items SET qty = 5 WHERE id = 1"},
        {"ALTER TABLE t2 ADD COLUMN c text"},
        {"ALTER TABLE t2 RENAME COLUMN a TO a2", "UPDATE t2 SET a2 = 'xx', c = 'cc' WHERE id = 1"},
        {"ALTER TABLE t2 ALTER COLUMN b SET NOT NULL"},
        {"CREATE INDEX t2_a2_b ON t2 (a2 DESC, b)"},
        {"CREATE UNIQUE INDEX t2_c ON t2 (c)"},
        {"ALTER TABLE t2 RENAME TO t3"},
        {"ALTER TABLE t3 ADD COLUMN d text DEFAULT 'dv'", "ALTER TABLE t3 ADD COLUMN e int8",
            "INSERT INTO t3 VALUES (4, 'w', 8, 'c4', 'd4', 9007199254740993)"},
        {"DROP INDEX t2_c"},
        {"ALTER TABLE t3 DROP COLUMN c"},
        {"ALTER TABLE items ADD COLUMN flag bool DEFAULT true"},
        {"CREATE TABLE t4 (k text PRIMARY KEY, v jsonb)", "INSERT INTO t4 VALUES ('a', '{\"x\": 1}')"},
        {"COMMENT ON TABLE t3 IS 'changes nothing the replica holds'"},
        {"DELETE FROM t3 WHERE id = 2", "DROP TABLE t4"},
        {"ALTER TABLE t3 DROP COLUMN d", "INSERT INTO t3 (id, a2, b) VALUES (5, 'v', 1)"},
    };

    /** More transactions once each shard has changed hands. */
    private static final String[][] AFTER_TAKEOVER = {
        {"ALTER TABLE t3 ADD COLUMN f text DEFAULT 'after'", "INSERT INTO t3 (id, a2, b) VALUES (6, 'after', 2)"},
        {"CREATE TABLE t5 (id int4 PRIMARY KEY, g text)", "INSERT INTO t5 VALUES (1, 'g')"},
        {"ALTER TABLE t3 RENAME COLUMN e TO e2", "UPDATE t3 SET e2 = -1 WHERE id = 1"},
    };

    /**
     * Columns whose default zero-cache 1.8.0 cannot map to SQLite ({@code 'vv'::character varying}
     * and {@code now()}): it announces them with {@code backfill} and a {@code null} default, then
     * streams their values as {@code backfill} changes in transactions of their own (watermark
     * {@code <previous>.01}), ending with {@code backfill-completed}. Run last and compared on
     * their own, so that a difference here does not hide the results above.
     */
    private static final String[][] BACKFILL = {
        {"ALTER TABLE t3 ADD COLUMN v varchar(10) DEFAULT 'vv'"},
        {"ALTER TABLE t3 ADD COLUMN ts timestamptz DEFAULT now()"},
    };

    /**
     * ZRM's backup monitor confirms its replica file after 30 s and the change streamer then purges
     * the change log up to it; the catch-up checks below start at the first marker, so purging
     * (which the change-DB check covers) is kept out of this one.
     */
    private static final Map<String, Map<String, String>> NO_PURGE = Map.of("org.zrm.backup.replica",
            Map.of("replica.monitor.initialDelayMs", "3600000"));

    /**
     * Every row each shard's storer inserts into its change log, recorded by a trigger, so that
     * the comparisons do not depend on what either side has purged since.
     */
    private static final String[] AUDIT = {
        "CREATE SCHEMA compat_audit",
        "CREATE TABLE compat_audit.change_log (shard int NOT NULL, watermark text NOT NULL, pos int8 NOT NULL,"
                + " change text NOT NULL, precommit text)",
        "CREATE FUNCTION compat_audit.record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " INSERT INTO compat_audit.change_log VALUES (TG_ARGV[0]::int, NEW.watermark, NEW.pos,"
                + " NEW.change::text, NEW.precommit); RETURN NULL; END $$",
        "CREATE TRIGGER compat_audit AFTER INSERT ON \"zero_0/cdc\".\"changeLog\" FOR EACH ROW"
                + " EXECUTE FUNCTION compat_audit.record('0')",
        "CREATE TRIGGER compat_audit AFTER INSERT ON \"zero_1/cdc\".\"changeLog\" FOR EACH ROW"
                + " EXECUTE FUNCTION compat_audit.record('1')",
    };

    /** Facts one step gathers for later ones. */
    private String startWatermark;
    private String endWatermark;
    private String afterTakeoverEnd;
    private Path zrmShard1Replica;
    private Path viewSyncerReplica;
    private final Map<String, Integer> tagCounts = new TreeMap<>();

    public static void main(String[] args) throws Exception {
        new ZeroCacheDdlCheck().runAndExit();
    }

    @Override
    void checks() throws Exception {
        cluster.createDatabaseIfMissing(DB);
        exec(DB, FIXTURE);
        Path zeroShard0Replica = work.resolve("rm-shard0-zero-cache.db");
        viewSyncerReplica = work.resolve("vs-shard1-zero-cache.db");
        ZeroCache zero0 = new ZeroCache("rm-shard0", DB, zeroShard0Replica);
        ZrmRuntime zrm1 = new ZrmRuntime("shard1", Map.of("ZERO_UPSTREAM_DB", cluster.uri(DB), "ZERO_CHANGE_DB",
                cluster.uri(DB), "ZERO_SHARD_NUM", String.valueOf(ZRM_SHARD)), NO_PURGE);
        zrmShard1Replica = zrm1.stateDir().resolve("zero.db");
        ZeroCache vs = new ZeroCache("view-syncer-shard1", DB, viewSyncerReplica, Map.of(
                "ZERO_SHARD_NUM", String.valueOf(ZRM_SHARD), "ZERO_PORT", String.valueOf(zeroPort + 10),
                "ZERO_CHANGE_STREAMER_URI", "http://127.0.0.1:" + (zrm1.port + 1), "ZERO_NUM_SYNC_WORKERS", "1"));
        boolean phase1 = false;
        try {
            phase1 = step("setup/zero-cache-shard0-streams", zero0::start)
                    && step("setup/zrm-shard1-streams", () -> {
                        zrm1.start();
                        awaitStreaming(zrm1);
                        System.out.println("COMPAT-INFO setup: replica versions shard 0 " + replicaVersion(0)
                                + ", shard 1 " + replicaVersion(ZRM_SHARD));
                    })
                    && step("view-syncer/starts-on-zrm-replica", () -> startViewSyncer(vs, zrm1))
                    && step("workload/both-store", this::runWorkload);
            if (phase1) {
                step("change-log/ddl-rows-identical", () -> sameRows(startWatermark, endWatermark, 0, ZRM_SHARD));
                step("view-syncer/follows-migrations", () -> viewSyncerFollows(zrm1));
            }
        } finally {
            if (step("view-syncer/stops", vs::stop)) {
                step("view-syncer/log-clean", () -> assertZeroClean(vs));
            }
        }
        if (!phase1) {
            System.out.println("COMPAT-INFO takeover checks skipped: an earlier check failed");
            stopQuietly(zrm1, zero0);
            return;
        }

        // Shard 1 changes hands ZRM -> zero-cache, shard 0 zero-cache -> ZRM.
        boolean zrmStopped = step("zrm-to-zero/zrm-stops", zrm1::stop);
        if (zrmStopped) {
            step("zrm-to-zero/zrm-log-clean", () -> assertZrmClean(zrm1));
        }
        boolean zeroStopped = step("zero-to-zrm/zero-cache-stops", zero0::stop);
        if (zeroStopped) {
            step("zero-to-zrm/zero-cache-log-clean", () -> assertZeroClean(zero0));
        }
        if (!zrmStopped || !zeroStopped) {
            return;
        }
        Path zeroShard1Replica = work.resolve("rm-shard1-zero-cache.db");
        ZeroCache zero1 = new ZeroCache("rm-shard1-takeover", DB, zeroShard1Replica, Map.of(
                "ZERO_SHARD_NUM", String.valueOf(ZRM_SHARD), "ZERO_PORT", String.valueOf(zeroPort + 20)));
        ZrmRuntime zrm0 = new ZrmRuntime("shard0-takeover", Map.of("ZERO_UPSTREAM_DB", cluster.uri(DB),
                "ZERO_CHANGE_DB", cluster.uri(DB), "ZERO_SHARD_NUM", "0"), NO_PURGE);
        try {
            boolean zeroOn1 = step("zrm-to-zero/zero-cache-takes-over", () -> {
                replicaBackup(zrmShard1Replica, zeroShard1Replica);
                String last = lastWatermark(ZRM_SHARD);
                zero1.start();
                expect(!zero1.ranInitialSync(), "zero-cache re-synced instead of taking over ZRM's replica and slot");
                expect(zero1.log().contains(" from " + last + " (replicaVersion: " + replicaVersion(ZRM_SHARD) + ")"),
                        "zero-cache did not resume shard 1 at ZRM's last watermark " + last + "; see " + zero1.logFile);
            }) && step("zrm-to-zero/serves-zrm-schema-change-rows", () -> servesStoredRows(zeroPort + 21, ZRM_SHARD));
            boolean zrmOn0 = step("zero-to-zrm/zrm-takes-over", () -> {
                Files.createDirectories(zrm0.stateDir());
                replicaBackup(zeroShard0Replica, zrm0.stateDir().resolve("zero.db"));
                String version = replicaVersion(0);
                zrm0.start();
                awaitStreaming(zrm0);
                String owner = scalar(DB, "SELECT owner FROM " + cdc(0) + ".\"replicationState\"");
                expect(owner != null && !owner.equals(zero0.taskID()), "the change log of shard 0 is still owned by"
                        + " zero-cache's task " + owner);
                expect(version.equals(replicaVersion(0)), "ZRM reset shard 0: replica version " + version + " -> "
                        + replicaVersion(0));
                expect(zrm0.section("replicator").path("replicaVersion").asText().equals(version),
                        "ZRM's replicator is not on zero-cache's replica: " + zrm0.section("replicator"));
            }) && step("zero-to-zrm/serves-zero-cache-schema-change-rows", () -> servesStoredRows(zrm0.port + 1, 0))
                    && step("zero-to-zrm/replicator-applies-zero-cache-rows", () -> {
                        awaitReplicaAt(zrm0.stateDir().resolve("zero.db"), lastWatermark(0));
                        sameReplica(zrm0.stateDir().resolve("zero.db"), 0, zrmShard1Replica, ZRM_SHARD,
                                "ZRM (shard 0, from zero-cache's rows)", "ZRM (shard 1, from its own rows)");
                    });
            if (zeroOn1 && zrmOn0) {
                step("after-takeover/rows-identical", () -> {
                    String from = endWatermark;
                    for (String[] tx : AFTER_TAKEOVER) {
                        execTx(DB, tx);
                    }
                    execTx(DB, "INSERT INTO items (id, name, qty) VALUES (1002, 'end-2', 0)");
                    afterTakeoverEnd = awaitInsertStored(1002);
                    sameRows(from, afterTakeoverEnd, ZRM_SHARD, 0);
                });
                step("after-takeover/zrm-replica-follows", () -> {
                    Path file = zrm0.stateDir().resolve("zero.db");
                    awaitReplicaAt(file, lastWatermark(0));
                    List<List<String>> cols = replicaQuery(file, "SELECT name FROM pragma_table_info('t3') ORDER BY"
                            + " name = '_0_version', cid");
                    expect(cols.toString().equals("[[id], [a2], [b], [e2], [f], [_0_version]]"),
                            "t3 columns in ZRM's replica: " + cols);
                    expect(replicaQuery(file, "SELECT quote(id) || '|' || quote(g) FROM t5").toString().equals(
                            "[[1|'g']]"), "t5 in ZRM's replica: " + replicaQuery(file, "SELECT * FROM t5"));
                });
                step("backfill/announcements-identical", () -> backfill(zrm0));
                takeoverOfPendingBackfill(zero1, zeroShard1Replica);
            }
        } finally {
            if (step("after-takeover/zero-cache-stops", zero1::stop)) {
                step("after-takeover/zero-cache-log-clean", () -> assertZeroClean(zero1));
            }
            if (step("after-takeover/zrm-stops", zrm0::stop)) {
                step("after-takeover/zrm-log-clean", () -> assertZrmClean(zrm0));
            }
        }
    }

    // ------------------------------------------------------------------ scenario steps

    /** Copies ZRM's replica for a view-syncer of shard 1 that streams from ZRM, and starts it. */
    private void startViewSyncer(ZeroCache vs, ZrmRuntime zrm) throws Exception {
        awaitReplicaAt(zrmShard1Replica, lastWatermark(ZRM_SHARD));
        replicaBackup(zrmShard1Replica, viewSyncerReplica);
        String copied = replicaStateVersion(viewSyncerReplica);
        vs.start(log -> log.contains("\"message\":\"zero-cache ready"), "to be ready as a view-syncer");
        expect(!vs.ranInitialSync(), "the view-syncer re-synced instead of using ZRM's replica");
        awaitTrue(() -> query(() -> {
            for (JsonNode s : zrm.section("changestreamer").path("subscribers")) {
                if (s.path("id").asText().startsWith(vs.taskID() + "/serving-replicator-")) {
                    return true;
                }
            }
            return false;
        }), "ZRM's /status to list the view-syncer's serving replicator");
        System.out.println("COMPAT-INFO view-syncer: subscribed to ZRM at the copy's stateVersion " + copied);
    }

    /** The marker insert, the workload, the end marker; both change logs must store all of it. */
    private void runWorkload() throws Exception {
        exec(DB, AUDIT);
        execTx(DB, "INSERT INTO items VALUES (1000, 'start', 0)");
        startWatermark = awaitInsertStored(1000);
        for (String[] tx : WORKLOAD) {
            execTx(DB, tx);
        }
        execTx(DB, "INSERT INTO items (id, name, qty) VALUES (1001, 'end', 0)");
        endWatermark = awaitInsertStored(1001);
        System.out.println("COMPAT-INFO workload: " + WORKLOAD.length + " transactions between " + startWatermark
                + " and " + endWatermark);
    }

    /**
     * The {@link #BACKFILL} columns, now with zero-cache on shard 1 and ZRM on shard 0: both
     * change logs must hold the same rows from the last marker on, backfill transactions
     * included, and ZRM's replica must end with upstream's values in the new columns.
     */
    private void backfill(ZrmRuntime zrm) throws Exception {
        String from = afterTakeoverEnd;
        for (String[] tx : BACKFILL) {
            execTx(DB, tx);
        }
        execTx(DB, "INSERT INTO items (id, name, qty) VALUES (1003, 'end-3', 0)");
        awaitInsertStored(1003);
        // zero-cache's backfill runs after the add-column's transaction, asynchronously.
        String completed = "SELECT count(*) FROM compat_audit.change_log WHERE shard = %d"
                + " AND change::json->>'tag' = 'backfill-completed' AND watermark > '" + from + "'";
        boolean zeroDone = true;
        try {
            awaitTrue(() -> query(() -> scalar(DB, completed.formatted(ZRM_SHARD)).equals("2")),
                    "zero-cache (shard 1) to complete both backfills");
        } catch (CheckFailed e) {
            zeroDone = false;
            System.out.println("COMPAT-INFO backfill: " + e.getMessage());
        }
        if (zeroDone) {
            // zero-cache has finished; ZRM gets another 20 s for whatever it does with the same announcements.
            try {
                awaitTrue(() -> query(() -> scalar(DB, completed.formatted(0)).equals("2")),
                        "ZRM (shard 0) to complete both backfills", java.time.Duration.ofSeconds(20));
            } catch (CheckFailed e) {
                System.out.println("COMPAT-INFO backfill: " + e.getMessage());
            }
        }
        String to = lastWatermark(ZRM_SHARD).compareTo(lastWatermark(0)) > 0 ? lastWatermark(ZRM_SHARD) : lastWatermark(0);
        // The announcements (add-column with backfill) travel in the upstream transactions and must
        // be identical; the backfill transactions of their own are compared when both sides have them.
        List<String> zeroRows = normalizedRows(ZRM_SHARD, from, to);
        List<String> zrmRows = normalizedRows(0, from, to);
        List<String> zeroBackfills = backfillTransactions(zeroRows);
        List<String> zrmBackfills = backfillTransactions(zrmRows);
        List<String> zeroRest = new ArrayList<>(zeroRows);
        zeroRest.removeAll(zeroBackfills);
        List<String> zrmRest = new ArrayList<>(zrmRows);
        zrmRest.removeAll(zrmBackfills);
        sameRows(from, to, ZRM_SHARD, zeroRest, 0, zrmRest);
        Path file = zrm.stateDir().resolve("zero.db");
        awaitReplicaAt(file, lastWatermark(0));
        List<List<String>> upstream = pgRows(DB, "SELECT id::text, v FROM t3 ORDER BY id");
        List<List<String>> replica = replicaQuery(file, "SELECT CAST(id AS TEXT), v FROM t3 ORDER BY id");
        if (zrmBackfills.isEmpty() && !zeroBackfills.isEmpty()) {
            System.out.println("COMPAT-GAP backfill/zrm-streams-no-backfill: zero-cache streamed "
                    + zeroBackfills.size() + " rows of backfill transactions for the announced columns; ZRM none,"
                    + " so ZRM's replica keeps t3.v = " + replica + " where upstream has " + upstream
                    + ". zero-cache's backfill rows:\n  " + String.join("\n  ", zeroBackfills));
            return;
        }
        // Each side reads the columns from snapshot slots of its own, taken when its backfill runs.
        // So the snapshot watermarks, the order of the backfills (upstream picks one at random), the
        // stream positions they reserve and whether backfill-completed shares a transaction with
        // the rows (it waits until the stream has reached the snapshot) are per-run values. What
        // must match: per table and columns, the rows and totals streamed and one completion, and
        // every backfill transaction being a stringified-JSON, skipAck one.
        Map<String, List<String>> zeroSummary = backfillSummary("zero-cache", zeroBackfills);
        Map<String, List<String>> zrmSummary = backfillSummary("ZRM", zrmBackfills);
        expect(zeroSummary.equals(zrmSummary), "backfills differ: zero-cache " + zeroSummary + ", ZRM " + zrmSummary);
        System.out.println("COMPAT-INFO backfill: both streamed " + zrmSummary);
        expect(upstream.equals(replica), "t3.v in ZRM's replica " + replica + ", upstream " + upstream);
    }

    /** Rows of the table whose backfill zero-cache leaves pending when it crashes. */
    private static final int PENDING_BACKFILL_ROWS = 200_000;

    /**
     * A change DB that zero-cache left with a pending backfill request, taken over by ZRM: zero-cache
     * (shard 1) announces an {@code ADD COLUMN … DEFAULT now()} of a 200,000-row table and is killed
     * (SIGKILL) before its backfill completes; the request stays in its {@code backfilling} table.
     * A ZRM runtime then starts on a copy of zero-cache's replica and the same change DB: it resumes
     * the request, stores {@code backfill-completed}, and its replica holds the column for every row.
     */
    private void takeoverOfPendingBackfill(ZeroCache zero1, Path zeroShard1Replica) throws Exception {
        ZrmRuntime zrm1b = new ZrmRuntime("shard1-backfill-takeover", Map.of("ZERO_UPSTREAM_DB", cluster.uri(DB),
                "ZERO_CHANGE_DB", cluster.uri(DB), "ZERO_SHARD_NUM", String.valueOf(ZRM_SHARD)), NO_PURGE);
        String[] killedAt = new String[1];
        boolean pending = step("backfill-takeover/zero-cache-leaves-a-pending-request", () -> {
            execTx(DB, "CREATE TABLE bft (id int PRIMARY KEY, v int)");
            execTx(DB, "INSERT INTO bft SELECT g, g FROM generate_series(1, " + PENDING_BACKFILL_ROWS + ") g");
            execTx(DB, "INSERT INTO items (id, name, qty) VALUES (1004, 'before-pending', 0)");
            awaitInsertStored(1004);
            execTx(DB, "ALTER TABLE bft ADD COLUMN w timestamptz DEFAULT now()");
            String announced = "SELECT count(*) FROM compat_audit.change_log WHERE shard = " + ZRM_SHARD
                    + " AND change::json->>'tag' = 'add-column' AND change::json->'table'->>'name' = 'bft'";
            awaitTrue(() -> query(() -> scalar(DB, announced).equals("1")), "zero-cache to store the announcement",
                    java.time.Duration.ofSeconds(30));
            zero1.crash();
            killedAt[0] = lastWatermark(ZRM_SHARD);
            String completed = scalar(DB, "SELECT count(*) FROM compat_audit.change_log WHERE shard = " + ZRM_SHARD
                    + " AND change::json->>'tag' = 'backfill-completed' AND change::json->'relation'->>'name' = 'bft'");
            expect(completed.equals("0"), "zero-cache completed the backfill before it was killed; raise "
                    + "PENDING_BACKFILL_ROWS");
            String requests = scalar(DB, "SELECT count(*) FROM " + cdc(ZRM_SHARD) + ".\"backfilling\" WHERE \"table\" = 'bft'");
            expect(!requests.equals("0"), "no pending backfill request for bft in " + cdc(ZRM_SHARD));
            System.out.println("COMPAT-INFO backfill-takeover: zero-cache killed at " + killedAt[0] + " with "
                    + requests + " pending request row(s) for bft");
        });
        if (!pending) {
            return;
        }
        try {
            step("backfill-takeover/zrm-completes-the-request", () -> {
                Files.createDirectories(zrm1b.stateDir());
                replicaBackup(zeroShard1Replica, zrm1b.stateDir().resolve("zero.db"));
                zrm1b.start();
                awaitStreaming(zrm1b);
                String done = "SELECT count(*) FROM compat_audit.change_log WHERE shard = " + ZRM_SHARD
                        + " AND change::json->>'tag' = 'backfill-completed' AND change::json->'relation'->>'name' = 'bft'";
                awaitTrue(() -> query(() -> scalar(DB, done).equals("1")), "ZRM to complete zero-cache's backfill of bft",
                        java.time.Duration.ofSeconds(120));
                String owner = scalar(DB, "SELECT owner FROM " + cdc(ZRM_SHARD) + ".\"replicationState\"");
                expect(owner != null && !owner.equals(zero1.taskID()), "shard 1 is still owned by zero-cache's task");
                expect(scalar(DB, "SELECT count(*) FROM " + cdc(ZRM_SHARD) + ".\"backfilling\" WHERE \"table\" = 'bft'")
                        .equals("0"), "the request is still pending after backfill-completed");
                Path file = zrm1b.stateDir().resolve("zero.db");
                awaitReplicaAt(file, lastWatermark(ZRM_SHARD));
                List<List<String>> filled = replicaQuery(file, "SELECT CAST(count(*) AS TEXT) FROM bft WHERE w IS NOT NULL");
                expect(filled.toString().equals("[[" + PENDING_BACKFILL_ROWS + "]]"),
                        "rows of bft with w in ZRM's replica: " + filled);
                System.out.println("COMPAT-INFO backfill-takeover: ZRM completed the request; its replica has w for "
                        + PENDING_BACKFILL_ROWS + " rows");
            });
        } finally {
            if (step("backfill-takeover/zrm-stops", zrm1b::stop)) {
                step("backfill-takeover/zrm-log-clean", () -> assertZrmClean(zrm1b));
            }
        }
    }

    /**
     * Per {@code table[columns]}: the rows of every {@code backfill} change (sorted), the final
     * status and the number of {@code backfill-completed} changes. Fails on a backfill transaction
     * whose begin is not {@code {"tag":"begin","json":"s","skipAck":true}}.
     */
    private static Map<String, List<String>> backfillSummary(String side, List<String> rows) throws Exception {
        Map<String, List<String>> rowsByKey = new java.util.TreeMap<>();
        Map<String, String> lastStatus = new java.util.TreeMap<>();
        Map<String, Integer> completions = new java.util.TreeMap<>();
        for (String row : rows) {
            String watermark = row.substring(0, row.indexOf(' '));
            JsonNode change = JSON.readTree(row.substring(row.indexOf('{')));
            String tag = change.path("tag").asText();
            if (tag.equals("begin")) {
                expect(change.path("json").asText().equals("s") && change.path("skipAck").asBoolean(),
                        side + "'s backfill transaction " + watermark + " begins with " + change);
                continue;
            }
            if (!tag.equals("backfill") && !tag.equals("backfill-completed")) {
                continue;
            }
            String key = change.path("relation").path("schema").asText() + "." + change.path("relation").path("name")
                    .asText() + change.path("columns");
            lastStatus.put(key, change.path("status").toString());
            if (tag.equals("backfill")) {
                for (JsonNode r : change.path("rowValues")) {
                    rowsByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(r.toString());
                }
            } else {
                completions.merge(key, 1, Integer::sum);
                System.out.println("COMPAT-INFO backfill: " + side + " completed " + key + " in transaction "
                        + watermark + " from a snapshot at " + change.path("watermark").asText());
            }
        }
        Map<String, List<String>> out = new java.util.TreeMap<>();
        for (String key : lastStatus.keySet()) {
            List<String> r = new ArrayList<>(rowsByKey.getOrDefault(key, List.of()));
            r.sort(null);
            out.put(key, List.of(String.join(",", r), "status " + lastStatus.get(key),
                    "completed " + completions.getOrDefault(key, 0)));
        }
        return out;
    }

    /**
     * The rows of the transactions that hold nothing but {@code backfill} and
     * {@code backfill-completed} changes (the ones a change source adds after an announcement).
     */
    private static List<String> backfillTransactions(List<String> rows) throws Exception {
        Map<String, List<String>> byWatermark = new java.util.LinkedHashMap<>();
        Map<String, Boolean> onlyBackfill = new java.util.HashMap<>();
        for (String row : rows) {
            String watermark = row.substring(0, row.indexOf(' '));
            String tag = JSON.readTree(row.substring(row.indexOf('{'))).path("tag").asText();
            byWatermark.computeIfAbsent(watermark, w -> new ArrayList<>()).add(row);
            boolean backfill = tag.equals("backfill") || tag.equals("backfill-completed");
            if (!tag.equals("begin") && !tag.equals("commit")) {
                onlyBackfill.merge(watermark, backfill, Boolean::logicalAnd);
            }
        }
        List<String> out = new ArrayList<>();
        byWatermark.forEach((w, r) -> {
            if (onlyBackfill.getOrDefault(w, false)) {
                out.addAll(r);
            }
        });
        return out;
    }

    /** Waits until both shards' change logs hold the insert of items row {@code id}; its watermark. */
    private String awaitInsertStored(long id) throws Exception {
        String sql = "change::json->>'tag' = 'insert' AND change::json->'relation'->>'name' = 'items'"
                + " AND change::json->'new'->>'id' = '" + id + "'";
        String[] w = new String[2];
        try {
            awaitTrue(() -> query(() -> {
                for (int shard = 0; shard <= 1; shard++) {
                    w[shard] = scalar(DB, "SELECT watermark FROM compat_audit.change_log WHERE shard = " + shard
                            + " AND " + sql);
                    if (w[shard] == null || lastWatermark(shard).compareTo(w[shard]) < 0) {
                        return false;
                    }
                }
                return true;
            }), "both change logs to store the insert of items " + id);
        } catch (CheckFailed e) {
            throw new CheckFailed(e.getMessage() + "; stored in shard 0 at " + w[0] + ", in shard 1 at " + w[1]);
        }
        expect(w[0].equals(w[1]), "the insert of items " + id + " is at " + w[0] + " in shard 0 and " + w[1]
                + " in shard 1");
        return w[0];
    }

    /**
     * The rows of both change logs after {@code from} up to {@code to} are identical (publication
     * names normalized); prints how many transactions and schema changes were compared.
     */
    private void sameRows(String from, String to, int shardA, int shardB) throws Exception {
        sameRows(from, to, shardA, normalizedRows(shardA, from, to), shardB, normalizedRows(shardB, from, to));
    }

    private void sameRows(String from, String to, int shardA, List<String> a, int shardB, List<String> b)
            throws Exception {
        Files.write(work.resolve("changelog-shard" + shardA + "-" + from + ".txt"), a);
        Files.write(work.resolve("changelog-shard" + shardB + "-" + from + ".txt"), b);
        tagCounts.clear();
        int ddlTransactions = 0;
        boolean inDdl = false;
        for (String row : a) {
            String tag = JSON.readTree(row.substring(row.indexOf('{'))).path("tag").asText();
            tagCounts.merge(tag, 1, Integer::sum);
            if (tag.equals("begin")) {
                inDdl = false;
            } else if (!inDdl && !List.of("insert", "update", "delete", "truncate", "commit").contains(tag)) {
                inDdl = true;
                ddlTransactions++;
            }
        }
        String d = diff(String.join("\n", a), String.join("\n", b));
        System.out.println("COMPAT-INFO change logs " + from + ".." + to + ": shard " + shardA + " " + a.size()
                + " rows, shard " + shardB + " " + b.size() + " rows, " + ddlTransactions
                + " transactions with schema changes; tags " + tagCounts + "; diff (- shard " + shardA + ", + shard "
                + shardB + "): " + (d.isEmpty() ? "none" : "\n" + d));
        expect(!a.isEmpty() && d.isEmpty(), "change-log rows differ between shard " + shardA + " and shard " + shardB);
        expect(ddlTransactions > 0, "no schema change was stored");
    }

    /**
     * {@code watermark pos precommit change} of each row stored in {@code (from, to]}, with the
     * shard's own publication names replaced by shard 0's (table specs list the publications they
     * are in).
     */
    private List<String> normalizedRows(int shard, String from, String to) throws Exception {
        List<String> out = new ArrayList<>();
        for (List<String> r : pgRows(DB, "SELECT watermark, pos::text, coalesce(precommit, '-'), change FROM"
                + " compat_audit.change_log WHERE shard = " + shard + " AND watermark > '" + from + "'"
                + " AND watermark <= '" + to + "' ORDER BY watermark, pos")) {
            out.add(r.get(0) + " " + r.get(1) + " " + r.get(2) + " " + r.get(3)
                    .replace("\"_zero_public_" + shard + "\"", "\"_zero_public_0\"")
                    .replace("\"_zero_metadata_" + shard + "\"", "\"_zero_metadata_0\""));
        }
        return out;
    }

    /** The view-syncer's replica (zero-cache's replicator on ZRM's stream) ends equal to ZRM's. */
    private void viewSyncerFollows(ZrmRuntime zrm) throws Exception {
        String last = lastWatermark(ZRM_SHARD);
        awaitReplicaAt(zrmShard1Replica, last);
        awaitReplicaAt(viewSyncerReplica, last);
        // (zero-cache appends an added column after _0_version; only the upstream columns' order is compared.)
        List<List<String>> cols = replicaQuery(viewSyncerReplica, "SELECT name FROM pragma_table_info('t3') ORDER BY"
                + " name = '_0_version', cid");
        expect(cols.toString().equals("[[id], [a2], [b], [e], [_0_version]]"), "t3 columns in the view-syncer's replica: "
                + cols);
        sameReplica(viewSyncerReplica, ZRM_SHARD, zrmShard1Replica, ZRM_SHARD, "zero-cache view-syncer", "ZRM");
        System.out.println("COMPAT-INFO view-syncer: replica at " + last + " with the migrated tables "
                + replicaQuery(viewSyncerReplica, "SELECT name FROM sqlite_master WHERE type = 'table'"
                        + " AND name NOT LIKE '%.%' ORDER BY name"));
    }

    /**
     * A subscriber at the start marker on the change streamer at {@code port} (which now owns
     * {@code shard}) is caught up with exactly the stored rows up to the end marker, each frame
     * byte-identical to the row rebuilt as a catch-up frame.
     */
    private void servesStoredRows(int port, int shard) throws Exception {
        List<String> want = new ArrayList<>();
        for (List<String> r : pgRows(DB, "SELECT watermark, pos::text, change::json->>'tag', change FROM"
                + " compat_audit.change_log WHERE shard = " + shard + " AND watermark > '" + startWatermark + "'"
                + " AND watermark <= '" + endWatermark + "' ORDER BY watermark, pos")) {
            want.add(CatchupFrames.rebuild(new ChangeLogEntry(r.get(0), Long.parseLong(r.get(1)), r.get(2), r.get(3),
                    null)));
        }
        try (Subscriber sub = Subscriber.open(port, replicaVersion(shard), startWatermark)) {
            List<String> got = sub.allUntilCommit(endWatermark);
            String d = diff(String.join("\n", want), String.join("\n", got));
            expect(d.isEmpty(), "served frames differ from the stored rows of shard " + shard + " (- stored, + served):\n"
                    + d);
            long schemaChanges = got.stream().filter(m -> m.startsWith("[\"data\",{\"tag\":\"")
                    && !m.matches("^\\[\"data\",\\{\"tag\":\"(insert|update|delete|truncate)\".*")).count();
            System.out.println("COMPAT-INFO shard " + shard + " served " + got.size() + " messages from " + startWatermark
                    + " to " + endWatermark + " (" + schemaChanges + " schema changes) byte-identical to its rows");
        }
    }


    // ------------------------------------------------------------------ helpers

    private static String cdc(int shard) {
        return "\"" + APP + "_" + shard + "/cdc\"";
    }

    private String lastWatermark(int shard) throws Exception {
        return scalar(DB, "SELECT \"lastWatermark\" FROM " + cdc(shard) + ".\"replicationState\"");
    }

    private String replicaVersion(int shard) throws Exception {
        return scalar(DB, "SELECT \"replicaVersion\" FROM " + cdc(shard) + ".\"replicationConfig\"");
    }


    private void stopQuietly(ZrmRuntime zrm, ZeroCache zero) {
        step("cleanup/zrm-stops", zrm::stop);
        step("cleanup/zero-cache-stops", zero::stop);
    }

    /**
     * zero-cache warnings that say nothing about schema changes (see ZeroCacheStreamerCheck), plus
     * its change-DB ping report, which only says how busy this shared machine is.
     */
    private static final java.util.regex.Pattern BENIGN = java.util.regex.Pattern.compile(
            "Missing --litestream-executable|\"message\":\"(high replication lag: \\d+ ms"
                    + "|Unable to create full ReplicationStatusEvent|No subscribers to confirm cleanup"
                    + "|average ping to change db@[^\"]*|ideal db ping time is < 5 ms)\"");

    /** Fails on errors and resets, and on warnings of the workers that replicate; lists other warnings. */
    private static void assertZeroClean(ZeroCache zero) {
        zero.assertNoLogLines(line -> !BENIGN.matcher(line).find() && (commonProblem(line)
                || line.contains("\"level\":\"WARN\"") && (line.contains("\"worker\":\"serving-replicator\"")
                        || line.contains("\"worker\":\"change-streamer\"") || line.contains("\"worker\":\"replicator\""))));
        List<String> warnings = zero.linesMatching("\"level\":\"WARN\"", 160);
        if (!warnings.isEmpty()) {
            System.out.println("COMPAT-INFO zero-cache " + zero.label + " other warnings: " + warnings);
        }
        List<String> ddl = zero.linesMatching("schema change(s)", 200);
        if (!ddl.isEmpty()) {
            System.out.println("COMPAT-INFO zero-cache " + zero.label + " logged " + ddl.size()
                    + " DDL events with schema changes");
        }
    }

    /** Fails on ZRM errors and on warnings of its change source, replicator or change streamer. */
    private static void assertZrmClean(ZrmRuntime zrm) {
        List<String> bad = new ArrayList<>(zrm.linesAt("ERROR"));
        List<String> other = new ArrayList<>();
        for (String w : zrm.linesAt("WARN")) {
            // A change streamer without subscribers cannot purge; that says nothing about the peer.
            boolean benign = w.contains("no subscribers to confirm cleanup");
            (!benign && (w.contains("replicator") || w.contains("change-streamer") || w.contains("changesource")
                    || w.contains("changes[")) ? bad : other).add(w);
        }
        if (!other.isEmpty()) {
            System.out.println("COMPAT-INFO ZRM runtime " + zrm.label + " other warnings: " + other);
        }
        expect(bad.isEmpty(), "ZRM runtime " + zrm.label + " logged problems: " + bad);
    }
}

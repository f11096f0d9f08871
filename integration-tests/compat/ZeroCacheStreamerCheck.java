import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.zrm.watermark.Watermarks;

/**
 * Change-streamer protocol compatibility between the real ZRM runtime and the real zero-cache
 * 1.8.0, both ways (issue 5):
 *
 * <ul>
 *   <li>{@code zero-from-zrm/*}: a zero-cache view-syncer ({@code ZERO_CHANGE_STREAMER_URI} = ZRM)
 *       serves a copy of the replica ZRM's initial sync and replicator wrote, and keeps it in sync
 *       from ZRM's change streamer;</li>
 *   <li>{@code zrm-from-zero/*}: ZRM's replicator, configured remotely ({@code changeStreamer.uri}
 *       = zero-cache's change streamer) and running without ZRM's own change source, storer and
 *       streamer, keeps a copy of zero-cache's replica in sync from zero-cache's stream.</li>
 * </ul>
 *
 * <p>Run through {@code zero-cache-streamer.sh}, which builds the class path, provides Node 22 and
 * zero-cache and compiles this file with {@code CompatSupport.java}; see {@code README.md} next to
 * this file. ZRM runs as users run it ({@code zrm-launcher.jar run}), so the runtime must be built.
 */
public final class ZeroCacheStreamerCheck extends CompatSupport {

    private static final String VS_DB = "vs_upstream";
    private static final String RM_DB = "rm_upstream";
    private static final String CDC = "\"" + APP + "_" + SHARD_NUM + "/cdc\"";

    /** A bigint above 2^53 (JavaScript's exact-integer limit) and JSON values of every shape. */
    private static final String[] FIXTURE = {
        "CREATE TABLE items (id int8 PRIMARY KEY, name text, qty int4, big int8, doc json, docb jsonb)",
        "INSERT INTO items VALUES (1, 'one', 1, 1, '{\"a\": 1}', '[1, 2]'),"
                + " (2, 'two', 2, 9007199254740993, '[]', '{\"k\": \"v\"}')",
    };

    /** Upstream writes after the replica copy: single-statement and multi-statement transactions. */
    private static final String[][] WRITES = {
        {"INSERT INTO items VALUES (10, 'ten', 10, 9007199254740995,"
                + " '{\"a\": [1, 2.5, \"x\", null], \"b\": {\"c\": true}}', '{\"big\": 9007199254740993}')"},
        {"UPDATE items SET big = 9223372036854775807, doc = '\"str\"', docb = '3' WHERE id = 1"},
        {"INSERT INTO items VALUES (11, 'eleven', NULL, -9223372036854775808, '42', 'null')",
            "UPDATE items SET name = 'ten!', qty = qty + 1 WHERE id = 10",
            "DELETE FROM items WHERE id = 2"},
        {"DELETE FROM items WHERE id = 11",
            "INSERT INTO items VALUES (12, 'twelve', 12, -9007199254740993, NULL, '[{\"deep\": [[]]}]')"},
        {"UPDATE items SET qty = 99 WHERE id = 12"},
    };

    /** Upstream rows as text; json values are compared parsed (see {@link #sameRows}). */
    private static final String UPSTREAM_ROWS = "SELECT id::text, name, qty::text, big::text, doc::text, docb::text"
            + " FROM items ORDER BY id";
    /** Replica rows as text, plus SQLite's storage class of {@code big} (must stay an integer). */
    private static final String REPLICA_ROWS = "SELECT CAST(id AS TEXT), name, CAST(qty AS TEXT), CAST(big AS TEXT),"
            + " CAST(doc AS TEXT), CAST(docb AS TEXT), typeof(big) FROM items ORDER BY id";
    /** Replica rows exactly as stored (storage classes and the row version included). */
    private static final String REPLICA_QUOTED = "SELECT quote(id) || '|' || quote(name) || '|' || quote(qty) || '|'"
            + " || quote(big) || '|' || quote(doc) || '|' || quote(docb) || '|' || quote(_0_version) FROM items"
            + " ORDER BY id";

    /** {@link #REPLICA_QUOTED} without the row version, which differs between the two upstreams. */
    private static final String REPLICA_QUOTED_DATA = "SELECT quote(id) || '|' || quote(name) || '|' || quote(qty)"
            + " || '|' || quote(big) || '|' || quote(doc) || '|' || quote(docb) FROM items ORDER BY id";

    /** The rows zero-cache's own replicator wrote in {@code zero-from-zrm}: the reference for ZRM's replicator. */
    private List<List<String>> zeroReplicatorRows;

    public static void main(String[] args) throws Exception {
        new ZeroCacheStreamerCheck().runAndExit();
    }

    @Override
    void checks() throws Exception {
        zeroFromZrm();
        zrmFromZero();
    }

    // ------------------------------------------------------------------ zero-cache view-syncer <- ZRM

    private void zeroFromZrm() throws Exception {
        cluster.createDatabaseIfMissing(VS_DB);
        exec(VS_DB, FIXTURE);
        Path zrmReplica;
        Path zeroReplica = work.resolve("vs-zero-cache.db");
        ZrmRuntime zrm = new ZrmRuntime("streamer", Map.of("ZERO_UPSTREAM_DB", cluster.uri(VS_DB),
                "ZERO_CHANGE_DB", cluster.uri(VS_DB)), Map.of());
        zrmReplica = zrm.stateDir().resolve("zero.db");
        String[] copied = new String[2]; // replicaVersion, stateVersion of the copy
        try {
            boolean zrmUp = step("zero-from-zrm/zrm-runtime-syncs", () -> {
                zrm.start();
                awaitReplicating(zrm, "in-process");
                expect(zrm.section("changestreamer").path("state").asText().equals("streaming"),
                        "ZRM's change streamer is not streaming: " + zrm.section("changestreamer"));
                awaitTrue(() -> query(() -> sameRows(VS_DB, "ZRM's replica", replicaQuery(zrmReplica, REPLICA_ROWS)) == null),
                        "ZRM's replica to hold the upstream rows");
            });
            if (!zrmUp) {
                return;
            }
            ZeroCache zero = new ZeroCache("view-syncer", VS_DB, zeroReplica, Map.of(
                    "ZERO_CHANGE_STREAMER_URI", "http://127.0.0.1:" + (zrm.port + 1),
                    "ZERO_NUM_SYNC_WORKERS", "1"));
            try {
                boolean started = step("zero-from-zrm/zero-cache-starts-on-zrm-replica", () -> {
                    replicaBackup(zrmReplica, zeroReplica);
                    copied[0] = replicaQuery(zeroReplica, "SELECT replicaVersion FROM \"_zero.replicationConfig\"")
                            .get(0).get(0);
                    copied[1] = replicaStateVersion(zeroReplica);
                    System.out.println("COMPAT-INFO zero-from-zrm: copied ZRM's replica at replicaVersion " + copied[0]
                            + ", stateVersion " + copied[1] + " to " + zeroReplica);
                    zero.start(log -> log.contains("\"message\":\"zero-cache ready"), "to be ready as a view-syncer");
                    expect(!zero.ranInitialSync(), "zero-cache re-synced instead of using ZRM's replica");
                    String subscribed = "/replication/v6/changes?taskID=" + zero.taskID();
                    expect(zero.linesMatching(subscribed, 400).stream().anyMatch(l -> l.contains("&watermark="
                            + copied[1] + "&replicaVersion=" + copied[0] + "&initial=true established")),
                            "zero-cache did not subscribe to ZRM at the copy's watermark " + copied[1] + ": "
                                    + zero.linesMatching("change-streamer", 300));
                    awaitTrue(() -> query(() -> zeroSubscriber(zrm, zero) != null), "ZRM's /status to list"
                            + " zero-cache's serving replicator as a subscriber");
                    System.out.println("COMPAT-INFO zero-from-zrm: ZRM /status subscriber " + zeroSubscriber(zrm, zero));
                });
                if (started) {
                    step("zero-from-zrm/stays-in-sync", () -> {
                        write(VS_DB);
                        String last = changeLogWatermark(VS_DB);
                        awaitTrue(() -> query(() -> sameRows(VS_DB, "ZRM's replica", replicaQuery(zrmReplica, REPLICA_ROWS))
                                == null && replicaStateVersion(zrmReplica).equals(changeLogWatermark(VS_DB))),
                                "ZRM's replica to apply the writes (change log at " + last + ")");
                        String want = changeLogWatermark(VS_DB);
                        awaitTrue(() -> query(() -> replicaStateVersion(zeroReplica).equals(want)),
                                "zero-cache's replica to reach ZRM's stateVersion " + want);
                        String rowsDiff = sameRows(VS_DB, "zero-cache's replica", replicaQuery(zeroReplica, REPLICA_ROWS));
                        expect(rowsDiff == null, rowsDiff);
                        List<List<String>> zeroQuoted = replicaQuery(zeroReplica, REPLICA_QUOTED);
                        List<List<String>> zrmQuoted = replicaQuery(zrmReplica, REPLICA_QUOTED);
                        expect(zeroQuoted.equals(zrmQuoted), "replica rows differ (storage classes or versions):\n"
                                + " zero-cache " + zeroQuoted + "\n ZRM        " + zrmQuoted);
                        expect(Watermarks.isAfter(want, copied[1]), "stateVersion " + want + " is not after the copy's "
                                + copied[1]);
                        zeroReplicatorRows = replicaQuery(zeroReplica, REPLICA_QUOTED_DATA);
                        JsonNode sub = zeroSubscriber(zrm, zero);
                        awaitTrue(() -> query(() -> want.equals(zeroSubscriber(zrm, zero).path("acked").asText())),
                                "ZRM's /status to show zero-cache's acks up to " + want);
                        System.out.println("COMPAT-INFO zero-from-zrm: " + WRITES.length + " upstream transactions;"
                                + " stateVersion " + copied[1] + " -> " + want + " on ZRM's replica, its change log and"
                                + " zero-cache's replica; " + zeroQuoted.size() + " rows identical: " + zeroQuoted);
                        System.out.println("COMPAT-INFO zero-from-zrm: ZRM /status subscriber " + sub);
                    });
                }
            } finally {
                if (step("zero-from-zrm/zero-cache-stops", zero::stop)) {
                    step("zero-from-zrm/zero-cache-log-clean", () -> assertZeroClean(zero));
                }
            }
        } finally {
            if (step("zero-from-zrm/zrm-stops", zrm::stop)) {
                step("zero-from-zrm/zrm-log-clean", () -> assertZrmClean(zrm));
            }
            zrmOwnerAddressNote(VS_DB, zrm);
        }
    }

    /** ZRM's /status entry for zero-cache's serving replicator ({@code <taskID>/serving-replicator-<pid>}), or null. */
    private static JsonNode zeroSubscriber(ZrmRuntime zrm, ZeroCache zero) throws Exception {
        for (JsonNode s : zrm.section("changestreamer").path("subscribers")) {
            if (s.path("id").asText().startsWith(zero.taskID() + "/serving-replicator-")
                    && s.path("mode").asText().equals("serving") && s.path("protocolVersion").asInt() == 6) {
                return s;
            }
        }
        return null;
    }

    /**
     * zero-cache publishes {@code <host IP>:<its change-streamer port>} as the change log's owner
     * address, which view-syncers without {@code ZERO_CHANGE_STREAMER_URI} connect to; report what
     * ZRM published (informational: discovery is not exercised, it would leave 127.0.0.1).
     */
    private void zrmOwnerAddressNote(String db, ZrmRuntime zrm) {
        try {
            String address = scalar(db, "SELECT \"ownerAddress\" FROM " + CDC + ".\"replicationState\"");
            String port = String.valueOf(zrm.port + 1);
            if (address != null && !address.endsWith(":" + port)) {
                System.out.println("COMPAT-GAP zero-from-zrm/owner-address: ZRM published ownerAddress " + address
                        + " but its change streamer listens on " + port + " (ZERO_PORT " + zrm.port + " + 1); zero-cache"
                        + " publishes <host IP>:<its change-streamer port>");
            }
        } catch (Exception e) {
            System.out.println("COMPAT-INFO cannot read ZRM's ownerAddress: " + e);
        }
    }

    // ------------------------------------------------------------------ ZRM replicator <- zero-cache

    private void zrmFromZero() throws Exception {
        cluster.createDatabaseIfMissing(RM_DB);
        exec(RM_DB, FIXTURE);
        Path zeroReplica = work.resolve("rm-zero-cache.db");
        Path zrmReplica = work.resolve("rm-zrm.db");
        ZeroCache zero = new ZeroCache("replication-manager", RM_DB, zeroReplica);
        String[] copied = new String[2];
        try {
            if (!step("zrm-from-zero/zero-cache-syncs", () -> {
                zero.start();
                expect(zero.ranInitialSync(), "zero-cache did not initial-sync " + RM_DB);
            })) {
                return;
            }
            // Only the replicator: ZRM's change source, storer and change streamer would otherwise
            // take over the same app's slot and change log from zero-cache.
            Map<String, Map<String, String>> cfg = new java.util.HashMap<>();
            cfg.put("org.zrm.changesource.pg", null);
            cfg.put("org.zrm.storer", null);
            cfg.put("org.zrm.changestreamer", null);
            cfg.put("org.zrm.replicator", Map.of("upstream.target", "(zrm.replicator.upstream=remote)",
                    "changeStreamer.uri", "ws://127.0.0.1:" + (zeroPort + 1), "replica.file", zrmReplica.toString()));
            ZrmRuntime zrm = new ZrmRuntime("replicator", Map.of("ZERO_UPSTREAM_DB", cluster.uri(RM_DB)), cfg);
            try {
                boolean up = step("zrm-from-zero/zrm-replicator-subscribes", () -> {
                    replicaBackup(zeroReplica, zrmReplica);
                    copied[0] = replicaQuery(zrmReplica, "SELECT replicaVersion FROM \"_zero.replicationConfig\"")
                            .get(0).get(0);
                    copied[1] = replicaStateVersion(zrmReplica);
                    System.out.println("COMPAT-INFO zrm-from-zero: copied zero-cache's replica at replicaVersion "
                            + copied[0] + ", stateVersion " + copied[1] + " to " + zrmReplica);
                    String owner = changeLogOwner(RM_DB);
                    zrm.start();
                    awaitReplicating(zrm, "remote");
                    JsonNode r = zrm.section("replicator");
                    expect(r.path("uri").asText().replaceAll("/$", "").equals("ws://127.0.0.1:" + (zeroPort + 1))
                            && r.path("replicaVersion")
                            .asText().equals(copied[0]), "ZRM's replicator status " + r);
                    expect(zrm.section("changestreamer").isMissingNode() && zrm.section("changesource.pg")
                            .isMissingNode(), "ZRM runs its own change source or streamer next to zero-cache");
                    expect(Objects.equals(owner, changeLogOwner(RM_DB)) && owner.equals(zero.taskID()),
                            "the change log's owner changed from zero-cache's " + owner + " to " + changeLogOwner(RM_DB));
                    System.out.println("COMPAT-INFO zrm-from-zero: ZRM /status replicator " + r);
                });
                if (up) {
                    step("zrm-from-zero/follows-zero-cache", () -> {
                        write(RM_DB);
                        awaitTrue(() -> query(() -> sameRows(RM_DB, "ZRM's replica", replicaQuery(zrmReplica, REPLICA_ROWS))
                                == null && replicaStateVersion(zrmReplica).equals(changeLogWatermark(RM_DB))),
                                "ZRM's replica to apply zero-cache's stream up to its change log's last watermark");
                        String want = changeLogWatermark(RM_DB);
                        expect(Watermarks.isAfter(want, copied[1]), "stateVersion " + want + " is not after the copy's "
                                + copied[1]);
                        awaitTrue(() -> query(() -> want.equals(zrm.section("replicator").path("stateVersion").asText())),
                                "ZRM's /status to report stateVersion " + want);
                        JsonNode r = zrm.section("replicator");
                        expect(r.path("connected").asBoolean() && r.path("reconnects").asInt() == 0
                                && r.path("rollbacks").asInt() == 0 && r.path("lastError").isNull(),
                                "ZRM's replicator status " + r);
                        List<List<String>> quoted = replicaQuery(zrmReplica, REPLICA_QUOTED);
                        // Same writes on both upstreams: ZRM's replicator must store what zero-cache's
                        // replicator stored in zero-from-zrm, storage class for storage class.
                        List<List<String>> data = replicaQuery(zrmReplica, REPLICA_QUOTED_DATA);
                        expect(zeroReplicatorRows == null || zeroReplicatorRows.equals(data), "ZRM's replicator stored"
                                + " rows differently from zero-cache's replicator:\n ZRM        " + data + "\n zero-cache "
                                + zeroReplicatorRows);
                        System.out.println("COMPAT-INFO zrm-from-zero: " + WRITES.length + " upstream transactions;"
                                + " stateVersion " + copied[1] + " -> " + want + " on zero-cache's change log and ZRM's"
                                + " replica (" + r.path("transactionsApplied") + " transactions applied); rows " + quoted
                                + (zeroReplicatorRows == null ? "" : ", identical (but for _0_version) to the rows"
                                        + " zero-cache's replicator wrote in zero-from-zrm"));
                    });
                }
            } finally {
                if (step("zrm-from-zero/zrm-stops", zrm::stop)) {
                    step("zrm-from-zero/zrm-log-clean", () -> assertZrmClean(zrm));
                }
            }
        } finally {
            if (step("zrm-from-zero/zero-cache-stops", zero::stop)) {
                step("zrm-from-zero/zero-cache-log-clean", () -> assertZeroClean(zero));
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    private void write(String db) throws Exception {
        for (String[] tx : WRITES) {
            execTx(db, tx);
        }
    }

    /** The change log's last stored watermark in {@code db} (ZRM's or zero-cache's, same schema). */
    private String changeLogWatermark(String db) throws Exception {
        return scalar(db, "SELECT \"lastWatermark\" FROM " + CDC + ".\"replicationState\"");
    }

    private String changeLogOwner(String db) throws Exception {
        return scalar(db, "SELECT owner FROM " + CDC + ".\"replicationState\"");
    }

    /** Waits until ZRM's replicator reports phase REPLICATING, connected, in the given mode. */
    private static void awaitReplicating(ZrmRuntime zrm, String changeStreamer) throws Exception {
        awaitTrue(() -> query(() -> {
            JsonNode r = zrm.section("replicator");
            return r.path("phase").asText().equals("REPLICATING") && r.path("connected").asBoolean()
                    && r.path("changeStreamer").asText().equals(changeStreamer);
        }), "ZRM's replicator (" + changeStreamer + ") to replicate (log " + zrm.logFile + ")");
    }

    /**
     * Null if {@code replica} (rows of {@link #REPLICA_ROWS}) holds exactly the upstream rows of
     * the database under test, else what differs. Integers must match exactly (no loss beyond
     * 2^53) and stay SQLite integers; json/jsonb values must be the same JSON.
     */
    private String sameRows(String db, String what, List<List<String>> replica) throws Exception {
        List<List<String>> upstream = pgRows(db, UPSTREAM_ROWS);
        if (upstream.size() != replica.size()) {
            return what + " has " + replica.size() + " rows, upstream " + upstream.size() + ": " + replica + " vs "
                    + upstream;
        }
        for (int i = 0; i < upstream.size(); i++) {
            List<String> u = upstream.get(i);
            List<String> r = replica.get(i);
            boolean same = Objects.equals(u.get(0), r.get(0)) && Objects.equals(u.get(1), r.get(1))
                    && Objects.equals(u.get(2), r.get(2)) && Objects.equals(u.get(3), r.get(3))
                    && sameJson(u.get(4), r.get(4)) && sameJson(u.get(5), r.get(5))
                    && (u.get(3) == null ? "null".equals(r.get(6)) : "integer".equals(r.get(6)));
            if (!same) {
                return what + " row differs from upstream: " + r + " vs " + u;
            }
        }
        return null;
    }

    /**
     * zero-cache warnings that say nothing about the peer: a lag report caught up from the change
     * log after the view-syncer's ~20 s start is "high" by construction (it was sent before the
     * view-syncer existed); and a replication manager's status event on the replica file it is
     * still creating, during its own initial sync, before any subscriber.
     */
    private static final java.util.regex.Pattern BENIGN_WARNINGS = java.util.regex.Pattern.compile(
            "\"message\":\"(high replication lag: \\d+ ms|Unable to create full ReplicationStatusEvent)\"");

    /**
     * Fails on zero-cache's common problems (errors, resets) and on warnings of the workers that
     * speak the change-streamer protocol; other warnings (e.g. the upstream ping) are listed.
     */
    private static void assertZeroClean(ZeroCache zero) {
        zero.assertNoLogLines(line -> commonProblem(line) || line.contains("\"level\":\"WARN\"")
                && (line.contains("\"worker\":\"serving-replicator\"") || line.contains("\"worker\":\"change-streamer\""))
                && !BENIGN_WARNINGS.matcher(line).find());
        List<String> warnings = zero.linesMatching("\"level\":\"WARN\"", 160);
        if (!warnings.isEmpty()) {
            System.out.println("COMPAT-INFO zero-cache " + zero.label + " other warnings: " + warnings);
        }
    }

    /** Fails on ZRM errors and on warnings of its replicator or change streamer; lists other warnings. */
    private static void assertZrmClean(ZrmRuntime zrm) {
        List<String> bad = new ArrayList<>(zrm.linesAt("ERROR"));
        List<String> other = new ArrayList<>();
        for (String w : zrm.linesAt("WARN")) {
            (w.contains("replicator:") || w.contains("change-streamer:") || w.contains("changes[") ? bad : other).add(w);
        }
        if (!other.isEmpty()) {
            System.out.println("COMPAT-INFO ZRM runtime " + zrm.label + " other warnings: " + other);
        }
        expect(bad.isEmpty(), "ZRM runtime " + zrm.label + " logged problems: " + bad);
    }

    private static boolean sameJson(String a, String b) throws Exception {
        if (a == null || b == null) {
            return a == null && b == null;
        }
        return JSON.readTree(a).equals(JSON.readTree(b));
    }
}

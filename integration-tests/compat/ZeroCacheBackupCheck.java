import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Backup compatibility between ZRM and the real zero-cache 1.8.0 (issue 14): ZRM runs
 * {@code litestream replicate} (v0.3.13) for its replica to a {@code file://} destination; a
 * zero-cache view-syncer with that destination ({@code ZERO_LITESTREAM_BACKUP_URL}) and ZRM as its
 * change streamer ({@code ZERO_CHANGE_STREAMER_URI}) reserves through ZRM's {@code /snapshot},
 * restores ZRM's backup with the same litestream, subscribes and serves in sync.
 *
 * <p>Run through {@code zero-cache-backup.sh}; the litestream executable is
 * {@code $ZRM_LITESTREAM_EXECUTABLE} or the copy the litestream bundles' tests cache.
 */
public final class ZeroCacheBackupCheck extends CompatSupport {

    private static final String DB = "backup_upstream";
    private static final String CDC = "\"" + APP + "_" + SHARD_NUM + "/cdc\"";

    public static void main(String[] args) throws Exception {
        new ZeroCacheBackupCheck().runAndExit();
    }

    @Override
    void checks() throws Exception {
        Path litestream = Path.of(System.getProperty("litestream"));
        expect(Files.isExecutable(litestream), litestream + " is not executable");
        cluster.createDatabaseIfMissing(DB);
        exec(DB, "CREATE TABLE items (id int8 PRIMARY KEY, name text)", "INSERT INTO items VALUES (1, 'one'), (2, 'two')");
        String backupURL = "file://" + work.resolve("backup");
        ZrmRuntime zrm = new ZrmRuntime("backup", Map.of("ZERO_UPSTREAM_DB", cluster.uri(DB),
                "ZERO_CHANGE_DB", cluster.uri(DB), "ZERO_LITESTREAM_BACKUP_URL", backupURL,
                "ZERO_LITESTREAM_EXECUTABLE", litestream.toString(),
                "ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES", "0.02"), Map.of());
        Path zeroReplica = work.resolve("backup-zero-cache.db");
        try {
            boolean backedUp = step("backup/zrm-runs-litestream", () -> {
                zrm.start();
                awaitTrue(() -> query(() -> {
                    JsonNode l = zrm.section("litestream");
                    return l.path("state").asText().equals("RUNNING") && l.hasNonNull("firstSnapshotAt");
                }), "ZRM's litestream to run and make its first snapshot (log " + zrm.logFile + ")");
                System.out.println("COMPAT-INFO backup: ZRM /status litestream " + zrm.section("litestream"));
            });
            if (!backedUp) {
                return;
            }
            ZeroCache zero = new ZeroCache("view-syncer-restore", DB, zeroReplica, Map.of(
                    "ZERO_CHANGE_STREAMER_URI", "http://127.0.0.1:" + (zrm.port + 1),
                    "ZERO_NUM_SYNC_WORKERS", "1",
                    "ZERO_LITESTREAM_BACKUP_URL", backupURL,
                    "ZERO_LITESTREAM_EXECUTABLE", litestream.toString(),
                    // zero-cache's default is relative to its source tree; the npm package ships it here.
                    "ZERO_LITESTREAM_CONFIG_PATH", zeroDir.resolve("node_modules/@rocicorp/zero/out/zero-cache/src/services"
                            + "/litestream/config.yml").toString()));
            try {
                boolean restored = step("backup/zero-cache-restores-zrm-backup", () -> {
                    zero.start(log -> log.contains("\"message\":\"zero-cache ready"), "to be ready as a view-syncer");
                    expect(!zero.ranInitialSync(), "zero-cache re-synced instead of restoring ZRM's backup");
                    List<String> compatible = zero.linesMatching("is compatible", 300);
                    expect(!compatible.isEmpty(), "zero-cache did not validate a restored replica: "
                            + zero.linesMatching("restor", 300));
                    System.out.println("COMPAT-INFO backup: zero-cache " + compatible);
                    System.out.println("COMPAT-INFO backup: zero-cache reserved " + zero.linesMatching("snapshot", 200));
                    String zrmVersion = zrm.section("changestreamer").path("replicaVersion").asText();
                    String zeroVersion = replicaQuery(zeroReplica, "SELECT replicaVersion FROM"
                            + " \"_zero.replicationConfig\"").get(0).get(0);
                    expect(zrmVersion.equals(zeroVersion), "zero-cache's restored replicaVersion " + zeroVersion
                            + " is not ZRM's " + zrmVersion);
                });
                if (restored) {
                    step("backup/zero-cache-serves-in-sync", () -> {
                        execTx(DB, "INSERT INTO items VALUES (3, 'three')", "UPDATE items SET name = 'uno' WHERE id = 1");
                        execTx(DB, "DELETE FROM items WHERE id = 2");
                        String want = scalar(DB, "SELECT \"lastWatermark\" FROM " + CDC + ".\"replicationState\"");
                        awaitTrue(() -> query(() -> replicaStateVersion(zeroReplica).compareTo(want) >= 0),
                                "zero-cache's replica to reach " + want);
                        List<List<String>> rows = replicaQuery(zeroReplica, "SELECT CAST(id AS TEXT), name FROM items"
                                + " ORDER BY id");
                        expect(rows.equals(List.of(List.of("1", "uno"), List.of("3", "three"))), "zero-cache's"
                                + " replica rows " + rows);
                        System.out.println("COMPAT-INFO backup: zero-cache's replica at " + want + ": " + rows);
                    });
                }
            } finally {
                step("backup/zero-cache-stops", zero::stop);
            }
        } finally {
            step("backup/zrm-stops", zrm::stop);
        }
    }
}

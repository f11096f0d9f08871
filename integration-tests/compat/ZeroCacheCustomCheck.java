import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.zrm.watermark.Watermarks;

/**
 * Zero's custom change-source protocol between ZRM and the real zero-cache 1.8.0 (issue 12):
 *
 * <ul>
 *   <li>{@code zero-from-endpoint/*}: a zero-cache with {@code ZERO_UPSTREAM_TYPE=custom} and
 *       {@code ZERO_UPSTREAM_DB} = ZRM's endpoint ({@code /changes/v0/stream}, with the API key)
 *       initial-syncs from it and follows a DML and DDL workload; its replica (written by
 *       zero-cache's own view-syncer) ends equal to ZRM's;</li>
 *   <li>{@code zrm-client/*}: a second ZRM runtime with {@code ZERO_UPSTREAM_TYPE=custom} consumes
 *       the same endpoint at the same time; after the workload its change log holds exactly the
 *       rows zero-cache's change log holds for the same range, and its replica equals the others.</li>
 *   <li>{@code bad-requests/*}: a wrong API key and a wrong shard are refused with a close reason;
 *       the endpoint keeps serving the two clients.</li>
 * </ul>
 *
 * <p>Run through {@code zero-cache-custom.sh}; see {@code README.md} next to this file.
 */
public final class ZeroCacheCustomCheck extends CompatSupport {

    private static final String UPSTREAM = "custom_upstream";
    private static final String ZC_CDC = "custom_zc_cdc";
    private static final String ZRM_CDC = "custom_zrm_cdc";
    private static final String API_KEY = "compat-endpoint-key";
    private static final String CDC = "\"" + APP + "_" + SHARD_NUM + "/cdc\"";

    private static final String[] FIXTURE = {
        "CREATE TYPE mood AS ENUM ('ok', 'meh')",
        "CREATE TABLE items (id int8 PRIMARY KEY, name text, qty int4, big int8, doc json, docb jsonb,"
                + " at timestamptz, day date, flag bool, price numeric, tags text[], m mood)",
        "INSERT INTO items VALUES (1, 'one', 1, 1, '{\"a\": 1}', '[1, 2]', '2026-01-02 03:04:05.678+00', '2026-01-02',"
                + " true, 1.5, '{a,b}', 'ok'),"
                + " (2, 'two', 2, 9007199254740993, '[]', '{\"k\": \"v\"}', NULL, NULL, false, NULL, '{}', 'meh')",
        "CREATE UNIQUE INDEX items_name ON items (name DESC)",
    };

    /** DML and DDL after both clients are up: each inner array is one transaction. */
    private static final String[][] WORKLOAD = {
        {"INSERT INTO items (id, name, qty, big, doc) VALUES (10, 'ten', 10, 9223372036854775807, '{\"x\": [1, null]}')"},
        {"UPDATE items SET qty = qty + 1, docb = '{\"big\": 9007199254740993}' WHERE id = 1", "DELETE FROM items WHERE id = 2"},
        {"ALTER TABLE items ADD COLUMN note text"},
        {"UPDATE items SET note = 'noted' WHERE id = 10"},
        {"CREATE TABLE other (k text PRIMARY KEY, v int4)", "INSERT INTO other VALUES ('a', 1), ('b', 2)"},
        {"ALTER TABLE other RENAME COLUMN v TO w", "UPDATE other SET w = 3 WHERE k = 'a'"},
        {"CREATE INDEX other_w ON other (w)"},
        {"ALTER TABLE items DROP COLUMN qty"},
        {"INSERT INTO other VALUES ('end-marker', 0)"},
    };

    public static void main(String[] args) throws Exception {
        new ZeroCacheCustomCheck().runAndExit();
    }

    @Override
    void checks() throws Exception {
        for (String db : List.of(UPSTREAM, ZC_CDC, ZRM_CDC)) {
            cluster.createDatabaseIfMissing(db);
        }
        exec(UPSTREAM, FIXTURE);
        ZrmRuntime endpoint = new ZrmRuntime("endpoint", Map.of("ZERO_UPSTREAM_DB", cluster.uri(UPSTREAM),
                "ZERO_CHANGE_DB", cluster.uri(UPSTREAM), "ZRM_CUSTOM_ENDPOINT_API_KEY", API_KEY), Map.of());
        Path endpointReplica = endpoint.stateDir().resolve("zero.db");
        Path zeroReplica = work.resolve("zero-cache-custom.db");
        try {
            if (!step("zero-from-endpoint/zrm-endpoint-starts", () -> {
                endpoint.start();
                awaitStreaming(endpoint);
                expect(endpoint.section("changesource.endpoint").path("enabled").asBoolean(true),
                        "the endpoint is not enabled: " + endpoint.section("changesource.endpoint"));
            })) {
                return;
            }
            String url = "ws://127.0.0.1:" + (endpoint.port + 1) + "/changes/v0/stream";
            ZeroCache zero = new ZeroCache("custom", UPSTREAM, zeroReplica, Map.of(
                    "ZERO_UPSTREAM_TYPE", "custom",
                    "ZERO_UPSTREAM_DB", url + "?apiKey=" + API_KEY,
                    "ZERO_CHANGE_DB", cluster.uri(ZC_CDC),
                    "ZERO_CVR_DB", cluster.uri(ZC_CDC),
                    "ZERO_NUM_SYNC_WORKERS", "1"));
            Map<String, Map<String, String>> noBackup = new HashMap<>();
            ZrmRuntime client = new ZrmRuntime("custom-client", Map.of("ZERO_UPSTREAM_TYPE", "custom",
                    "ZERO_UPSTREAM_DB", url + "?apiKey=" + API_KEY, "ZERO_CHANGE_DB", cluster.uri(ZRM_CDC)), noBackup);
            Path clientReplica = client.stateDir().resolve("zero.db");
            try {
                boolean zeroUp = step("zero-from-endpoint/zero-cache-initial-syncs", () -> {
                    zero.start(log -> log.contains("\"message\":\"zero-cache ready"), "to be ready");
                    awaitTrue(() -> query(() -> java.nio.file.Files.exists(zeroReplica)
                            && !replicaQuery(zeroReplica, "SELECT name FROM sqlite_master WHERE name = 'items'").isEmpty()),
                            "zero-cache's replica to hold the synced tables");
                    System.out.println("COMPAT-INFO zero-cache synced from the endpoint at replicaVersion "
                            + replicaQuery(zeroReplica, "SELECT replicaVersion FROM \"_zero.replicationConfig\"").get(0).get(0)
                            + "; ZRM's replicaVersion " + scalar(UPSTREAM, "SELECT \"replicaVersion\" FROM " + CDC
                            + ".\"replicationConfig\""));
                });
                boolean clientUp = step("zrm-client/zrm-custom-client-syncs", () -> {
                    client.start();
                    awaitStreaming(client);
                });
                if (!zeroUp && !clientUp) {
                    return;
                }
                String from = lastWatermark(UPSTREAM);
                awaitTrue(() -> query(() -> (!zeroUp || !Watermarks.isAfter(from, replicaStateVersion(zeroReplica)))
                        && (!clientUp || !Watermarks.isAfter(from, lastWatermark(ZRM_CDC)))),
                        "both clients to reach the endpoint's watermark " + from + " before the workload");
                step("bad-requests/refused-with-a-reason", () -> {
                    String wrongKey = closeReason(url + "?apiKey=wrong&appID=" + APP + "&shardNum=" + SHARD_NUM);
                    String wrongShard = closeReason(url + "?apiKey=" + API_KEY + "&appID=" + APP + "&shardNum=7");
                    System.out.println("COMPAT-INFO endpoint refused: wrong apiKey -> " + wrongKey + "; wrong shard -> "
                            + wrongShard);
                    expect(wrongKey.startsWith("1008 "), "a wrong apiKey was not refused with 1008: " + wrongKey);
                    expect(wrongShard.startsWith("1008 ") && wrongShard.contains("shardNum"),
                            "a wrong shardNum was not refused with a reason naming it: " + wrongShard);
                });
                for (String[] tx : WORKLOAD) {
                    execTx(UPSTREAM, tx);
                }
                awaitTrue(() -> query(() -> scalar(UPSTREAM, "SELECT count(*) FROM " + CDC + ".\"changeLog\""
                        + " WHERE change::text LIKE '%end-marker%'").equals("1")), "the endpoint's change log to store the"
                        + " end marker");
                String to = lastWatermark(UPSTREAM);
                awaitReplicaAt(endpointReplica, to);
                if (zeroUp) {
                    step("zero-from-endpoint/replica-equals-zrm", () -> {
                        awaitReplicaAt(zeroReplica, to);
                        sameReplicaAcrossSources(zeroReplica, endpointReplica, "zero-cache (custom)");
                    });
                }
                if (clientUp) {
                    step("zrm-client/replica-equals-zrm", () -> {
                        awaitReplicaAt(clientReplica, to);
                        sameReplicaAcrossSources(clientReplica, endpointReplica, "ZRM (custom client)");
                    });
                }
                if (zeroUp && clientUp) {
                    // Both built by a custom client from the same stream: identical, line for line.
                    step("zrm-client/replica-equals-zero-cache", () -> sameReplica(clientReplica, SHARD_NUM, zeroReplica,
                            SHARD_NUM, "ZRM (custom client)", "zero-cache (custom)"));
                }
                if (zeroUp && clientUp) {
                    step("zrm-client/change-log-equals-zero-cache", () -> {
                        awaitTrue(() -> query(() -> to.equals(lastWatermark(ZC_CDC)) && to.equals(lastWatermark(ZRM_CDC))),
                                "both clients' change logs to reach " + to);
                        List<String> zc = changeLogRows(ZC_CDC, from, to);
                        List<String> zrm = changeLogRows(ZRM_CDC, from, to);
                        List<String> zrmAsStored = zrm;
                        if (!zc.equals(zrm)) {
                            System.out.println("COMPAT-GAP zrm-client/change-log-text: zero-cache re-serializes each"
                                    + " change (its own key order, \"old\":null written out); ZRM stores the endpoint's"
                                    + " text as received. Compared as JSON with a null \"old\" dropped.");
                            zc = normalizedJson(zc);
                            zrm = normalizedJson(zrm);
                        }
                        java.nio.file.Files.write(work.resolve("changelog-zero-cache.txt"), zc);
                        java.nio.file.Files.write(work.resolve("changelog-zrm-client.txt"), zrm);
                        String d = diff(String.join("\n", zc), String.join("\n", zrm));
                        System.out.println("COMPAT-INFO change logs " + from + ".." + to + ": zero-cache " + zc.size()
                                + " rows, ZRM custom client " + zrm.size() + " rows; diff: " + (d.isEmpty() ? "none" : "\n" + d));
                        expect(zc.size() > WORKLOAD.length * 2 && d.isEmpty(),
                                "the two custom clients stored different change logs");
                        List<String> source = changeLogRows(UPSTREAM, from, to);
                        // ZRM's client stores what the endpoint sent, which is what the endpoint runtime stored.
                        expect(source.equals(zrmAsStored), "the custom client's change log differs from the endpoint"
                                + " runtime's own:\n" + diff(String.join("\n", source), String.join("\n", zrmAsStored)));
                    });
                }
            } finally {
                if (step("cleanup/zero-cache-stops", zero::stop)) {
                    step("zero-from-endpoint/zero-cache-log-clean", () -> zero.assertNoLogLines(
                            line -> commonProblem(line) && !line.contains("Missing --litestream-executable")));
                }
                if (step("cleanup/custom-client-stops", client::stop)) {
                    step("zrm-client/zrm-log-clean", () -> expect(client.linesAt("ERROR").isEmpty(),
                            "the custom client logged errors: " + client.linesAt("ERROR")));
                }
            }
        } finally {
            if (step("cleanup/endpoint-stops", endpoint::stop)) {
                step("zero-from-endpoint/endpoint-log-clean", () -> {
                    List<String> errors = new ArrayList<>();
                    for (String line : endpoint.linesAt("ERROR")) {
                        errors.add(line);
                    }
                    expect(errors.isEmpty(), "the endpoint runtime logged errors: " + errors);
                });
            }
        }
    }

    /**
     * A replica a custom client built from the endpoint equals the endpoint runtime's own (built
     * by the pg source's initial sync and replicator) but for two known differences, which the
     * lines are normalized for: tables a change processor creates have no {@code DEFAULT} on
     * {@code _0_version} (initial sync's do, as in zero-cache), and the shard's mutations table
     * has the {@code mutation} column the custom protocol requires (Appendix A, QUIRK).
     */
    private void sameReplicaAcrossSources(Path client, Path source, String what) throws Exception {
        List<String> a = new ArrayList<>();
        for (String line : replicaSnapshot(client, SHARD_NUM)) {
            if (!line.contains("zero_N.mutations, mutation,") && !line.contains("zero_N.mutations [4, mutation,")) {
                a.add(line.replace("zero_N.mutations [5, _0_version", "zero_N.mutations [4, _0_version")
                        .replace("\"mutation\" \"json\",\n", ""));
            }
        }
        List<String> b = new ArrayList<>();
        for (String line : replicaSnapshot(source, SHARD_NUM)) {
            b.add(line.replace("\"_0_version\" \"text\" DEFAULT '<replicaVersion>'", "\"_0_version\" \"text\"")
                    .replace("_0_version, TEXT, 0, '<replicaVersion>',", "_0_version, TEXT, 0, null,"));
        }
        a = a.stream().sorted().toList();
        b = b.stream().sorted().toList();
        String d = diff(String.join("\n", a), String.join("\n", b));
        System.out.println("COMPAT-INFO replicas " + client.getFileName() + " (" + what + ") vs the endpoint runtime's, "
                + a.size() + " lines (normalized for the _0_version default and the mutation column): "
                + (d.isEmpty() ? "identical" : "diff:\n" + d));
        expect(d.isEmpty(), "replicas differ (- " + what + ", + ZRM endpoint runtime)");
    }

    /** Each row with its change parsed and re-written with sorted keys, a null {@code old} dropped. */
    private static List<String> normalizedJson(List<String> rows) throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper sorted = new com.fasterxml.jackson.databind.ObjectMapper()
                .configure(com.fasterxml.jackson.databind.SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
        List<String> out = new ArrayList<>();
        for (String row : rows) {
            int brace = row.indexOf('{');
            com.fasterxml.jackson.databind.JsonNode change = JSON.readTree(row.substring(brace));
            if (change instanceof com.fasterxml.jackson.databind.node.ObjectNode o && o.path("old").isNull()) {
                o.remove("old");
            }
            Object tree = sorted.treeToValue(change, Object.class);
            out.add(row.substring(0, brace) + sorted.writeValueAsString(tree));
        }
        return out;
    }

    /** {@code watermark pos precommit change} of each change-log row in {@code (from, to]}. */
    private List<String> changeLogRows(String db, String from, String to) throws Exception {
        List<String> out = new ArrayList<>();
        for (List<String> r : pgRows(db, "SELECT watermark, pos::text, coalesce(precommit, '-'), change FROM " + CDC
                + ".\"changeLog\" WHERE watermark > '" + from + "' AND watermark <= '" + to + "' ORDER BY watermark, pos")) {
            out.add(String.join(" ", r));
        }
        return out;
    }

    /** Opens a WebSocket to {@code uri} and returns {@code "<code> <reason>"} of the close it receives. */
    private static String closeReason(String uri) throws Exception {
        java.util.concurrent.CompletableFuture<String> closed = new java.util.concurrent.CompletableFuture<>();
        java.net.http.HttpClient.newHttpClient().newWebSocketBuilder().buildAsync(java.net.URI.create(uri),
                new java.net.http.WebSocket.Listener() {
                    @Override
                    public java.util.concurrent.CompletionStage<?> onClose(java.net.http.WebSocket ws, int code, String reason) {
                        closed.complete(code + " " + reason);
                        return null;
                    }

                    @Override
                    public void onError(java.net.http.WebSocket ws, Throwable error) {
                        closed.complete("error " + error);
                    }
                }).exceptionally(e -> {
                    closed.complete("refused " + e);
                    return null;
                });
        return closed.get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    private String lastWatermark(String db) throws Exception {
        return scalar(db, "SELECT \"lastWatermark\" FROM " + CDC + ".\"replicationState\"");
    }
}

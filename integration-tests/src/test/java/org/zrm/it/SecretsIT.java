package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;

/**
 * The runtime as a user starts it ({@code zrm-launcher.jar run}, in a child process), with one
 * secret in every place a secret can go: the upstream and change-DB URLs, the admin password and
 * a remote change streamer's URL. The operator endpoints need the admin password (401 and no data
 * without it; basic auth with any user or a bearer token with it), the health checks stay open,
 * and the secret appears nowhere: not in the launcher's or the runtime's log, not in
 * {@code /status}, {@code /metrics} or the status page.
 */
public class SecretsIT {

    private static final String SECRET = "Zs3cretSentinel4242";

    private static PgDatabase database;
    private static LauncherProcess runtime;
    private static Path dir;

    @BeforeClass
    public static void start() throws Exception {
        database = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_secrets");
        // The fixture's cluster trusts local connections, so any password is accepted: the secret
        // can travel in the URLs without a role to set up.
        String upstream = database.uri().replace("postgres@", "postgres:" + SECRET + "@");
        assertTrue(upstream, upstream.contains(SECRET));
        dir = Files.createTempDirectory("zrm-it-secrets-");
        runtime = LauncherProcess.start(dir, LauncherProcess.freePort(), Map.of(
                "ZERO_UPSTREAM_DB", upstream,
                "ZERO_CHANGE_DB", upstream,
                "ZERO_ADMIN_PASSWORD", SECRET,
                // A remote upstream for the replicator that never answers: its reconnect errors are logged.
                "ZERO_CHANGE_STREAMER_URI", "ws://replicator:" + SECRET + "@127.0.0.1:" + LauncherProcess.freePort()
                        + "/?apiKey=" + SECRET));
        runtime.awaitStatus("the change streamer streaming", "Bearer " + SECRET,
                s -> "streaming".equals(s.path("sections").path("changestreamer").path("state").asText()));
    }

    @AfterClass
    public static void stop() throws Exception {
        if (runtime != null) {
            runtime.close();
        }
        if (database != null) {
            database.close();
        }
    }

    private static HttpResponse<String> get(String path, String authorization) throws Exception {
        return runtime.get(path, authorization);
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    public void operatorEndpointsNeedTheAdminPasswordAndHealthChecksDoNot() throws Exception {
        for (String path : List.of("/status", "/metrics", "/ui/", "/ui/app.js")) {
            for (String auth : new String[] {null, basic("admin", "wrong"), "Bearer wrong", basic(SECRET, "")}) {
                HttpResponse<String> r = get(path, auth);
                assertEquals(path + " with " + auth, 401, r.statusCode());
                assertFalse(path + " leaks data without the password", r.body().contains("changestreamer")
                        || r.body().contains("zrm_"));
            }
            assertEquals(path, 200, get(path, basic("anyone", SECRET)).statusCode());
            assertEquals(path, 200, get(path, "Bearer " + SECRET).statusCode());
        }
        assertEquals("OK", get("/", null).body());
        assertEquals("OK", get("/keepalive", null).body());
    }

    @Test
    public void theSecretAppearsNowhere() throws Exception {
        String auth = "Bearer " + SECRET;
        for (String path : List.of("/status", "/metrics", "/ui/", "/ui/app.js", "/ui/app.css")) {
            String body = get(path, auth).body();
            int at = body.indexOf(SECRET);
            assertEquals(path + " shows the secret near: " + (at < 0 ? "" : body.substring(Math.max(0, at - 200), at)), -1, at);
        }
        String status = get("/status", auth).body();
        assertTrue("the replicator's remote upstream is configured: " + status, status.contains("\"remote\""));
        // Give the replicator time to fail a few connections, so that its errors are in the log.
        TimeUnit.SECONDS.sleep(3);
        String text = runtime.log();
        assertTrue("the log is the runtime's: " + text, text.contains("change-streamer"));
        int at = text.indexOf(SECRET);
        assertEquals("the log shows the secret near: " + (at < 0 ? "" : text.substring(Math.max(0, at - 200),
                Math.min(text.length(), at + 50))), -1, at);
        for (Path p : Files.walk(dir.resolve("state")).filter(Files::isRegularFile).filter(f -> f.toString().endsWith(".log"))
                .toList()) {
            assertFalse(p + " shows the secret", Files.readString(p).contains(SECRET));
        }
    }
}

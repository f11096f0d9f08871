package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;

/**
 * A bad value in a watched {@code .cfg}, in the runtime as a user starts it (a child process, so
 * the whole log can be read): exactly one ERROR line naming the file, the key and the reason; the
 * component goes on with its last good configuration (the effective configuration it receives is
 * logged, and the pipeline keeps streaming); {@code /status} lists the rejection until the file is
 * fixed.
 */
public class ConfigErrorsIT {

    private static PgDatabase database;
    private static LauncherProcess runtime;
    private static Path conf;

    @BeforeClass
    public static void start() throws Exception {
        database = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_cfgerr");
        Path dir = Files.createTempDirectory("zrm-it-cfgerr-");
        conf = dir.resolve("conf");
        runtime = LauncherProcess.start(dir, LauncherProcess.freePort(), Map.of(
                "ZERO_UPSTREAM_DB", database.uri(), "ZERO_CHANGE_DB", database.uri()));
        awaitStreaming();
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

    @Test
    public void aNonNumericValueIsRejectedOnceAndTheLastGoodConfigurationStays() throws Exception {
        // The backup coordinator's PID has its metatype designated: the generic type check applies.
        rejectOnce("org.zrm.backup", "minCleanupDelayMs", "soon", "not a long", "30000", () -> {
            JsonNode status = awaitStreaming();
            assertEquals(status.toString(), "replica", status.path("sections").path("backup").path("active").asText());
        });
        awaitStreaming();
    }

    @Test
    public void aComponentConfiguredFromTwoPidsIsCheckedToo() throws Exception {
        // The storer reads the node identity and its own PID; its metatype is designated through
        // the OCD's pid. Without the check it would fail to activate on this value.
        rejectOnce("org.zrm.storer", "change.logBatchSize", "lots", "not an integer", null, ConfigErrorsIT::awaitStreaming);
        awaitStreaming();
    }

    @Test
    public void aValueOutsideTheMetatypeRangeIsRejectedWithTheBound() throws Exception {
        // deployPollMillis has min = 100 in the admin component's metatype; a range rule, unlike a
        // type, is not something DS would catch at all: the component would poll every 50 ms.
        rejectOnce("org.zrm.admin", "deployPollMillis", "50", "must be at least 100: '50'", "1000", () -> { });
        awaitStreaming();
    }

    @Test
    public void aTargetThatIsNotAFilterIsRejectedAndTheStreamerKeepsItsSource() throws Exception {
        Path cfg = conf.resolve("org.zrm.changestreamer.cfg");
        String original = Files.readString(cfg);
        try {
            write(cfg, original + "\nchangeSource.target = (zrm.changesource.type=pg\n");
            JsonNode rejection = awaitRejection("org.zrm.changestreamer", "changeSource.target");
            assertTrue(rejection.toString(), rejection.path("reason").asText().startsWith("not a valid LDAP filter"));
            String line = awaitErrorLine("org.zrm.changestreamer.cfg");
            assertTrue(line, line.contains("key changeSource.target: not a valid LDAP filter"));
            JsonNode status = awaitStreaming();
            JsonNode source = status.path("sections").path("changestreamer").path("changeSource");
            assertEquals(source.toString(), "(zrm.changesource.type=pg)", source.path("target").asText());
        } finally {
            write(cfg, original);
        }
        awaitCleared("org.zrm.changestreamer");
        assertEquals(1, errorLines(runtime.log(), "org.zrm.changestreamer.cfg").size());
    }

    /**
     * Every other PID of the shipped runtime, one bad value each (a type or a bound from its
     * metatype): the same ERROR line, the rejection listed and then cleared, the pipeline streaming
     * throughout. Not here: {@code org.zrm.admin.auth} (one text key, which any value satisfies)
     * and {@code org.zrm.identity} (no metatype; the launcher checks its keys before start).
     */
    @Test
    public void everyComponentRejectsABadValueTheSameWay() throws Exception {
        String[][] cases = {
            {"org.zrm.changesource.pg", "replication.maxMessageBytes", "100", "must be at least 1024: '100'"},
            {"org.zrm.changesource.custom", "connectTimeoutMs", "soon", "not a long"},
            {"org.zrm.changesource.endpoint", "maxIncomingChars", "0", "must be at least 1: '0'"},
            {"org.zrm.changestreamer.http", "ping.intervalMs", "0", "must be at least 1: '0'"},
            {"org.zrm.replicator", "replicator.retryMaxMs", "0", "must be at least 1: '0'"},
            {"org.zrm.backup.replica", "replica.monitor.intervalMs", "0", "must be at least 1: '0'"},
            {"org.zrm.backup.litestream3", "litestream.port", "70000", "must be at most 65535: '70000'"},
            {"org.zrm.backup.vfs", "litestream.vfsProbeIntervalMs", "soon", "not a long"},
            {"org.zrm.litestream", "litestream.backupUsingV5", "maybe", "not a boolean (true or false): 'maybe'"},
        };
        for (String[] c : cases) {
            rejectOnce(c[0], c[1], c[2], c[3], null, () -> { });
        }
        awaitStreaming();
    }

    @FunctionalInterface
    private interface WhileRejected {
        void check() throws Exception;
    }

    /**
     * Sets {@code key} of {@code pid}'s file to {@code bad} (replacing its line, or adding one), then
     * checks the rejection on /status and its one ERROR line, runs {@code whileRejected}, restores
     * the file and waits until the rejection is cleared.
     *
     * @param kept the value the component must still receive (read from the effective-configuration
     *        log line), or {@code null} to skip that check
     */
    private static void rejectOnce(String pid, String key, String bad, String reason, String kept,
            WhileRejected whileRejected) throws Exception {
        Path cfg = conf.resolve(pid + ".cfg");
        String original = Files.readString(cfg);
        String badLine = key + " = " + bad;
        boolean present = original.lines().anyMatch(l -> l.startsWith(key + " ") || l.startsWith(key + "="));
        String changed = present ? String.join("\n", original.lines().map(l -> l.startsWith(key + " ")
                || l.startsWith(key + "=") ? badLine : l).toList()) + "\n" : original + "\n" + badLine + "\n";
        String effectiveLine = "effective configuration " + pid + ":";
        int effectiveBefore = count(runtime.log(), effectiveLine);
        try {
            write(cfg, changed);
            JsonNode rejection = awaitRejection(pid, key);
            assertTrue(rejection.toString(), rejection.path("file").asText().endsWith(pid + ".cfg"));
            assertTrue(rejection.toString(), rejection.path("reason").asText().startsWith(reason));
            assertTrue(rejection.toString(), rejection.path("reason").asText().endsWith("'" + bad + "'"));
            String line = awaitErrorLine(pid + ".cfg");
            assertTrue(line, line.contains("(pid " + pid + "): key " + key + ": " + reason));
            assertTrue(line, line.contains("keeps its last good configuration"));
            if (kept != null) {
                // What the component receives: the logger reads the configuration as components do.
                String effective = awaitNth(effectiveBefore + 1, effectiveLine);
                assertTrue(effective, effective.contains(key + "=" + kept));
            }
            whileRejected.check();
        } finally {
            write(cfg, original);
        }
        awaitCleared(pid);
        assertEquals(pid, 1, errorLines(runtime.log(), pid + ".cfg").size());
    }

    private static JsonNode awaitStreaming() throws Exception {
        return runtime.awaitStatus("the change streamer streaming", null,
                s -> "streaming".equals(s.path("sections").path("changestreamer").path("state").asText()));
    }

    private static JsonNode awaitRejection(String pid, String key) throws Exception {
        JsonNode status = runtime.awaitStatus("the rejection of " + pid + " on /status", null,
                s -> find(s, pid, key) != null);
        return find(status, pid, key);
    }

    private static void awaitCleared(String pid) throws Exception {
        runtime.awaitStatus("the rejection of " + pid + " cleared", null, s -> {
            for (JsonNode r : s.path("sections").path("config").path("rejected")) {
                if (pid.equals(r.path("pid").asText())) {
                    return false;
                }
            }
            return s.path("sections").has("config");
        });
    }

    private static JsonNode find(JsonNode status, String pid, String key) {
        for (JsonNode r : status.path("sections").path("config").path("rejected")) {
            if (pid.equals(r.path("pid").asText()) && key.equals(r.path("key").asText())) {
                return r;
            }
        }
        return null;
    }

    /** The log is written by another process: polled, bounded. */
    private static String awaitErrorLine(String file) throws Exception {
        long deadline = System.nanoTime() + LauncherProcess.WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            List<String> lines = errorLines(runtime.log(), file);
            if (!lines.isEmpty()) {
                assertEquals(lines.toString(), 1, lines.size());
                return lines.get(0);
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        throw new AssertionError("no ERROR line for " + file);
    }

    private static String awaitNth(int n, String text) throws Exception {
        long deadline = System.nanoTime() + LauncherProcess.WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            List<String> lines = runtime.log().lines().filter(l -> l.contains(text)).toList();
            if (lines.size() >= n) {
                return lines.get(n - 1);
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        throw new AssertionError("fewer than " + n + " lines with " + text);
    }

    private static List<String> errorLines(String log, String file) {
        return log.lines().filter(l -> l.contains("ERROR") && l.contains(file)).toList();
    }

    private static int count(String log, String text) {
        return (int) log.lines().filter(l -> l.contains(text)).count();
    }

    private static void write(Path file, String text) throws IOException {
        // Written beside and renamed, so FileInstall never reads half a file.
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}

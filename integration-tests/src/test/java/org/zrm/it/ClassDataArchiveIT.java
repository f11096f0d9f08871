package org.zrm.it;

import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;

/**
 * The class data archive with the real runtime, started as a user starts it: a start that finds
 * no archive for this build writes one when it stops, and the next start's JVM really maps it
 * (the file is in its memory map), reaching the streaming state as usual. Whether this test's
 * first start is the build's first depends on the ITs before it; either way the second start
 * must map an archive.
 */
public class ClassDataArchiveIT {

    private static final Pattern MAPPING = Pattern.compile("class data {5}mapping (\\S+\\.jsa)");

    @Test
    public void theNextStartMapsTheArchiveAStartWroteWhenItStopped() throws Exception {
        try (PgDatabase database = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_cds")) {
            Path dir = Files.createTempDirectory("zrm-it-cds-");
            Map<String, String> env = Map.of("ZERO_UPSTREAM_DB", database.uri());
            int port = LauncherProcess.freePort();
            String first;
            try (LauncherProcess runtime = LauncherProcess.start(dir, port, env)) {
                awaitStreaming(runtime);
            }
            first = Files.readString(dir.resolve("runtime.log"));
            if (first.contains("class data     first start of this build")) {
                assertTrue(first, first.contains("zrm: class data archive: saved "));
            } else {
                assertTrue(first, MAPPING.matcher(first).find());
            }

            try (LauncherProcess runtime = LauncherProcess.start(dir, port, env)) {
                awaitStreaming(runtime);
                String log = Files.readString(dir.resolve("runtime.log")).substring(first.length());
                Matcher m = MAPPING.matcher(log);
                assertTrue(log, m.find());
                Path archive = Path.of(m.group(1));
                assertTrue(archive + " exists", Files.isRegularFile(archive));
                long pid = runtime.runtimeJvm().orElseThrow(() -> new AssertionError("no runtime JVM")).pid();
                String maps = Files.readString(Path.of("/proc/" + pid + "/maps"));
                assertTrue("the runtime JVM maps " + archive, maps.contains(archive.toString()));
            }
        }
    }

    private static void awaitStreaming(LauncherProcess runtime) throws Exception {
        runtime.awaitStatus("the change streamer streaming", null,
                s -> "streaming".equals(s.path("sections").path("changestreamer").path("state").asText()));
    }
}

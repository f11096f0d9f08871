package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.pgcluster.PgCluster;

/**
 * {@code zrm run} end to end, with {@link FakeRuntime} as the runtime jar: the folders, the
 * environment, the embedded PostgreSQL (started, handed over, stopped) and the exit code.
 */
class RunCommandTest {
    @TempDir
    Path tmp;
    private Path project;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<Thread> hooks = new ArrayList<>();

    @BeforeEach
    void fakeProject() throws Exception {
        // The embedded server runs as postgres when the tests run as root: it must reach the folder.
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        project = tmp.resolve("zrm");
        Files.createDirectories(project.resolve("runtime/conf"));
        Files.writeString(project.resolve("runtime/conf/org.zrm.changesource.pg.cfg"), "upstreamDb = $[env:ZERO_UPSTREAM_DB]\n");
        Files.writeString(project.resolve("runtime/conf/logback.xml"), "<configuration/>\n");
        writeFakeRuntimeJar(project.resolve("runtime/target/zrm.jar"));
    }

    @Test
    @Tag("pg")
    void startsTheEmbeddedPostgresHandsItToTheRuntimeAndStopsIt() throws Exception {
        Map<String, String> env = baseEnv();
        env.put("FAKE_RUNTIME_EXIT", "7");
        env.put("ZERO_ADMIN_PASSWORD", "hunter2");
        env.put("ZRM_JAVA_OPTS", "-Dfake.option='x y'");

        assertEquals(7, command(env).run(List.of()), this::output);

        Properties seen = seen();
        String upstream = seen.getProperty("env.ZERO_UPSTREAM_DB");
        assertTrue(upstream.matches("postgresql://postgres@127\\.0\\.0\\.1:\\d+/zrm"), upstream);
        assertEquals(upstream, seen.getProperty("env.ZERO_CHANGE_DB"));
        assertEquals("true", seen.getProperty("upstreamReachable"), "PostgreSQL runs while the runtime does");
        int zeroPort = Integer.parseInt(env.get("ZERO_PORT"));
        assertEquals(Integer.toString(zeroPort + 1), seen.getProperty("env.ZERO_CHANGE_STREAMER_PORT"));
        assertEquals(Integer.toString(zeroPort + 2), seen.getProperty("env.ZERO_LITESTREAM_PORT"));
        assertEquals(Integer.toString(zeroPort + 1), seen.getProperty("prop.org.osgi.service.http.port"));
        assertEquals(project.resolve("conf").toString(), seen.getProperty("prop.felix.fileinstall.dir"));
        assertEquals(project.resolve("conf").toString(), seen.getProperty("prop.zrm.config.dir"));
        assertEquals(project.resolve("deploy").toString(), seen.getProperty("prop.zrm.deploy.dir"));
        assertEquals(project.resolve("run").toString(), seen.getProperty("prop.zrm.state.dir"));
        assertEquals(project.resolve("run").toString(), seen.getProperty("prop.user.dir"));
        assertEquals(project.resolve("runtime/conf/logback.xml").toString(), seen.getProperty("prop.logback.configurationFile"));
        assertEquals("--nointeractive", seen.getProperty("prop.gosh.args"));
        assertEquals("x y", seen.getProperty("prop.fake.option"));
        assertTrue(Files.exists(project.resolve("conf/org.zrm.changesource.pg.cfg")), "config folder seeded");

        String output = output();
        assertTrue(output.contains("zrm:   postgres       embedded, 127.0.0.1:"), output);
        assertTrue(output.contains("zrm:   postgres bin   "), "the report says which binaries run: " + output);
        assertTrue(output.contains("zrm:   ZERO_UPSTREAM_DB=" + upstream + " (embedded)"), output);
        assertTrue(output.contains("zrm:   ZERO_CHANGE_DB=" + upstream + " (derived)"), output);
        assertTrue(output.contains("zrm:   ZERO_APP_ID=zero (default)"), output);
        assertTrue(output.contains("zrm:   ZERO_ADMIN_PASSWORD=****"), output);
        assertFalse(output.contains("hunter2"), "secrets are never printed");
        assertTrue(output.contains("zrm: stopping the embedded PostgreSQL"), output);
        assertFalse(Files.exists(project.resolve("run/pgdata/postmaster.pid")), "PostgreSQL was stopped");
        assertEquals(1, hooks.size(), "a shutdown hook guards Ctrl-C");

        // The data folder persists: the next run re-uses it, database zrm included.
        env.put("FAKE_RUNTIME_EXIT", "0");
        env.put("ZRM_EMBEDDED_PG_PORT", Integer.toString(freePort()));
        assertEquals(0, command(env).run(List.of()), this::output);
        assertEquals("postgresql://postgres@127.0.0.1:" + env.get("ZRM_EMBEDDED_PG_PORT") + "/zrm",
                seen().getProperty("env.ZERO_UPSTREAM_DB"));
        assertFalse(Files.exists(project.resolve("run/pgdata/postmaster.pid")));
        try (PgCluster pg = PgCluster.builder().dataDir(project.resolve("run/pgdata")).start();
                Connection c = pg.connect("zrm"); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT current_database()")) {
            assertTrue(rs.next());
        }
    }

    @Test
    void anExternalUpstreamStartsNoPostgresAndIsMasked() throws Exception {
        Map<String, String> env = baseEnv();
        env.put("ZERO_UPSTREAM_DB", "postgresql://app:s3cret@127.0.0.1:1/app");
        env.put("ZERO_PORT", "6000");
        assertEquals(0, command(env).run(List.of()), this::output);
        Properties seen = seen();
        assertEquals("postgresql://app:s3cret@127.0.0.1:1/app", seen.getProperty("env.ZERO_CHANGE_DB"), "the runtime gets the real value");
        assertEquals("6001", seen.getProperty("prop.org.osgi.service.http.port"));
        assertTrue(output().contains("ZERO_UPSTREAM_DB=postgresql://app:****@127.0.0.1:1/app\n"), output());
        assertTrue(output().contains("postgres       external"), output());
        assertFalse(output().contains("s3cret"), output());
        assertFalse(Files.exists(project.resolve("run/pgdata")), "no embedded PostgreSQL");
    }

    @Test
    void theFirstStartOfABuildWritesAClassDataArchiveThatLaterStartsMapAndARebuildReplaces() throws Exception {
        Map<String, String> env = baseEnv();
        env.put("ZERO_UPSTREAM_DB", "postgresql://app@127.0.0.1:1/app");
        Path cds = project.resolve("runtime/target/cds");

        assertEquals(0, command(env).run(List.of()), this::output);
        assertTrue(output().contains("class data     first start of this build"), this::output);
        assertTrue(seen().getProperty("jvm.args").contains("-XX:ArchiveClassesAtExit=" + cds), seen()::toString);
        List<Path> first = archives(cds);
        assertEquals(1, first.size(), first::toString);
        assertTrue(Files.size(first.get(0)) > 0);
        assertTrue(output().contains("class data archive: saved " + first.get(0)), this::output);

        out.reset();
        assertEquals(0, command(env).run(List.of()), this::output);
        assertTrue(seen().getProperty("jvm.args").contains("-XX:SharedArchiveFile=" + first.get(0)), seen()::toString);
        assertTrue(output().contains("class data     mapping " + first.get(0)), this::output);
        assertFalse(output().contains("class data archive:"), "nothing new is written: " + output());

        // A rebuilt runtime jar gets its own archive, and publishing it removes the old one; the
        // build gives the jar its newest entry's time, so a rebuild may keep the time.
        Path jar = project.resolve("runtime/target/zrm.jar");
        java.nio.file.attribute.FileTime built = Files.getLastModifiedTime(jar);
        writeFakeRuntimeJar(jar, "another build");
        Files.setLastModifiedTime(jar, built);
        out.reset();
        assertEquals(0, command(env).run(List.of()), this::output);
        assertTrue(seen().getProperty("jvm.args").contains("-XX:ArchiveClassesAtExit="), seen()::toString);
        List<Path> rebuilt = archives(cds);
        assertEquals(1, rebuilt.size(), rebuilt::toString);
        assertFalse(rebuilt.equals(first), "a new archive for the new jar");
    }

    @Test
    void javaOptionsThatChooseClassDataSharingThemselvesAreLeftAlone() throws Exception {
        Map<String, String> env = baseEnv();
        env.put("ZERO_UPSTREAM_DB", "postgresql://app@127.0.0.1:1/app");
        env.put("ZRM_JAVA_OPTS", "-Xshare:off");
        assertEquals(0, command(env).run(List.of()), this::output);
        String args = seen().getProperty("jvm.args");
        assertFalse(args.contains("SharedArchiveFile") || args.contains("ArchiveClassesAtExit"), args);
        assertTrue(output().contains("class data     not used: ZRM_JAVA_OPTS chooses class data sharing (-Xshare:off)"),
                this::output);
        assertFalse(Files.exists(project.resolve("runtime/target/cds")), "nothing written");
    }

    private static List<Path> archives(Path folder) throws Exception {
        try (var files = Files.list(folder)) {
            return files.sorted().toList();
        }
    }

    @Test
    void aRuntimeThatStopsItselfMakesTheLauncherExitNonZeroWithTheReason() throws Exception {
        Map<String, String> env = baseEnv();
        env.put("ZERO_UPSTREAM_DB", "postgresql://app@127.0.0.1:1/app");
        env.put("FAKE_RUNTIME_STOP_REASON", "backup monitor litestream3 reported a fatal condition: wedged");
        env.put("FAKE_RUNTIME_EXIT", "0"); // a framework stopped through its system bundle ends the JVM normally
        assertEquals(RunCommand.RUNTIME_STOPPED, command(env).run(List.of()), this::output);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains(
                "zrm: the runtime stopped itself: backup monitor litestream3 reported a fatal condition: wedged"),
                this::output);
    }

    @Test
    void aStopReasonLeftByAnEarlierRunIsNotTakenForThisOne() throws Exception {
        Files.createDirectories(project.resolve("run"));
        Files.writeString(project.resolve("run/" + RunCommand.STOP_REASON_FILE), "old reason\n");
        Map<String, String> env = baseEnv();
        env.put("ZERO_UPSTREAM_DB", "postgresql://app@127.0.0.1:1/app");
        assertEquals(0, command(env).run(List.of()), this::output);
        assertFalse(output().contains("old reason"), this::output);
    }

    @Test
    void aChangeStreamerPortHeldByAnotherProcessStopsTheLaunchWithHowToChooseAnother() throws Exception {
        try (java.net.ServerSocket held = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            Map<String, String> env = baseEnv();
            env.put("ZERO_UPSTREAM_DB", "postgresql://app@127.0.0.1:1/app");
            env.put("ZRM_BIND_ADDRESS", "127.0.0.1");
            env.put("ZERO_CHANGE_STREAMER_PORT", Integer.toString(held.getLocalPort()));
            LaunchException e = assertThrows(LaunchException.class, () -> command(env).run(List.of()));
            assertTrue(e.getMessage().startsWith("the change-streamer port " + held.getLocalPort() + " on 127.0.0.1 cannot be bound ("),
                    e.getMessage());
            assertTrue(e.getMessage().endsWith("set ZERO_CHANGE_STREAMER_PORT (default ZERO_PORT + 1) to a free port"),
                    e.getMessage());
            assertFalse(Files.exists(project.resolve("run/fake-runtime.properties")), "the runtime was not started");
        }
    }

    @Test
    void invalidEnvironmentStopsBeforeAnythingStarts() {
        Map<String, String> env = baseEnv();
        env.put("ZERO_APP_ID", "Bad");
        env.put("ZERO_SHARD_ID", "x");
        assertEquals(Cli.USAGE_ERROR, command(env).run(List.of()));
        assertEquals("zrm: ZERO_APP_ID must match ^[a-z0-9_]+$ (lower-case letters, digits, underscores), got 'Bad'\n"
                + "zrm: ZERO_SHARD_ID is no longer an option. Please use ZERO_APP_ID instead.\n", err.toString(StandardCharsets.UTF_8));
        assertFalse(Files.exists(project.resolve("run")), "nothing was created");
        assertEquals(List.of(), hooks);
    }

    @Test
    void aMissingRuntimeJarSaysHowToBuildIt() throws Exception {
        Files.delete(project.resolve("runtime/target/zrm.jar"));
        LaunchException e = assertThrows(LaunchException.class, () -> command(baseEnv()).run(List.of()));
        assertEquals(project.resolve("runtime/target/zrm.jar") + " is missing; build the project first: cd " + project
                + " && mvn -B install -DskipTests", e.getMessage());
    }

    private RunCommand command(Map<String, String> env) {
        Path java = Path.of(ProcessHandle.current().info().command().orElseThrow());
        return new RunCommand(env, new FolderResolver(env, Path.of("/nowhere"), tmp), new ChildCommand(java, false),
                hooks::add, Duration.ofSeconds(10), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private Map<String, String> baseEnv() {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", System.getenv("PATH"));
        env.put("ZRM_HOME", project.toString());
        // Not the default 4848/4849, which a ZRM or zero-cache running on this machine may hold.
        try {
            env.put("ZERO_PORT", Integer.toString(org.zrm.testing.LoopbackPorts.freeRun(3)));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return env;
    }

    private Properties seen() throws Exception {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(project.resolve("run/fake-runtime.properties"))) {
            p.load(r);
        }
        return p;
    }

    private String output() {
        return out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
    }

    private static int freePort() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    private static void writeFakeRuntimeJar(Path jar) throws Exception {
        writeFakeRuntimeJar(jar, "first build");
    }

    private static void writeFakeRuntimeJar(Path jar, String build) throws Exception {
        Files.createDirectories(jar.getParent());
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, FakeRuntime.class.getName());
        String entry = FakeRuntime.class.getName().replace('.', '/') + ".class";
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file, manifest);
                InputStream in = FakeRuntime.class.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
            out.closeEntry();
            out.putNextEntry(new JarEntry("build.txt"));
            out.write(build.getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
    }
}

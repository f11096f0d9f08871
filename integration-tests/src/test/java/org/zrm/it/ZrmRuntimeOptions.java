package org.zrm.it;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.frameworkStartLevel;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.ops4j.pax.exam.Option;
import org.zrm.testing.LoopbackPorts;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;

/**
 * Pax Exam options that reproduce the shipped runtime: every bundle the resolver put into
 * {@code runtime/zrm.bndrun}, taken from the exported folder, at the start level the bndrun
 * assigned, plus the framework properties the bndrun sets (Pax Exam does not read bndrun files).
 */
final class ZrmRuntimeOptions {

    /** Framework properties the test reads back to find its folders and port. */
    static final String CONFIG_DIR = "felix.fileinstall.dir";
    static final String DEPLOY_DIR = "zrm.deploy.dir";
    static final String HTTP_PORT = "org.osgi.service.http.port";
    /** A second deploy folder, named only through a property, for the interpolation test. */
    static final String ALT_DEPLOY_DIR = "zrm.it.alt.deploy";
    /** URI of the throwaway upstream/change database the runtime's components are configured with. */
    static final String UPSTREAM_URI = "zrm.it.upstream";
    /** JDBC URL of the same database, for tests that read upstream and the change log directly. */
    static final String UPSTREAM_JDBC = "zrm.it.upstream.jdbc";
    /** The SQLite replica file the change source's initial sync creates and the replicator keeps up to date. */
    static final String REPLICA_FILE = "zrm.it.replica";

    private static final Pattern RUNBUNDLE = Pattern.compile("^\\s*([\\w.\\-]+);version='[^']*';startlevel=(\\d+)");

    private ZrmRuntimeOptions() {
    }

    /** How much of the pipeline beyond the storer and the change source a test runtime configures. */
    private enum Streamer {
        /** Neither the change streamer nor the replicator is configured (their components stay unsatisfied). */
        NONE,
        /** Both configured; the streamer streams from the Postgres change source at once. */
        STREAMING,
        /** Both configured, but the streamer never finds a source and so never touches the change log's config. */
        IDLE
    }

    /**
     * The type of {@link IdleChangeSource}, which an {@link Streamer#IDLE} streamer selects: its
     * initialization never ends.
     */
    static final String NO_SOURCE_TYPE = "zrm-it-none";

    /**
     * The runtime with the storer and the change source configured only. The change streamer and
     * the replicator stay unconfigured, so {@code /status} is not healthy: for tests that do not
     * look at health.
     */
    static Option[] options(Path workDir) {
        return options(workDir, Streamer.NONE, List.of());
    }

    /**
     * The runtime with the whole replication pipeline switched on: besides the storer and the
     * change source, the change streamer (no start-up delay, so it streams without a serving
     * subscriber) and the in-process backup replicator writing {@link #REPLICA_FILE} are
     * configured. {@code upstreamSql} runs against the fresh upstream database before the
     * framework starts, so the tables it creates are part of the initial sync.
     */
    static Option[] streamingOptions(Path workDir, String... upstreamSql) {
        return options(workDir, Streamer.STREAMING, List.of(upstreamSql));
    }

    /**
     * {@link #streamingOptions(Path, String...)} with more lines for the change source's
     * configuration (e.g. {@code app.publications = …}).
     */
    static Option[] streamingOptionsWithSourceConfig(Path workDir, String sourceConfig, String... upstreamSql) {
        return options(workDir, Streamer.STREAMING, List.of(upstreamSql), sourceConfig);
    }

    /**
     * The runtime with every ZRM component configured (so {@code /status} can be healthy), but
     * with a change streamer that stays idle: it selects {@link IdleChangeSource} (installed as a
     * bundle of its own), whose initialization never ends, and its start-up delay is an hour. The
     * streamer only migrates the change-log schema and looks (without keeping a lock) for the
     * oldest change-log row to protect from purging; it never gets a replica version, never calls
     * {@code ensureReplicationConfig} and never takes ownership. The replicator waits for a replica
     * file no initial sync creates. For tests that drive the {@code ChangeLog} themselves.
     */
    static Option[] idleStreamerOptions(Path workDir) {
        return options(workDir, Streamer.IDLE, List.of());
    }

    /**
     * A one-class bundle holding {@link IdleChangeSource}, written as a jar by hand so that the
     * tests need no bundle-building library.
     */
    private static Path idleSourceBundle(Path workDir) {
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Bundle-ManifestVersion", "2");
        main.putValue("Bundle-SymbolicName", "zrm.it.idlesource");
        main.putValue("Bundle-Version", "1.0.0");
        main.putValue("Bundle-Activator", IdleChangeSource.class.getName());
        main.putValue("Import-Package", "org.osgi.framework,org.zrm.changesource,org.zrm.protocol");
        String entry = IdleChangeSource.class.getName().replace('.', '/') + ".class";
        Path jar = workDir.resolve("zrm-it-idlesource.jar");
        try (InputStream in = IdleChangeSource.class.getClassLoader().getResourceAsStream(entry);
                JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
            if (in == null) {
                throw new IllegalStateException("no class file " + entry + " on the test class path");
            }
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
            out.closeEntry();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return jar;
    }

    private static Option[] options(Path workDir, Streamer streamer, List<String> upstreamSql) {
        return options(workDir, streamer, upstreamSql, "");
    }

    private static Option[] options(Path workDir, Streamer streamer, List<String> upstreamSql, String sourceConfig) {
        Path runtime = Path.of(System.getProperty("zrm.runtime.dir", "../runtime")).toAbsolutePath().normalize();
        Path exported = runtime.resolve("target/export/zrm");
        if (!Files.isDirectory(exported)) {
            throw new IllegalStateException("no exported runtime at " + exported + "; build the runtime module first");
        }
        Map<String, Integer> startLevels = startLevels(runtime.resolve("zrm.bndrun"));
        List<Option> options = new ArrayList<>();
        Map<Path, Integer> levels = new HashMap<>();
        int highest = 1;
        for (Path jar : jars(exported)) {
            String bsn = symbolicName(jar);
            Integer level = startLevels.get(bsn);
            if (level == null) {
                throw new IllegalStateException(jar + " (" + bsn + ") is exported but not in zrm.bndrun -runbundles");
            }
            highest = Math.max(highest, level);
            levels.put(jar, level);
        }
        // Pax Exam's own bundles start at level 2 and log through SLF4J; if SLF4J initialises before
        // SPI Fly has registered logback, it binds the no-op logger for good and the runtime's log
        // lines are lost. So the bundles up to slf4j.api's level (SPI Fly and the logging chain)
        // start at level 1, installed by level and then by name (SPI Fly's level first), an order
        // Felix keeps within one level.
        int loggingLevel = startLevels.getOrDefault("slf4j.api", 0);
        levels.entrySet().stream().sorted(Map.Entry.<Path, Integer>comparingByValue()
                .thenComparing(Map.Entry.comparingByKey())).forEach(e ->
                options.add(bundle(e.getKey().toUri().toString()).startLevel(e.getValue() <= loggingLevel ? 1 : e.getValue())));
        Path config = mkdirs(workDir.resolve("conf"));
        Path deploy = mkdirs(workDir.resolve("deploy"));
        // A real PostgreSQL for the storer and the change source, configured the way an operator
        // would: .cfg files in the watched folder. The cluster lives as long as this JVM.
        PgDatabase database = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_it");
        String upstream = database.uri();
        Path replica = workDir.resolve("replica.db");
        int httpPort = freePort();
        runSql(database, upstreamSql);
        // The node's identity, shared by every component (DS multiple configuration PIDs).
        writeConfig(config.resolve("org.zrm.identity.cfg"), "replica.file = " + replica + "\n"
                + "task.id = zrm-it\n");
        writeConfig(config.resolve("org.zrm.storer.cfg"), "change.db = " + upstream + "\n");
        writeConfig(config.resolve("org.zrm.changesource.pg.cfg"), "upstream.db = " + upstream + "\n" + sourceConfig);
        if (streamer != Streamer.NONE) {
            boolean idle = streamer == Streamer.IDLE;
            if (idle) {
                options.add(bundle(idleSourceBundle(workDir).toUri().toString()));
            }
            writeConfig(config.resolve("org.zrm.changestreamer.cfg"),
                    "changeStreamer.address = 127.0.0.1:" + httpPort + "\n"
                    + (idle ? "changeSource.target = (zrm.changesource.type=" + NO_SOURCE_TYPE + ")\n" : "")
                    + "changeStreamer.startupDelayMs = " + (idle ? 3_600_000 : 0) + "\n");
            // Short retries: the replicator polls for the replica file until the initial sync is done.
            writeConfig(config.resolve("org.zrm.replicator.cfg"), "upstream.target = (zrm.replicator.upstream=in-process)\n"
                    + "replicator.retryInitialMs = 100\n"
                    + "replicator.retryMaxMs = 1000\n");
            // Every backup monitor configured, so that /status can be healthy; the active one (replica,
            // by the auto rule) waits an hour before its first read, so no test's change log is purged
            // under it. BackupSwapIT overwrites these files with short intervals.
            writeConfig(config.resolve("org.zrm.backup.cfg"), "strategy = auto\nexitOnFatal = false\n");
            // replica.file is repeated here although the identity has it: a component's own file may
            // override it, and the backup ITs rewrite these files from their replica.file line.
            writeConfig(config.resolve("org.zrm.backup.replica.cfg"), "replica.file = " + replica + "\n"
                    + "replica.monitor.initialDelayMs = 3600000\n");
            writeConfig(config.resolve("org.zrm.backup.litestream3.cfg"), "replica.file = " + replica + "\n"
                    + "litestream.backupURL = \n");
            writeConfig(config.resolve("org.zrm.backup.vfs.cfg"), "litestream.backupURL = \n");
            writeConfig(config.resolve("org.zrm.litestream.cfg"), "replica.file = " + replica + "\n"
                    + "litestream.backupURL = \n");
        }
        options.add(junitBundles());
        options.add(frameworkStartLevel(highest + 1));
        options.add(systemProperty(CONFIG_DIR).value(config.toString()));
        options.add(systemProperty(UPSTREAM_URI).value(upstream));
        options.add(systemProperty(UPSTREAM_JDBC).value(database.jdbcUrl()));
        options.add(systemProperty(REPLICA_FILE).value(replica.toString()));
        options.add(systemProperty(DEPLOY_DIR).value(deploy.toString()));
        options.add(systemProperty(ALT_DEPLOY_DIR).value(mkdirs(workDir.resolve("deploy-alt")).toString()));
        options.add(systemProperty(HTTP_PORT).value(Integer.toString(httpPort)));
        options.add(systemProperty("org.apache.felix.http.host").value("127.0.0.1"));
        options.add(systemProperty("org.apache.felix.jetty.websocket.enable").value("true"));
        options.add(systemProperty("felix.cm.config.plugins").value(
                "org.apache.felix.configadmin.plugin.interpolation,org.zrm.admin.configvalidation"));
        options.add(systemProperty("felix.fileinstall.poll").value("200"));
        options.add(systemProperty("felix.fileinstall.noInitialDelay").value("true"));
        options.add(systemProperty("felix.fileinstall.enableConfigSave").value("false"));
        options.add(systemProperty("org.osgi.service.log.admin.loglevel").value("DEBUG"));
        options.add(systemProperty("gosh.args").value("--nointeractive"));
        options.add(systemProperty("logback.configurationFile").value(runtime.resolve("conf/logback.xml").toString()));
        return options.toArray(Option[]::new);
    }

    static Map<String, Integer> startLevels(Path bndrun) {
        Map<String, Integer> levels = new HashMap<>();
        try {
            for (String line : Files.readAllLines(bndrun)) {
                Matcher m = RUNBUNDLE.matcher(line);
                if (m.find()) {
                    levels.put(m.group(1), Integer.parseInt(m.group(2)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (levels.isEmpty()) {
            throw new IllegalStateException(bndrun + " has no resolved -runbundles");
        }
        return levels;
    }

    private static List<Path> jars(Path folder) {
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(p -> p.toString().endsWith(".jar")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String symbolicName(Path jar) {
        try (JarFile file = new JarFile(jar.toFile())) {
            String bsn = file.getManifest().getMainAttributes().getValue("Bundle-SymbolicName");
            return bsn.split(";")[0].trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeConfig(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void runSql(PgDatabase database, List<String> statements) {
        if (statements.isEmpty()) {
            return;
        }
        try (Connection c = database.connect(); Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("upstream set-up failed on " + database + ": " + e.getMessage(), e);
        }
    }

    private static Path mkdirs(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int freePort() {
        try {
            return LoopbackPorts.freeRun(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

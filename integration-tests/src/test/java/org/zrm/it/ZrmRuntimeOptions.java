package org.zrm.it;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.frameworkStartLevel;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.ops4j.pax.exam.Option;
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

    private static final Pattern RUNBUNDLE = Pattern.compile("^\\s*([\\w.\\-]+);version='[^']*';startlevel=(\\d+)");

    private ZrmRuntimeOptions() {
    }

    static Option[] options(Path workDir) {
        Path runtime = Path.of(System.getProperty("zrm.runtime.dir", "../runtime")).toAbsolutePath().normalize();
        Path exported = runtime.resolve("target/export/zrm");
        if (!Files.isDirectory(exported)) {
            throw new IllegalStateException("no exported runtime at " + exported + "; build the runtime module first");
        }
        Map<String, Integer> startLevels = startLevels(runtime.resolve("zrm.bndrun"));
        List<Option> options = new ArrayList<>();
        int highest = 1;
        for (Path jar : jars(exported)) {
            String bsn = symbolicName(jar);
            Integer level = startLevels.get(bsn);
            if (level == null) {
                throw new IllegalStateException(jar + " (" + bsn + ") is exported but not in zrm.bndrun -runbundles");
            }
            highest = Math.max(highest, level);
            options.add(bundle(jar.toUri().toString()).startLevel(level));
        }
        Path config = mkdirs(workDir.resolve("conf"));
        Path deploy = mkdirs(workDir.resolve("deploy"));
        // A real PostgreSQL for the storer and the change source, configured the way an operator
        // would: .cfg files in the watched folder. The cluster lives as long as this JVM.
        String upstream = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_it").uri();
        writeConfig(config.resolve("org.zrm.storer.cfg"), "change.db = " + upstream + "\n");
        writeConfig(config.resolve("org.zrm.changesource.pg.cfg"), "upstream.db = " + upstream + "\n"
                + "replica.file = " + workDir.resolve("replica.db") + "\n");
        options.add(junitBundles());
        options.add(frameworkStartLevel(highest + 1));
        options.add(systemProperty(CONFIG_DIR).value(config.toString()));
        options.add(systemProperty(UPSTREAM_URI).value(upstream));
        options.add(systemProperty(DEPLOY_DIR).value(deploy.toString()));
        options.add(systemProperty(ALT_DEPLOY_DIR).value(mkdirs(workDir.resolve("deploy-alt")).toString()));
        options.add(systemProperty(HTTP_PORT).value(Integer.toString(freePort())));
        options.add(systemProperty("org.apache.felix.http.host").value("127.0.0.1"));
        options.add(systemProperty("org.apache.felix.jetty.websocket.enable").value("true"));
        options.add(systemProperty("felix.cm.config.plugins").value("org.apache.felix.configadmin.plugin.interpolation"));
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

    private static Path mkdirs(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;
import org.zrm.testing.LoopbackPorts;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;

/**
 * ZRM deployed into a stock Apache Felix (the {@code org.apache.felix.main} launcher from Maven
 * Central, as a user runs it), not the packaged runtime: the exported bundles go into its
 * {@code bundle/} folder and start at the levels of {@code runtime/zrm.bndrun} (through Felix's
 * own {@code felix.auto.start.<level>} properties), the shipped {@code .cfg} files into the folder
 * FileInstall watches. One change flows from Postgres to a WebSocket subscriber.
 * {@code docs/DEPLOYING.md} describes the same set-up for users.
 */
public class StockFelixIT {

    private static final Duration WAIT = Duration.ofSeconds(120);

    @Test
    public void oneChangeFlowsThroughZrmBundlesInAStockFelix() throws Exception {
        Path target = Path.of(System.getProperty("zrm.it.target", "target")).toAbsolutePath();
        Path felixJar = target.resolve("stock-felix/felix.jar");
        assertTrue(felixJar + " is missing (maven-dependency-plugin copies it)", Files.isRegularFile(felixJar));
        Path runtime = Path.of(System.getProperty("zrm.runtime.dir", "../runtime")).toAbsolutePath().normalize();
        Path exported = runtime.resolve("target/export/zrm");
        Map<String, Integer> levels = ZrmRuntimeOptions.startLevels(runtime.resolve("zrm.bndrun"));

        Path dir = Files.createTempDirectory("zrm-it-stock-felix-");
        Path bundles = Files.createDirectories(dir.resolve("bundle"));
        Path conf = Files.createDirectories(dir.resolve("load"));
        Map<Integer, StringBuilder> byLevel = new TreeMap<>();
        try (Stream<Path> jars = Files.list(exported)) {
            for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
                String bsn;
                try (JarFile j = new JarFile(jar.toFile())) {
                    bsn = j.getManifest().getMainAttributes().getValue("Bundle-SymbolicName").split(";")[0].strip();
                }
                Integer level = levels.get(bsn);
                assertTrue(bsn + " is exported but has no start level in zrm.bndrun", level != null);
                Path copy = bundles.resolve(jar.getFileName());
                Files.copy(jar, copy, StandardCopyOption.REPLACE_EXISTING);
                byLevel.computeIfAbsent(level, l -> new StringBuilder()).append(' ').append(copy.toUri());
            }
        }
        try (Stream<Path> cfgs = Files.list(runtime.resolve("conf"))) {
            for (Path cfg : cfgs.filter(p -> p.toString().endsWith(".cfg")).toList()) {
                Files.copy(cfg, conf.resolve(cfg.getFileName()));
            }
        }
        int port = freePort();
        int top = byLevel.keySet().stream().mapToInt(Integer::intValue).max().orElse(1);
        StringBuilder props = new StringBuilder();
        props.append("org.osgi.framework.storage=").append(dir.resolve("felix-cache").toUri().getPath()).append('\n');
        props.append("org.osgi.framework.storage.clean=onFirstInit\n");
        props.append("felix.auto.deploy.action=\n");
        props.append("org.osgi.framework.startlevel.beginning=").append(top).append('\n');
        byLevel.forEach((level, urls) -> props.append("felix.auto.start.").append(level).append('=').append(urls.toString().strip())
                .append('\n'));
        // What runtime/zrm.bndrun's -runproperties set, plus the folders and port the launcher passes.
        props.append("""
                org.apache.felix.jetty.websocket.enable=true
                org.apache.felix.http.enable=true
                felix.cm.config.plugins=org.apache.felix.configadmin.plugin.interpolation
                felix.fileinstall.poll=1000
                felix.fileinstall.noInitialDelay=true
                felix.fileinstall.enableConfigSave=false
                gosh.args=--nointeractive
                org.apache.felix.http.host=127.0.0.1
                """);
        props.append("felix.fileinstall.dir=").append(conf).append('\n');
        props.append("org.osgi.service.http.port=").append(port).append('\n');
        Path configProperties = dir.resolve("config.properties");
        Files.writeString(configProperties, props.toString());

        PgDatabase database = PgDatabase.create(TestPostgres.jvmCluster(), "zrm_felix");
        try (Connection c = database.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE felix_t (id int8 PRIMARY KEY, label text)");
        }
        Path log = dir.resolve("felix.log");
        ProcessBuilder pb = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
                "-Dfelix.config.properties=" + configProperties.toUri(),
                "-Dlogback.configurationFile=" + runtime.resolve("conf/logback.xml"),
                "-jar", felixJar.toString()).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("ZERO_") || k.startsWith("ZRM_"));
        pb.environment().put("ZERO_UPSTREAM_DB", database.uri());
        pb.environment().put("ZERO_CHANGE_DB", database.uri());
        pb.environment().put("ZERO_REPLICA_FILE", dir.resolve("replica.db").toString());
        pb.environment().put("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "0");
        Process felix = pb.start();
        HttpClient http = HttpClient.newHttpClient();
        try {
            String replicaVersion = awaitStreaming(http, port, felix, log);
            ChangesClient sub = ChangesClient.connect(http, ChangesClient.changesUri(Integer.toString(port), 6,
                    ChangesClient.query("stock-felix", replicaVersion, replicaVersion)));
            assertEquals("status", sub.awaitFirstFrame().type());
            try (Connection c = database.connect(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO felix_t VALUES (7, 'through a stock Felix')");
            }
            // A lag report may come first as a transaction of its own, without rows.
            ChangesClient.Transaction tx = sub.nextTransaction();
            for (int i = 0; i < 5 && tx.ids().isEmpty(); i++) {
                tx = sub.nextTransaction();
            }
            assertEquals(tx.toString(), List.of(7L), tx.ids());
            sub.close();
        } finally {
            felix.destroy();
            if (!felix.waitFor(60, TimeUnit.SECONDS)) {
                felix.destroyForcibly();
            }
            database.close();
        }
    }

    /** Polls the external process's {@code /status} (nothing else to wait on), bounded. */
    private static String awaitStreaming(HttpClient http, int port, Process felix, Path log) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            assertTrue("Felix exited: " + Files.readString(log), felix.isAlive());
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/status"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                last = r.body();
                var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(last);
                var cs = json.path("sections").path("changestreamer");
                if ("streaming".equals(cs.path("state").asText()) && cs.hasNonNull("replicaVersion")) {
                    return cs.get("replicaVersion").asText();
                }
            } catch (IOException e) {
                last = e.toString();
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new AssertionError("not streaming within " + WAIT + ": " + last + "\n" + Files.readString(log).lines()
                .filter(l -> l.contains("ERROR") || l.contains("WARN")).collect(Collectors.joining("\n")));
    }

    private static int freePort() throws IOException {
        return LoopbackPorts.freeRun(1);
    }
}

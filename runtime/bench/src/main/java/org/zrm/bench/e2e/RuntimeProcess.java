package org.zrm.bench.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The real ZRM runtime in a child process, started the way a user starts it ({@code zrm-launcher.jar
 * run} with {@code ZERO_*} variables), so that the end-to-end benchmarks measure the product as
 * deployed: Felix, the bundles, the shipped configuration, the WebSocket endpoint.
 *
 * <p>Each instance gets its own configuration, state and deploy folders under the benchmark's
 * work folder; the configuration folder is seeded from {@code runtime/conf} with the overrides the
 * caller passes (the launcher leaves a non-empty folder alone).
 */
final class RuntimeProcess implements ChangeStreamerProcess {

    /** How often {@link #cpuNanos} looks for the runtime's processes again: once a second. */
    private static final long TREE_REFRESH_NANOS = 1_000_000_000L;

    private final Process process;
    private final int port;
    private final Path log;
    /** One client for every probe: a new one per request starts threads of its own each time. */
    private final HttpClient http = HttpClient.newHttpClient();
    /** What {@link #processTree} found last, and when; guarded by this. */
    private List<ProcessHandle> tree;
    private long treeFoundNanos;

    private RuntimeProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Starts the runtime and waits until its HTTP endpoint answers.
     *
     * @param home the project folder
     * @param dir this instance's folder (created)
     * @param env {@code ZERO_*} variables (upstream and change DB, app id, ports)
     * @param cfgOverrides per-PID properties appended to the seeded {@code <pid>.cfg}; a PID mapped
     *     to {@code null} has its file removed (its component stays unconfigured)
     */
    static RuntimeProcess start(Path home, Path dir, Map<String, String> env, int zeroPort,
            Map<String, Map<String, String>> cfgOverrides) throws IOException, InterruptedException {
        Path conf = dir.resolve("conf");
        Path state = dir.resolve("state");
        Path deploy = dir.resolve("deploy");
        Files.createDirectories(state);
        Files.createDirectories(deploy);
        if (!Files.isDirectory(conf)) {
            Files.createDirectories(conf);
            try (var shipped = Files.newDirectoryStream(home.resolve("runtime/conf"))) {
                for (Path f : shipped) {
                    Files.copy(f, conf.resolve(f.getFileName()));
                }
            }
            for (var e : cfgOverrides.entrySet()) {
                Path cfg = conf.resolve(e.getKey() + ".cfg");
                if (e.getValue() == null) {
                    Files.deleteIfExists(cfg);
                    continue;
                }
                StringBuilder extra = new StringBuilder("\n# benchmark overrides\n");
                e.getValue().forEach((k, v) -> extra.append(k).append(" = ").append(v).append('\n'));
                Files.writeString(cfg, extra.toString(), java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.APPEND);
            }
        }
        Path launcher = home.resolve("runtime/launcher/target/zrm-launcher.jar");
        if (!Files.isRegularFile(launcher)) {
            throw new IOException(launcher + " is missing; build with `mvn -B -ntp install -DskipTests`");
        }
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-jar", launcher.toString(), "run"));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        Path log = dir.resolve("runtime.log");
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        pb.environment().put("ZRM_HOME", home.toString());
        pb.environment().put("ZRM_CONFIG_DIR", conf.toString());
        pb.environment().put("ZRM_STATE_DIR", state.toString());
        pb.environment().put("ZRM_DEPLOY_DIR", deploy.toString());
        pb.environment().put("ZERO_PORT", Integer.toString(zeroPort));
        RuntimeProcess rp = new RuntimeProcess(pb.start(), zeroPort + 1, log);
        try {
            HealthCheck.await(rp.process, rp.port, Duration.ofSeconds(120), "the runtime", log);
            // "/" answers as soon as the admin bundle is up; the replication servlet may register a
            // moment later, and a subscriber connecting before it gets a 404 upgrade refusal.
            HealthCheck.await(rp.process, rp.port, "/replication/v6/changes", code -> code != 404, Duration.ofSeconds(60),
                    "the runtime's replication endpoint", log);
        } catch (IOException | RuntimeException e) {
            // A runtime that never became healthy is nobody's to stop once this throws: a failed
            // run left one behind, holding its slot and its folder.
            rp.close();
            throw e;
        }
        return rp;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public Path log() {
        return log;
    }

    /**
     * @return CPU nanoseconds the runtime's processes (the launcher and the Felix JVM under it) have
     *     used so far, from {@code /proc}; 0 where there is none
     */
    synchronized long cpuNanos() {
        long total = 0;
        for (ProcessHandle h : processTree()) {
            try {
                total += org.zrm.bench.ProcStat.read(Path.of("/proc", Long.toString(h.pid()), "stat")).cpuNanos();
            } catch (IOException gone) {
                // no /proc, or the process ended meanwhile: it adds nothing more
            }
        }
        return total;
    }

    /**
     * The launcher and its descendants, found again at most once per {@link #TREE_REFRESH_NANOS}.
     * Finding descendants reads the {@code stat} file of every process on the machine (hundreds
     * with the clusters' backends), and {@link CpuFrameSampler} asks every 20 ms: done each time,
     * the benchmark's sampling thread used about 6 % of a core, taken from the system it measures on
     * 2 cores. The tree is the launcher and the JVM it starts, fixed once the runtime is up.
     */
    private List<ProcessHandle> processTree() {
        long now = System.nanoTime();
        if (tree == null || now - treeFoundNanos > TREE_REFRESH_NANOS) {
            tree = java.util.stream.Stream.concat(java.util.stream.Stream.of(process.toHandle()),
                    process.descendants()).toList();
            treeFoundNanos = now;
        }
        return tree;
    }

    /** {@code GET /status} as text. */
    String status() throws IOException, InterruptedException {
        return get("/status");
    }

    /** {@code GET /metrics} (Prometheus text) as text. */
    String metrics() throws IOException, InterruptedException {
        return get("/metrics");
    }

    private String get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The change streamer's section of {@code /status} without its subscriber list. */
    @Override
    public Object statusSummary() {
        try {
            var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
            var node = mapper.readTree(status()).path("sections").path("changestreamer");
            if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode o) {
                o.remove("subscribers");
            }
            return mapper.convertValue(node, Map.class);
        } catch (Exception e) {
            return "unavailable: " + e;
        }
    }

    /** Stops the launcher (SIGTERM), which stops the runtime and waits for it. */
    @Override
    public void close() throws InterruptedException {
        ProcessTree.stop(process);
    }
}

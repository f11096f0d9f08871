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
import java.util.concurrent.TimeUnit;

/**
 * The real ZRM runtime in a child process, started the way a user starts it ({@code zrm-launcher.jar
 * run} with {@code ZERO_*} variables), so that the end-to-end benchmarks measure the product as
 * deployed: Felix, the bundles, the shipped configuration, the WebSocket endpoint.
 *
 * <p>Each instance gets its own configuration, state and deploy folders under the benchmark's
 * work folder; the configuration folder is seeded from {@code runtime/conf} with the overrides the
 * caller passes (the launcher leaves a non-empty folder alone).
 */
final class RuntimeProcess implements AutoCloseable {

    private final Process process;
    private final int port;
    private final Path log;

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
        rp.awaitHttp(Duration.ofSeconds(120));
        return rp;
    }

    /** The change-streamer port ({@code ZERO_PORT + 1}). */
    int port() {
        return port;
    }

    Path log() {
        return log;
    }

    /**
     * Polls {@code GET /} until it answers {@code OK}: the runtime offers no start-up signal to
     * another process, so this is a bounded poll every 100 ms of an external process.
     */
    private void awaitHttp(Duration timeout) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("the runtime exited with " + process.exitValue() + "; see " + log);
            }
            try {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                        .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // connection refused while Felix starts
            }
            Thread.sleep(100);
        }
        throw new IOException("the runtime did not answer on port " + port + " within " + timeout + "; see " + log);
    }

    /** {@code GET /status} as text. */
    String status() throws IOException, InterruptedException {
        HttpClient client = HttpClient.newHttpClient();
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/status"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Stops the launcher (SIGTERM), which stops the runtime and waits for it. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        // The launcher's child can outlive a forcibly killed launcher; never leave it running.
        process.descendants().forEach(ProcessHandle::destroyForcibly);
    }
}

package org.zrm.it;

import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.zrm.testing.LoopbackPorts;

/**
 * The runtime as a user starts it, {@code zrm-launcher.jar run}, in a child process with its own
 * folders under {@code dir}: for tests that need the whole process (its log, a kill -9). Starting
 * again on the same {@code dir} is a restart of the same node.
 */
final class LauncherProcess implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final Process process;
    private final Path log;
    private final int port;

    private LauncherProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /**
     * @param dir the node's folder (conf, state, deploy and the log go below it)
     * @param zeroPort {@code ZERO_PORT}; the change streamer listens on the next port
     * @param env the {@code ZERO_*}/{@code ZRM_*} variables; others of the test JVM are removed
     */
    static LauncherProcess start(Path dir, int zeroPort, Map<String, String> env) throws IOException {
        Path home = Path.of(System.getProperty("zrm.runtime.dir", "../runtime")).toAbsolutePath().normalize().getParent();
        Path launcher = home.resolve("runtime/launcher/target/zrm-launcher.jar");
        assertTrue(launcher + " is missing; build the project first", Files.isRegularFile(launcher));
        Path log = dir.resolve("runtime.log");
        ProcessBuilder pb = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar",
                launcher.toString(), "run").directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().keySet().removeIf(k -> k.startsWith("ZERO_") || k.startsWith("ZRM_"));
        pb.environment().put("ZRM_HOME", home.toString());
        pb.environment().put("ZRM_CONFIG_DIR", Files.createDirectories(dir.resolve("conf")).toString());
        pb.environment().put("ZRM_STATE_DIR", Files.createDirectories(dir.resolve("state")).toString());
        pb.environment().put("ZRM_DEPLOY_DIR", Files.createDirectories(dir.resolve("deploy")).toString());
        pb.environment().put("ZRM_BIND_ADDRESS", "127.0.0.1");
        pb.environment().put("ZERO_PORT", Integer.toString(zeroPort));
        pb.environment().putAll(env);
        return new LauncherProcess(pb.start(), log, zeroPort + 1);
    }

    /** @return a free {@code ZERO_PORT} whose derived ports (change streamer +1, litestream +2) are free too */
    static int freePort() throws IOException {
        return LoopbackPorts.freeRun(3);
    }

    int port() {
        return port;
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    HttpResponse<String> get(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Polls {@code /status} until {@code condition} holds: an external process offers nothing to
     * wait on but its port. Bounded by {@link #WAIT}.
     */
    JsonNode awaitStatus(String what, String authorization, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            assertTrue("the runtime exited: " + log(), process.isAlive());
            try {
                HttpResponse<String> r = get("/status", authorization);
                last = r.body();
                if (r.statusCode() == 200) {
                    JsonNode status = JSON.readTree(last);
                    if (condition.test(status)) {
                        return status;
                    }
                }
            } catch (IOException e) {
                last = e.toString(); // not listening yet
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new AssertionError(what + " not reached within " + WAIT + "; /status: " + last);
    }

    /** @return the runtime JVM the launcher started (the Felix child running zrm.jar), if it is up */
    java.util.Optional<ProcessHandle> runtimeJvm() {
        return process.descendants()
                .filter(h -> h.info().arguments().map(a -> java.util.Arrays.stream(a).anyMatch(x -> x.endsWith("zrm.jar")))
                        .orElse(false))
                .findFirst();
    }

    /** kill -9 of the launcher and the runtime JVM under it: nothing is stopped cleanly. */
    void killHard() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        for (ProcessHandle h : process.descendants().toList()) {
            h.onExit().join();
        }
    }

    /**
     * Sends {@code signal} (a kill(1) name such as {@code STOP} or {@code CONT}) to the runtime JVM
     * under the launcher and to the launcher itself.
     */
    void signal(String signal) throws Exception {
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of("kill", "-" + signal));
        process.descendants().forEach(h -> cmd.add(Long.toString(h.pid())));
        cmd.add(Long.toString(process.pid()));
        Process kill = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(kill.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue("kill did not finish", kill.waitFor(10, TimeUnit.SECONDS));
        if (kill.exitValue() != 0) {
            throw new AssertionError(cmd + " failed: " + out);
        }
    }

    /** SIGTERM: the launcher stops the runtime, then exits. */
    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
    }
}

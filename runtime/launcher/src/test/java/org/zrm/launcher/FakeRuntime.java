package org.zrm.launcher;

import java.io.FileOutputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Stands in for runtime/target/zrm.jar in {@link RunCommandTest}: records what the launcher gave
 * it (environment, system properties, working folder, whether the upstream PostgreSQL accepts TCP
 * connections) in {@code <zrm.state.dir>/fake-runtime.properties} and exits with
 * {@code FAKE_RUNTIME_EXIT}; with {@code FAKE_RUNTIME_STOP_REASON} it first records that reason as a
 * runtime that stops itself does. Self-contained: the test copies this one class into a jar.
 */
public final class FakeRuntime {
    private FakeRuntime() {}

    public static void main(String[] args) throws Exception {
        Properties seen = new Properties();
        for (String name : new String[] {"ZERO_UPSTREAM_DB", "ZERO_CHANGE_DB", "ZERO_CHANGE_STREAMER_PORT", "ZERO_LITESTREAM_PORT",
                "ZERO_APP_ID"}) {
            String value = System.getenv(name);
            if (value != null) {
                seen.setProperty("env." + name, value);
            }
        }
        for (String name : new String[] {"felix.fileinstall.dir", "zrm.config.dir", "zrm.deploy.dir", "zrm.state.dir",
                "org.osgi.service.http.port", "logback.configurationFile", "gosh.args", "user.dir", "fake.option"}) {
            String value = System.getProperty(name);
            if (value != null) {
                seen.setProperty("prop." + name, value);
            }
        }
        seen.setProperty("jvm.args", String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()));
        String upstream = System.getenv("ZERO_UPSTREAM_DB");
        if (upstream != null) {
            URI uri = URI.create(upstream);
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5000);
                seen.setProperty("upstreamReachable", "true");
            } catch (java.io.IOException e) {
                seen.setProperty("upstreamReachable", "false: " + e);
            }
        }
        try (OutputStream file = new FileOutputStream(Path.of(System.getProperty("zrm.state.dir"), "fake-runtime.properties").toFile())) {
            seen.store(file, "seen by FakeRuntime");
        }
        String stopReason = System.getenv("FAKE_RUNTIME_STOP_REASON");
        if (stopReason != null) { // what the change streamer's FrameworkStop writes before stopping the framework
            java.nio.file.Files.writeString(Path.of(System.getProperty("zrm.state.dir"), "runtime-stop-reason"),
                    stopReason + "\n");
        }
        System.exit(Integer.parseInt(System.getenv().getOrDefault("FAKE_RUNTIME_EXIT", "0")));
    }
}

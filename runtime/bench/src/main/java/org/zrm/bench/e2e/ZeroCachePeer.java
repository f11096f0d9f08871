package org.zrm.bench.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.zrm.bench.BenchSetupException;

/**
 * zero-cache 1.8.0's replication manager as the peer of ZRM's runtime in the end-to-end benchmarks
 * ({@code ./zrm bench fanout-W4 --peer zero-cache}): the same upstream, change database, load and
 * subscribers, with zero-cache's change streamer in place of ZRM's, so that ZRM's figures can be
 * read against what the system it re-implements achieves on the same machine in the same run.
 *
 * <p>It runs only zero-cache's replication manager: no sync workers, its own {@code ZERO_PORT} (the change streamer listens on
 * {@code ZERO_PORT + 1}), a scratch replica file, and the benchmark's upstream database. Its change
 * log goes to the benchmark's change database, as ZRM's does, so both write the same data to the
 * same place. The start-up delay is as long as ZRM's in these benchmarks: it streams only once the
 * first serving subscriber connects.
 *
 * <p>The installation is found, or installed from npm, by {@link PeerInstall}: the same cache and
 * variables as the compatibility checks ({@code ZERO_CACHE_DIR}, {@code NODE22_BIN},
 * {@code ZRM_COMPAT_CACHE}).
 */
final class ZeroCachePeer {

    /** The name on the command line ({@code --peer zero-cache}) and in the output. */
    static final String NAME = "zero-cache";

    private static final String CLI = "node_modules/@rocicorp/zero/out/zero/src/cli.js";
    private static final String PACKAGE_JSON = "node_modules/@rocicorp/zero/package.json";
    private static final String HOWTO = "unset ZERO_CACHE_DIR to have @rocicorp/zero@" + PeerInstall.ZERO_VERSION
            + " installed from npm";
    /** As long as ZRM's in these benchmarks: the first serving subscriber starts the stream. */
    private static final String STARTUP_DELAY_MS = "3600000";

    private final Path node;
    private final Path cli;
    private final String version;

    private ZeroCachePeer(Path node, Path cli, String version) {
        this.node = node;
        this.cli = cli;
        this.version = version;
    }

    /**
     * Finds the installation, installing what is missing (see {@link PeerInstall}).
     *
     * @throws BenchSetupException naming the missing file or the failed install, and the variable
     *     that points at it
     */
    static ZeroCachePeer fromEnvironment(Map<String, String> env) throws BenchSetupException {
        PeerInstall install = new PeerInstall(env);
        Path node = install.node();
        Path dir = install.zeroCache(node);
        Path cli = dir.resolve(CLI);
        if (!Files.isRegularFile(cli)) {
            throw new BenchSetupException("--peer " + NAME + ": " + cli + " is missing; set ZERO_CACHE_DIR to the"
                    + " folder holding node_modules/@rocicorp/zero (@rocicorp/zero@" + PeerInstall.ZERO_VERSION
                    + "), or " + HOWTO);
        }
        String version = packageVersion(dir.resolve(PACKAGE_JSON));
        return new ZeroCachePeer(node, cli, version);
    }

    private static String packageVersion(Path packageJson) throws BenchSetupException {
        try {
            var version = new com.fasterxml.jackson.databind.ObjectMapper().readTree(packageJson.toFile())
                    .path("version");
            if (!version.isTextual()) {
                throw new BenchSetupException("--peer " + NAME + ": " + packageJson + " names no version; " + HOWTO);
            }
            return version.asText();
        } catch (IOException e) {
            throw new BenchSetupException("--peer " + NAME + ": cannot read " + packageJson + " (" + e.getMessage()
                    + "); " + HOWTO);
        }
    }

    /** The installed {@code @rocicorp/zero} version (the benchmark reports it; 1.8.0 is the reference). */
    String version() {
        return version;
    }

    Path node() {
        return node;
    }

    /**
     * Starts zero-cache's replication manager for one app and waits until its change streamer
     * answers; the first start of an app includes its initial sync and slot creation.
     *
     * @param dir this app's folder: working directory (so that no {@code .env} of another folder
     *     is read), replica file and log
     * @param upstreamDb {@code postgresql://} URI of the upstream database
     * @param changeDb {@code postgresql://} URI of the change database
     * @param appId the app id (its slot, publications and {@code <appId>_0/cdc} schema)
     * @param zeroPort {@code ZERO_PORT}; the change streamer listens on the next port
     * @param publications {@code ZERO_APP_PUBLICATIONS}, or {@code null} for zero-cache's default
     *     (every table of {@code public})
     */
    ZeroCacheProcess start(Path dir, String upstreamDb, String changeDb, String appId, int zeroPort,
            String publications) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        ProcessBuilder pb = new ProcessBuilder(node.toString(), cli.toString()).directory(dir.toFile())
                .redirectErrorStream(true);
        Path log = dir.resolve("zero-cache.log");
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Map<String, String> env = pb.environment();
        // The caller's own ZERO_* settings (e.g. for a zero-cache of theirs) must not leak into the peer.
        env.keySet().removeIf(k -> k.startsWith("ZERO_"));
        env.put("PATH", node.getParent() + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("ZERO_UPSTREAM_DB", upstreamDb);
        env.put("ZERO_CHANGE_DB", changeDb);
        env.put("ZERO_REPLICA_FILE", dir.resolve("replica.db").toString());
        env.put("ZERO_APP_ID", appId);
        if (publications != null) {
            env.put("ZERO_APP_PUBLICATIONS", publications);
        }
        env.put("ZERO_TASK_ID", "bench-" + appId);
        env.put("ZERO_NUM_SYNC_WORKERS", "0");
        env.put("ZERO_PORT", Integer.toString(zeroPort));
        env.put("ZERO_CHANGE_STREAMER_PORT", Integer.toString(zeroPort + 1));
        env.put("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", STARTUP_DELAY_MS);
        env.put("ZERO_ADMIN_PASSWORD", UUID.randomUUID().toString());
        env.put("ZERO_LOG_LEVEL", "info");
        // One JSON object a line, with its level: ZeroCacheProcess.statusSummary() reads them.
        env.put("ZERO_LOG_FORMAT", "json");
        // Traffic goes to 127.0.0.1 only: no anonymous usage reports.
        env.put("ZERO_ENABLE_TELEMETRY", "false");
        env.put("DO_NOT_TRACK", "1");
        // An app's log is appended to by each start; this start's lines follow this offset.
        long logStart = Files.exists(log) ? Files.size(log) : 0;
        ZeroCacheProcess zc = new ZeroCacheProcess(pb.start(), zeroPort + 1, log, logStart);
        try {
            zc.awaitReady();
        } catch (IOException | RuntimeException | InterruptedException e) {
            zc.close();
            throw e;
        }
        return zc;
    }
}

package org.zrm.litestream.internal;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.zrm.secret.Secrets;

/**
 * The validated configuration of the litestream process. {@link #of} turns the raw
 * configuration into settings or fails with one {@link IllegalArgumentException} whose message
 * names the property and what is wrong (shown at start and in {@code /status}).
 *
 * @param backupURL empty when no backup is configured (then nothing else is checked)
 */
record LitestreamSettings(String backupURL, Path executable, Path executableV5, boolean backupUsingV5,
        boolean restoreUsingV5, Path configPath, boolean generatedConfig, String logLevel, String logFormat,
        String endpoint, String region, int port, long minCheckpointPageCount, long maxCheckpointPageCount,
        double incrementalBackupIntervalMinutes, double snapshotBackupIntervalHours, int multipartConcurrency,
        long multipartSize, int restoreParallelism, Path replicaFile, Duration stopTimeout, Duration restartInitial,
        Duration restartMax, Duration snapshotProbeInterval) {

    /**
     * The destinations litestream v0.3 and v0.5 understand ({@code gcs} in v0.3, {@code gs} in
     * v0.5; {@code webdav}, {@code nats}, {@code oss} are v0.5 only). Anything else would only
     * fail inside litestream, after the node had started.
     */
    static final Set<String> SCHEMES = Set.of("s3", "gcs", "gs", "abs", "sftp", "file", "webdav", "nats", "oss");
    static final Set<String> LOG_LEVELS = Set.of("debug", "info", "warn", "error");

    boolean enabled() {
        return !backupURL.isEmpty();
    }

    /** The generated configuration's place when {@code litestream.configPath} is empty. */
    static Path defaultConfigPath(Path replicaFile) {
        return replicaFile.resolveSibling(replicaFile.getFileName() + "-litestream.yml");
    }

    static LitestreamSettings of(LitestreamConfig c) {
        String url = trim(c.litestream_backupURL());
        Path replica = path("replica.file", trim(c.replica_file())).toAbsolutePath();
        String configText = trim(c.litestream_configPath());
        Path config = configText.isEmpty() ? defaultConfigPath(replica) : path("litestream.configPath", configText);
        String level = trim(c.litestream_logLevel()).toLowerCase(Locale.ROOT);
        String format = trim(c.log_format()).toLowerCase(Locale.ROOT);
        int port = c.litestream_port();
        long min = c.litestream_minCheckpointPageCount() < 0 ? c.litestream_checkpointThresholdMB() * 250L
                : c.litestream_minCheckpointPageCount();
        long max = c.litestream_maxCheckpointPageCount() < 0 ? min * 10 : c.litestream_maxCheckpointPageCount();
        String exe = trim(c.litestream_executable());
        String exe5 = trim(c.litestream_executableV5());
        LitestreamSettings s = new LitestreamSettings(url, exe.isEmpty() ? null : path("litestream.executable", exe),
                exe5.isEmpty() ? null : path("litestream.executableV5", exe5), c.litestream_backupUsingV5(),
                c.litestream_restoreUsingV5(), config, configText.isEmpty(), level, format,
                trim(c.litestream_endpoint()), trim(c.litestream_region()), port, min, max,
                c.litestream_incrementalBackupIntervalMinutes(), c.litestream_snapshotBackupIntervalHours(),
                c.litestream_multipartConcurrency(), c.litestream_multipartSize(), c.litestream_restoreParallelism(),
                replica, millis("litestream.stopTimeoutMs", c.litestream_stopTimeoutMs()),
                millis("litestream.restartInitialMs", c.litestream_restartInitialMs()),
                millis("litestream.restartMaxMs", c.litestream_restartMaxMs()),
                millis("litestream.snapshotProbeIntervalMs", c.litestream_snapshotProbeIntervalMs()));
        if (s.enabled()) {
            s.validate();
        }
        return s;
    }

    /** The checks that only matter when a backup is configured; the first failure is reported. */
    private void validate() {
        checkScheme(backupURL);
        // zero-cache's normalisation texts, verbatim: operators search for them.
        if (backupUsingV5 && !restoreUsingV5) {
            throw new IllegalArgumentException("--litestream-backup-using-v5 requires --litestream-restore-using-v5");
        }
        if (backupUsingV5 && (executableV5 == null || !executableV5.equals(executable))) {
            throw new IllegalArgumentException("--litestream-backup-using-v5 requires --litestream-executable to be"
                    + " flipped to the v5 binary (--litestream-executable must equal --litestream-executable-v5)");
        }
        if (executable == null) {
            throw new IllegalArgumentException("litestream.executable (ZERO_LITESTREAM_EXECUTABLE) is required when"
                    + " litestream.backupURL is set: Missing --litestream-executable");
        }
        executable("litestream.executable", executable);
        if (restoreUsingV5) {
            if (executableV5 == null) {
                throw new IllegalArgumentException("litestream.restoreUsingV5 needs litestream.executableV5"
                        + " (ZERO_LITESTREAM_EXECUTABLE_V5)");
            }
            executable("litestream.executableV5", executableV5);
        }
        if (!LOG_LEVELS.contains(logLevel)) {
            throw new IllegalArgumentException("litestream.logLevel must be debug, info, warn or error, got '"
                    + logLevel + "'");
        }
        if (!logFormat.equals("text") && !logFormat.equals("json")) {
            throw new IllegalArgumentException("log.format must be text or json, got '" + logFormat + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("litestream.port must be within 1..65535, got " + port);
        }
        if (!(incrementalBackupIntervalMinutes > 0) || Double.isInfinite(incrementalBackupIntervalMinutes)) {
            throw new IllegalArgumentException("litestream.incrementalBackupIntervalMinutes must be positive, got "
                    + incrementalBackupIntervalMinutes);
        }
        if (!(snapshotBackupIntervalHours * 60 - 5 > 0) || Double.isInfinite(snapshotBackupIntervalHours)) {
            throw new IllegalArgumentException("litestream.snapshotBackupIntervalHours must exceed 5 minutes (the"
                    + " retention is hours * 60 - 5 minutes), got " + snapshotBackupIntervalHours);
        }
        positive("litestream.multipartConcurrency", multipartConcurrency);
        positive("litestream.multipartSize", multipartSize);
        positive("litestream.restoreParallelism", restoreParallelism);
        positive("litestream.minCheckpointPageCount", minCheckpointPageCount);
        writableFolder("replica.file", replicaFile.getParent());
        if (generatedConfig) {
            writableFolder("litestream.configPath (generated)", configPath.getParent());
        } else if (!Files.isReadable(configPath)) {
            throw new IllegalArgumentException("litestream.configPath " + configPath + " is not a readable file");
        }
    }

    private static void checkScheme(String url) {
        String scheme;
        try {
            scheme = new URI(url).getScheme();
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("litestream.backupURL is not a URL: " + Secrets.maskUrls(url) + " ("
                    + e.getMessage() + ")", e);
        }
        if (scheme == null || !SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("litestream.backupURL " + Secrets.maskUrls(url) + " has "
                    + (scheme == null ? "no scheme" : "an unknown scheme '" + scheme + "'") + "; litestream supports "
                    + String.join(", ", SCHEMES.stream().sorted().toList()));
        }
    }

    private static void executable(String name, Path p) {
        if (!Files.isRegularFile(p)) {
            throw new IllegalArgumentException(name + " " + p + " does not exist (ZRM runs it for the backup)");
        }
        if (!Files.isExecutable(p)) {
            throw new IllegalArgumentException(name + " " + p + " is not executable");
        }
    }

    private static void writableFolder(String name, Path dir) {
        if (dir == null) {
            return;
        }
        Path existing = dir;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null || !Files.isDirectory(existing) || !Files.isWritable(existing)) {
            throw new IllegalArgumentException(name + ": the folder " + dir + " is not writable (litestream keeps"
                    + " its WAL shadow next to the replica, and the replica is written there)");
        }
        if (!existing.equals(dir)) {
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw new IllegalArgumentException(name + ": cannot create the folder " + dir + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * The environment of {@code litestream replicate}, {@code snapshots} and {@code restore}: the
     * one zero-cache builds ({@code getLitestream}), over the inherited one.
     *
     * @param logLevelOverride {@code null}, or the level a single command should log at (upstream
     *     restores at debug)
     */
    Map<String, String> environment(Map<String, String> inherited, String logLevelOverride) {
        Map<String, String> env = new LinkedHashMap<>(inherited);
        env.put("ZERO_REPLICA_FILE", replicaFile.toString());
        env.put("ZERO_LITESTREAM_BACKUP_URL", backupURL);
        env.put("ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT", Long.toString(minCheckpointPageCount));
        env.put("ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT", Long.toString(maxCheckpointPageCount));
        env.put("ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES", number(incrementalBackupIntervalMinutes));
        env.put("ZERO_LITESTREAM_LOG_LEVEL", logLevelOverride != null ? logLevelOverride : logLevel);
        env.put("ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES", number(snapshotBackupIntervalHours * 60 - 5));
        env.put("ZERO_LITESTREAM_MULTIPART_CONCURRENCY", Integer.toString(multipartConcurrency));
        env.put("ZERO_LITESTREAM_MULTIPART_SIZE", Long.toString(multipartSize));
        env.put("ZERO_LOG_FORMAT", logFormat);
        env.put("LITESTREAM_CONFIG", configPath.toString());
        env.put("LITESTREAM_PORT", Integer.toString(port));
        // Upstream sets these only when configured; a stale inherited value must not leak in either.
        env.remove("ZERO_LITESTREAM_ENDPOINT");
        env.remove("ZERO_LITESTREAM_REGION");
        if (!endpoint.isEmpty()) {
            env.put("ZERO_LITESTREAM_ENDPOINT", endpoint);
        }
        if (!region.isEmpty()) {
            env.put("ZERO_LITESTREAM_REGION", region);
        }
        return env;
    }

    /** The executable of {@code litestream restore} (upstream: v5 when restoreUsingV5). */
    Path restoreExecutable() {
        return restoreUsingV5 && executableV5 != null ? executableV5 : executable;
    }

    /**
     * zero-cache's {@code config.yml}, unchanged: every value comes from the environment above,
     * so the generated file and one an operator provides are read the same way.
     */
    static final String CONFIG_YML = """
            dbs:
              - path: ${ZERO_REPLICA_FILE}
                min-checkpoint-page-count: ${ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT}
                max-checkpoint-page-count: ${ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT}
                watermark-table: _zero.replicationState
                watermark-column: stateVersion
                replicas:
                  - url: ${ZERO_LITESTREAM_BACKUP_URL}
                    endpoint: ${ZERO_LITESTREAM_ENDPOINT}
                    region: ${ZERO_LITESTREAM_REGION}
                    retention: ${ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES}m
                    retention-check-interval: 1h
                    sync-interval: ${ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES}m
                    multipart-concurrency: ${ZERO_LITESTREAM_MULTIPART_CONCURRENCY}
                    multipart-size: ${ZERO_LITESTREAM_MULTIPART_SIZE}

            logging:
              level: ${ZERO_LITESTREAM_LOG_LEVEL}
              type: ${ZERO_LOG_FORMAT}

            addr: localhost:${LITESTREAM_PORT}
            """;

    /** Writes the generated configuration if this runtime generates it (atomically: litestream may read it). */
    void writeGeneratedConfig() throws IOException {
        if (!generatedConfig) {
            return;
        }
        Path tmp = configPath.resolveSibling(configPath.getFileName() + ".tmp");
        Files.writeString(tmp, "# Written by ZRM (org.zrm.litestream): zero-cache's litestream config.yml; the values"
                + " come from the environment ZRM gives litestream.\n" + CONFIG_YML);
        Files.move(tmp, configPath, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** A number as JavaScript's {@code String(n)} prints it: no trailing {@code .0}. */
    static String number(double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return java.math.BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
    }

    private static Duration millis(String name, long ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + ms);
        }
        return Duration.ofMillis(ms);
    }

    private static void positive(String name, long v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
    }

    private static Path path(String name, String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException(name + " must not be empty");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(name + " is not a valid path: " + e.getMessage(), e);
        }
    }

    private static String trim(String s) {
        return s == null ? "" : s.strip();
    }
}

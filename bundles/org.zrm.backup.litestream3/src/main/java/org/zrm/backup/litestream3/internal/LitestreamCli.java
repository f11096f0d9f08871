package org.zrm.backup.litestream3.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.secret.Secrets;

/**
 * Verifies the backup against its real destination with the litestream v0.3 CLI (Zero's
 * {@code getLastBackupTime}): runs {@code litestream snapshots <replica>} and
 * {@code litestream wal <replica>} in parallel, with the environment of {@code litestream
 * replicate} so both resolve the same destination and credentials, and returns the newest
 * {@code created} time of either listing.
 *
 * <p>Bounds: each listing has its own timeout, after which the process (and anything it spawned)
 * is killed; stdout is parsed line by line as it arrives, keeping only a count and the newest
 * time, and a line longer than {@value #MAX_LINE_BYTES} bytes is cut (it then fails to parse and
 * is reported as unexpected); stderr keeps its first {@value #MAX_STDERR_BYTES} bytes, the rest is
 * read and dropped so the child never blocks on a full pipe.
 */
final class LitestreamCli implements BackupStateVerifier {

    private static final Logger LOG = LoggerFactory.getLogger(LitestreamCli.class);

    /** Upstream's {@code LIST_BACKUP_TIMEOUT_MS}. */
    static final Duration DEFAULT_LIST_TIMEOUT = Duration.ofSeconds(30);
    static final int MAX_LINE_BYTES = 4096;
    static final int MAX_STDERR_BYTES = 8192;
    /** Unexpected lines logged per listing; further ones are only counted. */
    private static final int MAX_WARNED_LINES = 10;
    /** After an exit, how long the output readers may still take to see the pipes close. */
    private static final long DRAIN_GRACE_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Path executable;
    private final String replicaFile;
    private final String backupURL;
    private final Map<String, String> environment;
    private final Duration listTimeout;

    /**
     * @param executable {@code litestream.executable}
     * @param replicaFile {@code replica.file}, the database whose replica is listed
     * @param backupURL {@code litestream.backupURL}, for messages
     * @param environment the complete environment of the child processes (see
     *     {@link #environment})
     * @param listTimeout per listing
     */
    LitestreamCli(Path executable, String replicaFile, String backupURL, Map<String, String> environment,
            Duration listTimeout) {
        this.executable = executable;
        this.replicaFile = replicaFile;
        this.backupURL = backupURL;
        this.environment = Map.copyOf(environment);
        this.listTimeout = listTimeout;
    }

    /**
     * The environment zero-cache gives {@code litestream replicate} (and so the listings), over
     * {@code inherited}. Zero's {@code config.yml} interpolates all of these; the tuning values
     * ZRM has no settings for keep an inherited value or get zero-cache's default, so that such a
     * configuration file still parses (they do not change what is listed).
     *
     * @param inherited the JVM's environment, as upstream spreads {@code process.env}
     * @param configPath {@code litestream.configPath}; empty keeps an inherited
     *     {@code LITESTREAM_CONFIG} (or litestream's own default, {@code /etc/litestream.yml})
     * @param endpoint {@code litestream.endpoint}; set only when not empty, as upstream
     * @param region {@code litestream.region}; set only when not empty, as upstream
     */
    static Map<String, String> environment(Map<String, String> inherited, String replicaFile, String backupURL,
            String configPath, int port, String endpoint, String region) {
        Map<String, String> env = new LinkedHashMap<>(inherited);
        env.putIfAbsent("ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT", "10000"); // checkpointThresholdMB 40 * 250
        env.putIfAbsent("ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT", "100000"); // min * 10
        env.putIfAbsent("ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES", "15");
        env.putIfAbsent("ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES", "715"); // 12 h * 60 - 5
        env.putIfAbsent("ZERO_LITESTREAM_MULTIPART_CONCURRENCY", "48");
        env.putIfAbsent("ZERO_LITESTREAM_MULTIPART_SIZE", "16777216");
        env.putIfAbsent("ZERO_LITESTREAM_LOG_LEVEL", "warn");
        env.putIfAbsent("ZERO_LOG_FORMAT", "text");
        env.put("ZERO_REPLICA_FILE", replicaFile);
        env.put("ZERO_LITESTREAM_BACKUP_URL", backupURL);
        env.put("LITESTREAM_PORT", Integer.toString(port));
        if (!configPath.isEmpty()) {
            env.put("LITESTREAM_CONFIG", configPath);
        }
        if (!endpoint.isEmpty()) {
            env.put("ZERO_LITESTREAM_ENDPOINT", endpoint);
        }
        if (!region.isEmpty()) {
            env.put("ZERO_LITESTREAM_REGION", region);
        }
        return env;
    }

    /**
     * @throws BackupListingException with upstream's messages: {@code litestream <cmd> exited
     *     with code <n>}, {@code litestream <cmd> killed with <signal>}, {@code timed out listing
     *     backup state (litestream <cmd>)}, {@code no snapshots or WAL segments listed at <url>}
     *     (the v0.3 CLI exits 0 even when listing fails, and a real backup always has a
     *     snapshot), or a failure to start the executable
     * @throws InterruptedException if the calling thread is interrupted; both processes are killed
     */
    @Override
    public Instant lastBackupTime(StopSignal signal) throws BackupListingException, InterruptedException {
        Listing snapshots = new Listing("snapshots");
        Listing wal;
        try {
            wal = new Listing("wal");
        } catch (BackupListingException e) {
            snapshots.kill();
            throw e;
        }
        try (StopSignal.Registration r = signal.onStop(() -> {
            snapshots.kill();
            wal.kill();
        })) {
            snapshots.await();
            wal.await();
        } finally {
            snapshots.kill();
            wal.kill();
        }
        if (snapshots.entries + wal.entries == 0) {
            snapshots.logStderr(true);
            wal.logStderr(true);
            throw new BackupListingException("no snapshots or WAL segments listed at " + Secrets.maskUrls(backupURL));
        }
        snapshots.logStderr(false);
        wal.logStderr(false);
        Instant newest = snapshots.newest;
        if (newest == null || (wal.newest != null && wal.newest.isAfter(newest))) {
            newest = wal.newest;
        }
        return newest;
    }

    /** One running {@code litestream <command> <replica>}. */
    private final class Listing {
        final String command;
        final Process process;
        final long deadline;
        final Thread stdoutReader;
        final Thread stderrReader;
        final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        // Written by the stdout reader, read after joining it.
        int entries;
        Instant newest;
        int unexpected;

        Listing(String command) throws BackupListingException {
            this.command = command;
            ProcessBuilder pb = new ProcessBuilder(List.of(executable.toString(), command, replicaFile));
            pb.environment().clear();
            pb.environment().putAll(environment);
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new BackupListingException("unable to run litestream " + command + " (" + executable + "): "
                        + e.getMessage(), e);
            }
            try {
                process.getOutputStream().close(); // upstream's stdio 'ignore': the listing reads no input
            } catch (IOException e) {
                LOG.debug("litestream3 backup monitor: closing litestream {} stdin: {}", command, e.toString());
            }
            deadline = System.nanoTime() + listTimeout.toNanos();
            stdoutReader = reader("stdout", () -> readLines(process.getInputStream()));
            stderrReader = reader("stderr", () -> readStderr(process.getErrorStream()));
        }

        void await() throws BackupListingException, InterruptedException {
            if (!process.waitFor(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                kill();
                throw timedOut();
            }
            int code = process.exitValue();
            // A child that exited leaves behind only its pipes; a grandchild that inherited them
            // could keep them open, so the drain is bounded too.
            long drainUntil = Math.min(deadline, System.nanoTime() + DRAIN_GRACE_NANOS);
            stdoutReader.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(drainUntil - System.nanoTime())));
            stderrReader.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(drainUntil - System.nanoTime())));
            // Java reports death by signal N as exit code 128 + N; litestream itself exits 0, 1 or 2.
            if (code > 128 && code <= 128 + 31) {
                logStderr(true);
                throw new BackupListingException("litestream " + command + " killed with " + signalName(code - 128));
            }
            if (code != 0) {
                logStderr(true);
                throw new BackupListingException("litestream " + command + " exited with code " + code);
            }
            if (stdoutReader.isAlive()) {
                kill();
                throw timedOut();
            }
            if (unexpected > MAX_WARNED_LINES) {
                LOG.warn("litestream3 backup monitor: {} more unexpected lines in litestream {} output",
                        unexpected - MAX_WARNED_LINES, command);
            }
        }

        private BackupListingException timedOut() {
            return new BackupListingException("timed out listing backup state (litestream " + command + ")");
        }

        /** Kills the process and anything it started (their pipes would otherwise stay open). */
        void kill() {
            if (process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }

        void logStderr(boolean failed) {
            String text;
            synchronized (stderr) {
                text = stderr.toString(StandardCharsets.UTF_8).strip();
            }
            if (text.isEmpty()) {
                return;
            }
            text = Secrets.maskUrls(text);
            if (failed) {
                LOG.warn("litestream3 backup monitor: litestream {} stderr: {}", command, text);
            } else {
                LOG.debug("litestream3 backup monitor: litestream {} stderr: {}", command, text);
            }
        }

        private Thread reader(String stream, ThrowingRunnable body) {
            Thread t = new Thread(() -> {
                try {
                    body.run();
                } catch (IOException e) {
                    // The pipe broke (e.g. the process was killed); what was read so far stands.
                    LOG.debug("litestream3 backup monitor: reading litestream {} {} stopped: {}", command, stream,
                            e.toString());
                }
            }, "zrm-litestream-" + command + "-" + stream);
            t.setDaemon(true);
            t.start();
            return t;
        }

        private void readLines(InputStream in) throws IOException {
            try (in) {
                byte[] line = new byte[MAX_LINE_BYTES];
                int len = 0;
                boolean cut = false;
                byte[] buf = new byte[8192];
                int n;
                while ((n = in.read(buf)) >= 0) {
                    for (int i = 0; i < n; i++) {
                        byte b = buf[i];
                        if (b == '\n') {
                            line(new String(line, 0, len, StandardCharsets.UTF_8), cut);
                            len = 0;
                            cut = false;
                        } else if (len < line.length) {
                            line[len++] = b;
                        } else {
                            cut = true;
                        }
                    }
                }
                if (len > 0) {
                    line(new String(line, 0, len, StandardCharsets.UTF_8), cut);
                }
            }
        }

        private void line(String text, boolean cut) {
            Instant created = null;
            boolean ok = !cut;
            if (ok) {
                try {
                    created = BackupListing.parseLine(text);
                } catch (DateTimeParseException e) {
                    ok = false;
                }
            }
            if (!ok) {
                if (++unexpected <= MAX_WARNED_LINES) {
                    LOG.warn("litestream3 backup monitor: {}", Secrets.maskUrls(
                            BackupListing.unexpectedLine(command, cut ? text + "..." : text)));
                }
                return;
            }
            if (created != null) {
                entries++;
                if (newest == null || created.isAfter(newest)) {
                    newest = created;
                }
            }
        }

        private void readStderr(InputStream in) throws IOException {
            try (in) {
                byte[] buf = new byte[4096];
                int n;
                while ((n = in.read(buf)) >= 0) {
                    synchronized (stderr) {
                        int keep = Math.min(n, MAX_STDERR_BYTES - stderr.size());
                        if (keep > 0) {
                            stderr.write(buf, 0, keep);
                        }
                    }
                }
            }
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws IOException;
    }

    private static String signalName(int signal) {
        return switch (signal) {
            case 1 -> "SIGHUP";
            case 2 -> "SIGINT";
            case 3 -> "SIGQUIT";
            case 4 -> "SIGILL";
            case 6 -> "SIGABRT";
            case 7 -> "SIGBUS";
            case 8 -> "SIGFPE";
            case 9 -> "SIGKILL";
            case 11 -> "SIGSEGV";
            case 13 -> "SIGPIPE";
            case 14 -> "SIGALRM";
            case 15 -> "SIGTERM";
            default -> "signal " + signal;
        };
    }
}

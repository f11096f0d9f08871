package org.zrm.litestream.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.replica.ReplicaState;
import org.zrm.replica.ReplicaStateReader;
import org.zrm.secret.Secrets;

/**
 * Restores a missing replica file from the backup (zero-cache's {@code restoreReplica}):
 * {@code litestream restore -if-db-not-exists -if-replica-exists -parallelism N <replica>}, then
 * checks the result against what the change log can serve, then folds the restored WAL into the
 * file ({@code journal_mode=delete}, spec §5.3) so the replicator's switch to WAL is the one that
 * makes it ready for {@code litestream replicate}.
 *
 * <p>Retries, as upstream: a failing {@code restore} is tried once more (it fails when
 * {@code replicate} compacts the destination at the same moment); when the destination holds no
 * backup, the restore is retried every {@code retryInterval}, up to {@code maxAttempts} times,
 * unless the caller knows what the log can serve ({@link Constraints}): then no backup is final.
 * Progress (bytes written so far, elapsed time) is reported every {@link #PROGRESS_INTERVAL}.
 */
final class LitestreamRestore {

    /** Upstream's {@code MAX_RETRIES} and {@code RETRY_INTERVAL_MS}. */
    static final int MAX_ATTEMPTS = 60;
    static final Duration RETRY_INTERVAL = Duration.ofSeconds(3);
    static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(5);

    private static final Logger LOG = LoggerFactory.getLogger(LitestreamRestore.class);

    /**
     * What the change log can serve: a restored replica must have this replicaVersion and a
     * watermark at or above the log's oldest entry, or catching it up would leave a gap.
     */
    record Constraints(String replicaVersion, String minWatermark) {
    }

    enum Outcome {
        /** The file was there already; nothing was restored. */
        EXISTS,
        /** Restored and usable. */
        RESTORED,
        /** The destination holds no backup: an initial sync is needed. */
        NO_BACKUP,
        /** A backup was restored but the change log cannot catch it up; it was deleted. */
        UNUSABLE
    }

    /** @param reason why, for the log and the status; {@code state} the restored replica's, if any */
    record Result(Outcome outcome, String reason, long bytes, Duration elapsed, Optional<ReplicaState> state) {
    }

    /** Progress of a running restore. */
    record Progress(long bytes, Duration elapsed, int attempt) {
    }

    private final LitestreamSettings settings;
    private final Map<String, String> inheritedEnv;
    private final int maxAttempts;
    private final Duration retryInterval;
    private final CountDownLatch cancelled;

    LitestreamRestore(LitestreamSettings settings, Map<String, String> inheritedEnv, int maxAttempts,
            Duration retryInterval, CountDownLatch cancelled) {
        this.settings = settings;
        this.inheritedEnv = Map.copyOf(inheritedEnv);
        this.maxAttempts = maxAttempts;
        this.retryInterval = retryInterval;
        this.cancelled = cancelled;
    }

    /**
     * @param constraints what the change log can serve, or {@code null} when unknown (then a
     *     missing backup is waited for, as a view-syncer does)
     * @param progress receives progress every {@link #PROGRESS_INTERVAL} while litestream runs
     * @throws IOException if litestream fails twice in a row, or cannot be run
     * @throws InterruptedException if interrupted or cancelled
     */
    Result restore(Constraints constraints, Consumer<Progress> progress) throws IOException, InterruptedException {
        Path replica = settings.replicaFile();
        if (Files.exists(replica)) {
            return new Result(Outcome.EXISTS, replica + " exists", 0, Duration.ZERO, Optional.empty());
        }
        long start = System.nanoTime();
        boolean failedOnce = false;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            // Restored beside the replica and moved into place once prepared: the replicator (and
            // anything else watching the path) opens the file as soon as it appears, and an open
            // connection would keep the restored WAL from being folded (SQLITE_BUSY).
            Path staging = staging(replica);
            deleteReplica(staging);
            try {
                runRestore(attempt, start, progress, staging);
            } catch (IOException e) {
                if (failedOnce) {
                    throw e;
                }
                failedOnce = true;
                LOG.warn("litestream: restore attempt failed, retrying once: {}", Secrets.maskUrls(e.getMessage()));
                continue;
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            if (Files.exists(staging)) {
                long bytes = Files.size(staging);
                Optional<ReplicaState> state = readState(staging);
                String problem = problem(state, constraints);
                if (problem != null) {
                    LOG.warn("litestream: the restored replica cannot be used: {}; deleting it", problem);
                    deleteReplica(staging);
                    return new Result(Outcome.UNUSABLE, problem, bytes, elapsed, state);
                }
                fold(staging);
                Files.move(staging, replica, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                LOG.info("litestream: restored {} ({} bytes in {} ms): replicaVersion {} at watermark {}", replica,
                        bytes, elapsed.toMillis(), state.get().replicaVersion(), state.get().stateVersion());
                return new Result(Outcome.RESTORED, "restored from " + Secrets.maskUrls(settings.backupURL()), bytes,
                        elapsed, state);
            }
            if (constraints != null) {
                // The change log has entries but the destination has no backup (e.g. the URL was
                // changed on purpose to force a re-sync): waiting would not make one appear.
                return new Result(Outcome.NO_BACKUP, "backup not found at " + Secrets.maskUrls(settings.backupURL()),
                        0, elapsed, Optional.empty());
            }
            if (attempt < maxAttempts) {
                LOG.info("litestream: replica not found at {}; retrying in {} s", Secrets.maskUrls(settings.backupURL()),
                        retryInterval.toSeconds());
                if (cancelled.await(retryInterval.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new InterruptedException("restore cancelled");
                }
            }
        }
        return new Result(Outcome.NO_BACKUP, "backup not found at " + Secrets.maskUrls(settings.backupURL())
                + " after " + maxAttempts + " attempts", 0, Duration.ofNanos(System.nanoTime() - start),
                Optional.empty());
    }

    /** Where a restore is written before it is prepared and moved to {@code replica}. */
    static Path staging(Path replica) {
        return replica.resolveSibling(replica.getFileName() + ".restoring");
    }

    private void runRestore(int attempt, long start, Consumer<Progress> progress, Path output)
            throws IOException, InterruptedException {
        Path replica = settings.replicaFile();
        ProcessBuilder pb = new ProcessBuilder(List.of(settings.restoreExecutable().toString(), "restore",
                "-if-db-not-exists", "-if-replica-exists", "-parallelism", Integer.toString(settings.restoreParallelism()),
                "-o", output.toString(), replica.toString()));
        pb.environment().clear();
        // Upstream restores at debug: restore's output is short, and what it did matters.
        pb.environment().putAll(settings.environment(inheritedEnv, "debug"));
        settings.writeGeneratedConfig();
        Process p = pb.start();
        p.getOutputStream().close();
        LogForwarder.start("zrm-litestream-restore-stdout", "litestream restore", p.getInputStream());
        LogForwarder.start("zrm-litestream-restore-stderr", "litestream restore", p.getErrorStream());
        Path tmp = output.resolveSibling(output.getFileName() + ".tmp"); // litestream writes here, then renames
        try {
            while (!p.waitFor(PROGRESS_INTERVAL.toMillis(), TimeUnit.MILLISECONDS)) {
                if (cancelled.getCount() == 0) {
                    throw new InterruptedException("restore cancelled");
                }
                long bytes = Files.exists(tmp) ? Files.size(tmp) : 0;
                Progress pr = new Progress(bytes, Duration.ofNanos(System.nanoTime() - start), attempt);
                LOG.info("litestream: restoring {}: {} bytes so far, {} s", replica, bytes, pr.elapsed().toSeconds());
                progress.accept(pr);
            }
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
        int code = p.exitValue();
        if (code != 0) {
            throw new IOException("litestream restore " + ReplicateSupervisor.exitText(code));
        }
        // litestream leaves its temporary file's -wal/-shm behind after the rename.
        Files.deleteIfExists(tmp.resolveSibling(tmp.getFileName() + "-wal"));
        Files.deleteIfExists(tmp.resolveSibling(tmp.getFileName() + "-shm"));
    }

    private static Optional<ReplicaState> readState(Path replica) {
        try (Connection c = connect(replica, true)) {
            return ReplicaStateReader.read(c);
        } catch (SQLException e) {
            LOG.error("litestream: cannot read the restored replica {}: {}", replica, e.getMessage());
            return Optional.empty();
        }
    }

    /** Upstream's {@code replicaIsValid}; {@code null} when usable. */
    static String problem(Optional<ReplicaState> state, Constraints constraints) {
        if (state.isEmpty()) {
            return "the restored file holds no completed replica";
        }
        if (constraints == null) {
            return null;
        }
        ReplicaState s = state.get();
        if (!s.replicaVersion().equals(constraints.replicaVersion())) {
            return "its replicaVersion " + s.replicaVersion() + " is not the change log's "
                    + constraints.replicaVersion();
        }
        if (s.stateVersion().compareTo(constraints.minWatermark()) < 0) {
            return "its watermark " + s.stateVersion() + " is older than the change log's oldest entry "
                    + constraints.minWatermark() + " (the changes in between were purged)";
        }
        return null;
    }

    /** {@code journal_mode=delete}: the restored WAL goes into the file (spec §5.3, step 2). */
    private static void fold(Path replica) throws IOException {
        try (Connection c = connect(replica, false); Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 30000");
            try (ResultSet rs = st.executeQuery("PRAGMA journal_mode = delete")) {
                String mode = rs.next() ? rs.getString(1) : null;
                if (!"delete".equalsIgnoreCase(mode)) {
                    throw new IOException("could not fold the restored WAL of " + replica + " (journal_mode " + mode
                            + ")");
                }
            }
        } catch (SQLException e) {
            throw new IOException("cannot prepare the restored replica " + replica + ": " + e.getMessage(), e);
        }
    }

    private static void deleteReplica(Path replica) throws IOException {
        for (String suffix : new String[] {"", "-wal", "-shm"}) {
            Files.deleteIfExists(replica.resolveSibling(replica.getFileName() + suffix));
        }
    }

    private static Connection connect(Path file, boolean readOnly) throws SQLException {
        Properties props = new Properties();
        if (readOnly) {
            props.setProperty("open_mode", "1");
        }
        Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + file, props);
        if (c == null) {
            throw new SQLException("sqlite-jdbc did not accept " + file);
        }
        return c;
    }
}

package org.zrm.pgcluster.internal;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.zrm.pgcluster.PgClusterException;

/**
 * Runs a short-lived tool ({@code initdb}, {@code pg_ctl}) to completion with a bounded wait and
 * captures its combined output.
 *
 * <p>Output goes to a temporary file rather than a pipe: {@code pg_ctl start} forks the postmaster,
 * and a pipe inherited by a long-lived grandchild would never reach end-of-file. A file also needs
 * no reader thread, and only its tail ({@link #MAX_OUTPUT_BYTES}) is kept in memory.
 */
public final class ProcessRunner {
    /** The most output kept from one run; tools print little, a runaway one is cut. */
    public static final int MAX_OUTPUT_BYTES = 16 * 1024;
    private static final System.Logger LOG = System.getLogger(ProcessRunner.class.getName());
    private static final Duration KILL_GRACE = Duration.ofSeconds(5);

    private final Map<String, String> environment;
    private final Path workingDirectory;

    /**
     * @param environment the complete environment of every child (nothing is inherited)
     * @param workingDirectory where children run; must be reachable by the OS user they run as
     */
    public ProcessRunner(Map<String, String> environment, Path workingDirectory) {
        this.environment = Map.copyOf(environment);
        this.workingDirectory = workingDirectory;
    }

    /** The outcome of one finished run. */
    public record Result(List<String> command, int exitCode, String output) {
        /** @return whether the tool exited with status 0 */
        public boolean succeeded() {
            return exitCode == 0;
        }

        /** @return the command, exit code and output, for error messages */
        public String describe() {
            return "`" + String.join(" ", command) + "` exited with " + exitCode
                    + (output.isBlank() ? " and printed nothing" : ":\n" + output.strip());
        }
    }

    /**
     * Runs {@code command} and waits at most {@code timeout} for it.
     *
     * @throws PgClusterException if it cannot be started, does not finish in time (it is then
     *     killed, with its descendants), or the calling thread is interrupted
     */
    public Result run(List<String> command, Duration timeout) {
        Path output = createOutputFile();
        try {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(workingDirectory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            builder.environment().clear();
            builder.environment().putAll(environment);
            Process process;
            try {
                process = builder.start();
            } catch (IOException e) {
                throw new PgClusterException("cannot run `" + String.join(" ", command) + "`: " + e.getMessage(), e);
            }
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    kill(process);
                    throw new PgClusterException("`" + String.join(" ", command) + "` did not finish within "
                            + timeout.toSeconds() + " s and was killed; its output:\n"
                            + FileTail.read(output, MAX_OUTPUT_BYTES));
                }
            } catch (InterruptedException e) {
                kill(process);
                Thread.currentThread().interrupt();
                throw new PgClusterException("interrupted while waiting for `" + String.join(" ", command) + "`", e);
            }
            return new Result(List.copyOf(command), process.exitValue(), FileTail.read(output, MAX_OUTPUT_BYTES));
        } finally {
            deleteOrWarn(output);
        }
    }

    private static void kill(Process process) {
        // runuser/setsid sit between us and the real tool: take the whole tree down.
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static Path createOutputFile() {
        try {
            return Files.createTempFile("zrm-pgcluster-", ".out");
        } catch (IOException e) {
            throw new PgClusterException("cannot create a temporary file for tool output: " + e.getMessage(), e);
        }
    }

    // Runs in a finally block: throwing here would hide the run's own failure, so only warn.
    private static void deleteOrWarn(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot delete temporary file " + file, e);
        }
    }
}

package org.zrm.pgcluster.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.zrm.pgcluster.PgClusterException;

/**
 * The server tools applied to one data folder, each run as the cluster's OS account with a
 * bounded wait. Exit codes are returned, not interpreted, except where pg_ctl documents them.
 */
public final class PgCtl {
    private static final Duration QUICK = Duration.ofSeconds(30);
    private static final Duration INITDB = Duration.ofMinutes(3);
    private static final Pattern VERSION = Pattern.compile("\\(PostgreSQL\\) (\\d+)");

    /** What {@code pg_ctl status} reports. */
    public enum Status {
        /** A postmaster whose pid is in {@code postmaster.pid} is alive. */
        RUNNING,
        /** No server is running on the folder (exit code 3). */
        STOPPED
    }

    private final PgBinaries binaries;
    private final OsAccount account;
    private final ProcessRunner runner;
    private final Path dataDir;

    /**
     * @param binaries where the tools are
     * @param account who runs them
     * @param runner runs them
     * @param dataDir the cluster's data folder (PGDATA)
     */
    public PgCtl(PgBinaries binaries, OsAccount account, ProcessRunner runner, Path dataDir) {
        this.binaries = binaries;
        this.account = account;
        this.runner = runner;
        this.dataDir = dataDir;
    }

    /**
     * Creates the cluster. {@code noSync} skips the final fsync, which only a throwaway cluster may do.
     */
    public void initdb(boolean noSync) {
        List<String> cmd = new ArrayList<>(List.of(binaries.tool("initdb"), "-D", dataDir.toString(),
                "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"));
        if (noSync) {
            cmd.add("--no-sync");
        }
        ProcessRunner.Result result = runner.run(account.wrap(cmd), INITDB);
        if (!result.succeeded()) {
            throw new PgClusterException("initdb failed for " + dataDir + " (as " + account + "): " + result.describe());
        }
    }

    /**
     * Starts the server and waits ({@code pg_ctl -w}) until it accepts connections.
     *
     * @param newSession start it in its own session (setsid) so that a terminal's Ctrl-C reaches only
     *     the owner, which then stops the server after its own clients
     * @return the pg_ctl result; the caller reads the server log on failure
     */
    public ProcessRunner.Result start(Path logFile, Duration timeout, boolean newSession) {
        List<String> cmd = account.wrap(List.of(binaries.tool("pg_ctl"), "start", "-w",
                "-t", Long.toString(Math.max(1, timeout.toSeconds())), "-D", dataDir.toString(),
                "-l", logFile.toString()));
        if (newSession) {
            List<String> detached = new ArrayList<>(List.of("setsid", "-w"));
            detached.addAll(cmd);
            cmd = detached;
        }
        // pg_ctl itself gives up after -t seconds; the runner's own limit only guards against a hang.
        return runner.run(cmd, timeout.plusSeconds(30));
    }

    /** Stops the server with the given shutdown mode ({@code fast}, {@code immediate}) and waits. */
    public ProcessRunner.Result stop(String mode, Duration timeout) {
        return runner.run(account.wrap(List.of(binaries.tool("pg_ctl"), "stop", "-w", "-m", mode,
                "-t", Long.toString(Math.max(1, timeout.toSeconds())), "-D", dataDir.toString())),
                timeout.plusSeconds(30));
    }

    /** @return whether pg_ctl considers a server running on the folder */
    public Status status() {
        ProcessRunner.Result result = runner.run(account.wrap(List.of(binaries.tool("pg_ctl"), "status",
                "-D", dataDir.toString())), QUICK);
        switch (result.exitCode()) {
            case 0:
                return Status.RUNNING;
            case 3:
                return Status.STOPPED;
            default:
                throw new PgClusterException("cannot query the server state of " + dataDir + ": " + result.describe());
        }
    }

    /** @return the major version of the server binaries, e.g. 15 */
    public int majorVersion() {
        ProcessRunner.Result result = runner.run(List.of(binaries.tool("postgres"), "--version"), QUICK);
        Matcher m = VERSION.matcher(result.output());
        if (!result.succeeded() || !m.find()) {
            throw new PgClusterException("cannot determine the PostgreSQL version: " + result.describe());
        }
        return Integer.parseInt(m.group(1));
    }
}

package org.zrm.bench.source;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.zrm.pgcluster.PgCluster;

/**
 * The walsender limit (WORKLOADS.md): {@code pg_recvlogical --start --no-loop -o proto_version=1
 * -o publication_names=<pub> --endpos=<LSN> -f /dev/null} draining a slot, timed from process start
 * to exit (so, like the ZRM figure, it includes connecting and starting replication).
 * {@code pg_recvlogical} confirms {@code endpos} to the server before it exits.
 */
public final class RecvLogical {

    /** One drain: wall seconds and the CPU seconds of both sides. */
    public record Run(double seconds, double walsenderCpu, double clientCpu) {}

    private final Path pgBin;
    private final PgCluster cluster;
    private final String db;
    private final String publication;

    /**
     * Fails before any cluster starts when {@code pg_recvlogical} is missing: the limit these
     * workloads compare with is the system PostgreSQL's own client, which the PostgreSQL build from
     * Maven Central (what {@code ./zrm} and the tests fall back to) does not contain.
     */
    public static void requireTool(Path pgBin, String workload) throws org.zrm.bench.BenchSetupException {
        Path tool = pgBin.resolve("pg_recvlogical");
        if (!java.nio.file.Files.isExecutable(tool)) {
            throw new org.zrm.bench.BenchSetupException(workload + " measures against pg_recvlogical, which is missing ("
                    + tool + " is not executable). The benchmarks need the system PostgreSQL 15 client and server"
                    + " binaries: install them with `apt-get install -y postgresql-15`, or point ZRM_PG_BIN at a folder"
                    + " holding pg_recvlogical, initdb, pg_ctl and postgres. (The PostgreSQL build from Maven Central"
                    + " that ./zrm and the tests use when there is no system PostgreSQL has no pg_recvlogical.)");
        }
    }

    public RecvLogical(Path pgBin, PgCluster cluster, String db, String publication) {
        this.pgBin = pgBin;
        this.cluster = cluster;
        this.db = db;
        this.publication = publication;
    }

    List<String> command(String slot, String endLsn) {
        List<String> cmd = new ArrayList<>();
        cmd.add(pgBin.resolve("pg_recvlogical").toString());
        cmd.addAll(List.of("-h", PgCluster.HOST, "-p", Integer.toString(cluster.port()), "-U", PgCluster.SUPERUSER,
                "-d", db, "--slot=" + slot, "--start", "--no-loop", "-o", "proto_version=1",
                "-o", "publication_names=" + publication, "--endpos=" + endLsn, "-f", "/dev/null"));
        return cmd;
    }

    public Run drain(String slot, String endLsn, WalSenders walSenders, ScheduledExecutorService scheduler)
            throws IOException, InterruptedException, java.sql.SQLException {
        ProcessBuilder pb = new ProcessBuilder(command(slot, endLsn)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        long t0 = System.nanoTime();
        Process p = pb.start();
        ProcCpu walsender = walSenders.await(slot, p::isAlive, scheduler);
        double clientCpu = -1;
        // The client's own CPU time is only readable while it runs; poll it until it exits.
        while (!p.waitFor(20, TimeUnit.MILLISECONDS)) {
            clientCpu = p.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(clientCpu);
        }
        long t1 = System.nanoTime();
        double wsCpu = walsender == null ? -1 : walsender.stopSeconds();
        if (p.exitValue() != 0) {
            throw new IOException("pg_recvlogical exited with " + p.exitValue() + ": " + String.join(" ",
                    command(slot, endLsn)));
        }
        return new Run((t1 - t0) / 1e9, wsCpu, clientCpu);
    }
}

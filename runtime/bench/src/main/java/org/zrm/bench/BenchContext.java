package org.zrm.bench;

import java.io.PrintStream;
import java.nio.file.Path;

/**
 * What a workload gets from the harness: where to print progress, where to put files, and the
 * PostgreSQL binaries (for {@code pg_recvlogical}, {@code initdb}, ...).
 *
 * @param out      progress output (the final RESULT lines are printed by the harness)
 * @param workDir  a scratch folder for this run (clusters, replica files)
 * @param pgBin    the PostgreSQL 15 server binaries
 * @param scale    1.0 for the workload as specified; smaller for a quick smoke run
 * @param home     the project folder (its {@code runtime/} holds the launcher and runtime jars)
 * @param peer     the peer system measured in ZRM's place ({@code --peer}, one of
 *                 {@link Workload#peers()}), or {@code null} to measure ZRM
 */
public record BenchContext(PrintStream out, Path workDir, Path pgBin, double scale, Path home, String peer) {

    /**
     * A throwaway cluster in this run's work folder for workloads that stream logical replication
     * at full speed (W1/W2 loads): shared buffers and WAL sized so that the load fits and no
     * checkpoint is forced in the middle of a measurement. Add settings before {@code start()}.
     */
    public org.zrm.pgcluster.PgCluster.Builder replicationCluster() {
        return org.zrm.pgcluster.PgCluster.builder()
                .dataDir(workDir.resolve("pg"))
                .binDir(pgBin)
                .setting("shared_buffers", "256MB")
                .setting("max_wal_size", "8GB")
                .setting("min_wal_size", "1GB");
    }

    /** Scales a row or transaction count, never below 1. */
    public int scaled(int count) {
        return Math.max(1, (int) Math.round(count * scale));
    }
}

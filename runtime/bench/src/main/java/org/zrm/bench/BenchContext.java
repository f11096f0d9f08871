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
 */
public record BenchContext(PrintStream out, Path workDir, Path pgBin, double scale, Path home) {

    /** Scales a row or transaction count, never below 1. */
    public int scaled(int count) {
        return Math.max(1, (int) Math.round(count * scale));
    }
}

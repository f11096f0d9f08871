package org.zrm.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One Linux process's {@code /proc/<pid>/stat} line: its command name, CPU time and minor page
 * faults. The benchmarks read other processes' figures this way (a walsender, the PostgreSQL
 * backends), because those processes offer no other account of them.
 *
 * @param command     the command name (between the parentheses)
 * @param cpuTicks    user plus system time, in {@link #TICKS_PER_SECOND} ticks
 * @param minorFaults minor page faults (a first touch of a mapped page, e.g. a shared buffer)
 */
public record ProcStat(String command, long cpuTicks, long minorFaults) {

    /** {@code USER_HZ}: 100 on every Linux this runs on. */
    public static final long TICKS_PER_SECOND = 100;

    /**
     * @return the process's figures
     * @throws IOException if the process has gone (or there is no {@code /proc})
     */
    public static ProcStat read(Path statFile) throws IOException {
        String s = Files.readString(statFile);
        int close = s.lastIndexOf(')');
        if (close < 0) {
            throw new IOException("unexpected format of " + statFile);
        }
        // Fields after the parenthesised command name, counted from "state" (field 3):
        // minflt is field 10, utime 14 and stime 15.
        String[] f = s.substring(close + 2).split(" ");
        try {
            return new ProcStat(s.substring(s.indexOf('(') + 1, close), Long.parseLong(f[11]) + Long.parseLong(f[12]),
                    Long.parseLong(f[7]));
        } catch (RuntimeException e) {
            throw new IOException("unexpected format of " + statFile + ": " + e.getMessage(), e);
        }
    }

    /** @return the CPU time in nanoseconds */
    public long cpuNanos() {
        return cpuTicks * (1_000_000_000L / TICKS_PER_SECOND);
    }
}

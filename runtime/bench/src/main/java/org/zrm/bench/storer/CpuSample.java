package org.zrm.bench.storer;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.zrm.bench.ProcStat;

/**
 * CPU time spent so far by this JVM (in total and per thread group) and by the PostgreSQL
 * processes on this machine, to tell where a storer run's CPU goes on a 2-core box: the difference
 * of two samples is what the measured window cost. Linux only for the PostgreSQL part (it reads
 * {@code /proc}); elsewhere that entry is absent.
 *
 * @param nanos nanoseconds per key, except the {@link #FAULTS} keys, which count page faults
 */
public record CpuSample(Map<String, Long> nanos) {

    /** Key prefix of minor page-fault counts (not nanoseconds) per PostgreSQL role. */
    static final String FAULTS = "postgresMinorFaults.";

    /** @return this JVM's and the PostgreSQL processes' CPU time so far */
    public static CpuSample take() {
        Map<String, Long> m = new LinkedHashMap<>();
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            m.put("jvm", sun.getProcessCpuTime());
        }
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            // Pause (or cycle) wall time, not CPU: the collectors' threads are not Java threads.
            m.put("gcWall." + gc.getName().replace(' ', '_'), gc.getCollectionTime() * 1_000_000L);
        }
        java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit != null && jit.isCompilationTimeMonitoringSupported()) {
            m.put("jitWall", jit.getTotalCompilationTime() * 1_000_000L);
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t == null) {
                continue;
            }
            long cpu = threads.getThreadCpuTime(t.getThreadId());
            if (cpu > 0) {
                m.merge("thread." + group(t.getThreadName()), cpu, Long::sum);
            }
        }
        m.putAll(postgres());
        return new CpuSample(m);
    }

    /** @return what was spent between {@code earlier} and this sample, per key */
    public Map<String, Long> minus(CpuSample earlier) {
        Map<String, Long> d = new LinkedHashMap<>();
        // A PostgreSQL process that exited in between takes its ticks with it; its role's
        // difference would go negative, so it is floored at 0 (the total then undercounts a little).
        nanos.forEach((k, v) -> d.put(k, k.startsWith("postgres")
                ? Math.max(0, v - earlier.nanos.getOrDefault(k, 0L))
                : v - earlier.nanos.getOrDefault(k, 0L)));
        return d;
    }

    /** Pools number their threads; their CPU is what matters, not which one ran. */
    private static String group(String name) {
        return name.replaceAll("-\\d+$", "");
    }

    /**
     * @return CPU nanoseconds of the PostgreSQL processes: {@code postgres} in total, and per role
     *     ({@code postgres.backend} for client connections, else the process title's role, e.g.
     *     {@code postgres.walwriter}); minor page faults per role under {@link #FAULTS}; empty
     *     where there is no {@code /proc}
     */
    private static Map<String, Long> postgres() {
        Map<String, Long> m = new LinkedHashMap<>();
        Path proc = Path.of("/proc");
        if (!Files.isDirectory(proc)) {
            return m;
        }
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(proc, "[0-9]*")) {
            for (Path pid : pids) {
                ProcStat stat;
                String title;
                try {
                    stat = ProcStat.read(pid.resolve("stat"));
                    title = Files.readString(pid.resolve("cmdline")).replace('\0', ' ').trim();
                } catch (IOException gone) {
                    continue; // the process ended between listing and reading
                }
                if (!stat.command().startsWith("postgres")) {
                    continue;
                }
                String role = role(title);
                m.merge("postgres", stat.cpuNanos(), Long::sum);
                m.merge("postgres." + role, stat.cpuNanos(), Long::sum);
                // a process's first touch of a shared-buffer page is one of these
                m.merge(FAULTS + role, stat.minorFaults(), Long::sum);
            }
        } catch (IOException e) {
            return Map.of();
        }
        return m;
    }

    /** "postgres: walwriter" → walwriter; "postgres: user db host(port) COPY" → backend; the postmaster → postmaster. */
    private static String role(String title) {
        if (!title.startsWith("postgres: ")) {
            return "postmaster";
        }
        String rest = title.substring("postgres: ".length());
        String word = rest.split(" ", 2)[0];
        return rest.contains("(") || rest.contains("[local]") ? "backend" : word;
    }
}

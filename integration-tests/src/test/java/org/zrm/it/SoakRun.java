package org.zrm.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.Test;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TcpProxy;
import org.zrm.testing.TestPostgres;

/**
 * {@code ./zrm soak --minutes N}: the fault suite's load, subscribers and invariant for N minutes,
 * with one of the suite's faults injected at random every few minutes. Not part of the tests (the
 * name matches no surefire include; {@code zrm soak} names it with {@code -Dtest}).
 *
 * <p>Every minute, and at the end, one line: the faults so far, the transactions committed, how
 * many are missing from the change log or stored twice, and the runtime JVM's heap after a full GC,
 * open file descriptors and threads, which must stay flat (a leak shows as a trend). At the end the
 * whole-history check runs and the run fails on any problem.
 *
 * <p>Properties: {@code zrm.soak.minutes} (default 30), {@code zrm.soak.faultEveryMinutes}
 * (default 3; each gap is drawn from 0.5x to 1.5x of it), {@code zrm.soak.seed} (default: the time).
 */
public class SoakRun {

    enum Fault {
        KILL_9, UPSTREAM_RESTART_FAST, UPSTREAM_RESTART_IMMEDIATE, UPSTREAM_BLACKHOLE, CHANGE_DB_OUTAGE, SIGSTOP,
        STALLED_SUBSCRIBER
    }

    private static final Duration WAL_SENDER_TIMEOUT = Duration.ofSeconds(4);
    private static final Duration OUTAGE = Duration.ofSeconds(8);
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private final Map<Fault, Integer> injected = new EnumMap<>(Fault.class);

    @Test
    public void soak() throws Exception {
        long minutes = Long.getLong("zrm.soak.minutes", 30);
        double faultEvery = Double.parseDouble(System.getProperty("zrm.soak.faultEveryMinutes", "3"));
        long seed = Long.getLong("zrm.soak.seed", System.currentTimeMillis());
        Random random = new Random(seed);
        say("soak: " + minutes + " min, a fault every ~" + faultEvery + " min, seed " + seed);
        Path log = Path.of(System.getProperty("zrm.it.target", "target"), "soak.log");
        Files.createDirectories(log.getParent());
        Files.writeString(log, "");
        try (PgCluster cluster = TestPostgres.clusterBuilder().walSenderTimeout(WAL_SENDER_TIMEOUT).start()) {
            PgDatabase upstream = PgDatabase.create(cluster, "zrm_soak_up");
            PgDatabase change = PgDatabase.create(cluster, "zrm_soak_log");
            try (TcpProxy upstreamProxy = new TcpProxy(cluster.port()); TcpProxy changeProxy = new TcpProxy(cluster.port());
                    FaultRun run = FaultRun.start(upstream, upstream.uriVia(upstreamProxy.port()), change,
                            change.uriVia(changeProxy.port()), Map.of("ZERO_CHANGE_STATEMENT_TIMEOUT_MS", "2000",
                                    "ZRM_SUBSCRIBER_MAX_BUFFERED_BYTES", "1048576"))) {
                long start = System.nanoTime();
                long end = start + TimeUnit.MINUTES.toNanos(minutes);
                long nextReport = start + TimeUnit.MINUTES.toNanos(1);
                long nextFault = start + gap(random, faultEvery);
                while (System.nanoTime() < end) {
                    long now = System.nanoTime();
                    if (now >= nextFault) {
                        Fault f = Fault.values()[random.nextInt(Fault.values().length)];
                        Duration recovery = inject(f, run, cluster, change, upstreamProxy, changeProxy);
                        injected.merge(f, 1, Integer::sum);
                        say(log, "soak: " + clock(start) + " injected " + f + ", recovered in "
                                + String.format("%.1f s", recovery.toMillis() / 1000.0));
                        nextFault = System.nanoTime() + gap(random, faultEvery);
                    } else if (now >= nextReport) {
                        say(log, report(start, run, change));
                        nextReport += TimeUnit.MINUTES.toNanos(1);
                    } else {
                        // Nothing to wait on but the clock: the next report or fault is due then.
                        TimeUnit.NANOSECONDS.sleep(Math.min(nextReport, nextFault) - now);
                    }
                }
                say(log, report(start, run, change));
                run.finish("soak: " + minutes + " min, " + total() + " random faults (" + faults() + "), seed " + seed, null);
                say(log, "soak: whole-history check passed; " + faults());
            }
        }
    }

    private static long gap(Random random, double minutes) {
        return (long) (TimeUnit.MINUTES.toNanos(1) * minutes * (0.5 + random.nextDouble()));
    }

    private Duration inject(Fault f, FaultRun run, PgCluster cluster, PgDatabase change, TcpProxy upstreamProxy,
            TcpProxy changeProxy)
            throws Exception {
        switch (f) {
            case KILL_9 -> run.killAndRestartRuntime();
            case UPSTREAM_RESTART_FAST -> FaultRun.restartPostgres(cluster, "fast");
            case UPSTREAM_RESTART_IMMEDIATE -> FaultRun.restartPostgres(cluster, "immediate");
            case UPSTREAM_BLACKHOLE -> outage(upstreamProxy, false);
            case CHANGE_DB_OUTAGE -> outage(changeProxy, true);
            case SIGSTOP -> run.pauseRuntime(WAL_SENDER_TIMEOUT.multipliedBy(2));
            case STALLED_SUBSCRIBER -> {
                String from = FaultInvariant.lastCommitWatermark(change::connect, run.replicaVersion());
                try (StalledSubscriber s = StalledSubscriber.connect(ChangesClient.changesUri(
                        Integer.toString(run.runtime().port()), 6, ChangesClient.query("soak-stalled", run.replicaVersion(),
                                from)))) {
                    run.runtime().awaitStatus("the stalled subscriber disconnected at its bound", null,
                            st -> !st.path("sections").path("changestreamer").path("subscribers").toString()
                                    .contains("\"soak-stalled\""));
                }
            }
        }
        run.faultEnded();
        return run.awaitRecovery();
    }

    /** Silent for {@link #OUTAGE}; for the change DB then refusing for as long, as a host that is gone. */
    private static void outage(TcpProxy proxy, boolean thenRefuse) throws InterruptedException {
        if (!thenRefuse) {
            FaultRun.silence(proxy, OUTAGE);
            return;
        }
        proxy.blackhole();
        try {
            TimeUnit.MILLISECONDS.sleep(OUTAGE.toMillis());
            proxy.refuse();
            TimeUnit.MILLISECONDS.sleep(OUTAGE.toMillis());
        } finally {
            proxy.heal();
        }
    }

    /** One minute line: lost counts committed transactions between the oldest and the newest stored one that are not stored. */
    private String report(long start, FaultRun run, PgDatabase change) throws Exception {
        Set<Long> committed = FaultInvariant.committed(run.db()::connect);
        Map<Long, Integer> logged = FaultInvariant.loggedCounts(change::connect);
        long newest = logged.keySet().stream().mapToLong(Long::longValue).max().orElse(0);
        long oldest = logged.keySet().stream().mapToLong(Long::longValue).min().orElse(0);
        // Below the oldest stored transaction the log is purged (a prefix, backed up); above the
        // newest, transactions may still be on their way.
        long lost = committed.stream().filter(n -> n > oldest && n < newest && !logged.containsKey(n)).count();
        long duplicated = logged.values().stream().mapToLong(c -> c - 1).sum();
        return "soak: " + clock(start) + " | faults " + total() + (injected.isEmpty() ? "" : " (" + faults() + ")")
                + " | transactions " + committed.size() + ", lost " + lost + ", duplicated " + duplicated
                + " | runtime " + runtimeFigures(run.runtime());
    }

    /** Heap after a full GC (jcmd), open file descriptors and threads of the runtime JVM (/proc). */
    private static String runtimeFigures(LauncherProcess runtime) {
        Optional<ProcessHandle> jvm = runtime.runtimeJvm();
        if (jvm.isEmpty()) {
            return "JVM not running";
        }
        long pid = jvm.get().pid();
        String heap;
        try {
            jcmd(pid, "GC.run");
            Matcher m = HEAP_USED.matcher(jcmd(pid, "GC.heap_info"));
            heap = m.find() ? Long.parseLong(m.group(1)) / 1024 + " MiB" : "?";
        } catch (IOException | InterruptedException e) {
            heap = "? (" + e.getMessage() + ")";
        }
        String fds;
        String threads;
        try (var list = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            fds = Long.toString(list.count());
        } catch (IOException e) {
            fds = "?";
        }
        try {
            threads = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")).stream()
                    .filter(l -> l.startsWith("Threads:")).map(l -> l.substring(8).strip()).findFirst().orElse("?");
        } catch (IOException e) {
            threads = "?";
        }
        return "heap after GC " + heap + ", fds " + fds + ", threads " + threads;
    }

    private static String jcmd(long pid, String command) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("jcmd " + command + " did not finish within 60 s");
        }
        return out;
    }

    private int total() {
        return injected.values().stream().mapToInt(Integer::intValue).sum();
    }

    private String faults() {
        return injected.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    private static String clock(long start) {
        long s = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        return String.format("%02d:%02d", s / 60, s % 60);
    }

    private static void say(String line) {
        System.out.println(line);
    }

    private static void say(Path log, String line) throws IOException {
        say(line);
        Files.writeString(log, line + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
    }
}

package org.zrm.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code ./zrm bench <workload> [--scale F] [--peer NAME]}: runs one workload, prints its
 * {@code RESULT} lines last, and writes the same figures to {@code target/bench/<workload>.json}
 * (under the project, or {@code $ZRM_HOME}). With {@code --peer}, a workload that supports it
 * measures that peer system in ZRM's place; it prints {@code PEER} lines instead and writes
 * {@code target/bench/<workload>-peer-<NAME>.json}, so ZRM's own record is never overwritten.
 *
 * <p>The run's work folder (its clusters, replicas and logs: several GB for a full-scale run) is
 * deleted after a run that completed, and kept after one that failed, for its logs; set
 * {@code ZRM_BENCH_KEEP=1} to keep it anyway.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help")) {
            System.out.println("usage: ./zrm bench <workload> [--scale F] [--peer NAME]\nworkloads:");
            for (Workload w : Workloads.ALL) {
                System.out.printf("  %-14s %s%s%n", w.name(), w.description(),
                        w.peers().isEmpty() ? "" : " [--peer " + String.join("|", w.peers()) + "]");
            }
            return args.length == 0 ? 2 : 0;
        }
        Workload workload = Workloads.find(args[0]).orElse(null);
        if (workload == null) {
            System.err.println("zrm bench: unknown workload '" + args[0] + "'; known: "
                    + Workloads.ALL.stream().map(Workload::name).collect(Collectors.joining(", ")));
            return 2;
        }
        double scale = 1.0;
        String peer = null;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--scale") && i + 1 < args.length) {
                scale = Double.parseDouble(args[++i]);
                if (!(scale > 0 && scale <= 1)) {
                    System.err.println("zrm bench: --scale must be in (0, 1], got " + scale);
                    return 2;
                }
            } else if (args[i].equals("--peer") && i + 1 < args.length) {
                peer = args[++i];
                if (!workload.peers().contains(peer)) {
                    System.err.println("zrm bench: " + workload.name() + " cannot run against peer '" + peer + "'"
                            + (workload.peers().isEmpty() ? "; it has no peer mode"
                                    : "; its peers: " + String.join(", ", workload.peers())));
                    return 2;
                }
            } else {
                System.err.println("zrm bench: unknown option '" + args[i] + "'");
                return 2;
            }
        }
        Path home = Path.of(System.getenv().getOrDefault("ZRM_HOME", ".")).toAbsolutePath().normalize();
        Path workDir = Files.createTempDirectory("zrm-bench-" + workload.name() + "-");
        // Clusters under it run as the postgres OS user when we are root; a 0700 folder would lock it out.
        Files.setPosixFilePermissions(workDir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path pgBin = Path.of(System.getenv().getOrDefault("ZRM_PG_BIN", "/usr/lib/postgresql/15/bin"));
        List<Result> results;
        try {
            results = workload.run(new BenchContext(System.out, workDir, pgBin, scale, home, peer));
        } catch (BenchSetupException e) {
            System.err.println("zrm bench: " + e.getMessage());
            deleteTree(workDir);
            return 2;
        } catch (Exception | Error e) {
            System.err.println("zrm bench: " + workload.name() + " failed; its work folder (logs, clusters) is kept: "
                    + workDir + " (delete it when done)");
            throw e;
        }
        if ("1".equals(System.getenv("ZRM_BENCH_KEEP"))) {
            System.out.println("zrm bench: work folder kept (ZRM_BENCH_KEEP=1): " + workDir);
        } else {
            deleteTree(workDir);
        }
        String file = workload.name() + (peer == null ? "" : "-peer-" + peer) + ".json";
        write(home.resolve("target/bench").resolve(file), workload, scale, peer, results);
        results.forEach(r -> System.out.println(r.resultLine()));
        return 0;
    }

    /** Deletes {@code dir} and everything under it; what cannot be deleted is reported, not hidden. */
    private static void deleteTree(Path dir) throws IOException {
        List<Path> paths;
        try (var walk = Files.walk(dir)) {
            paths = walk.sorted(java.util.Comparator.reverseOrder()).toList();
        }
        for (Path p : paths) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                System.err.println("zrm bench: could not delete " + p + " (" + e + "); delete " + dir + " by hand");
                return;
            }
        }
    }

    private static void write(Path file, Workload workload, double scale, String peer, List<Result> results)
            throws IOException {
        Files.createDirectories(file.getParent());
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("workload", workload.name());
        if (peer != null) {
            json.put("peer", peer);
        }
        json.put("scale", scale);
        json.put("cores", Runtime.getRuntime().availableProcessors());
        json.put("java", System.getProperty("java.version"));
        List<Map<String, Object>> cases = new ArrayList<>();
        results.forEach(r -> cases.add(r.toJson()));
        json.put("results", cases);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
    }
}

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
 * {@code ./zrm bench <workload> [--scale F]}: runs one workload, prints its {@code RESULT} lines
 * last, and writes the same figures to {@code target/bench/<workload>.json} (under the project,
 * or {@code $ZRM_HOME}).
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help")) {
            System.out.println("usage: ./zrm bench <workload> [--scale F]\nworkloads:");
            for (Workload w : Workloads.ALL) {
                System.out.printf("  %-14s %s%n", w.name(), w.description());
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
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--scale") && i + 1 < args.length) {
                scale = Double.parseDouble(args[++i]);
                if (!(scale > 0 && scale <= 1)) {
                    System.err.println("zrm bench: --scale must be in (0, 1], got " + scale);
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
        List<Result> results = workload.run(new BenchContext(System.out, workDir, pgBin, scale, home));
        write(home.resolve("target/bench").resolve(workload.name() + ".json"), workload, scale, results);
        results.forEach(r -> System.out.println(r.resultLine()));
        return 0;
    }

    private static void write(Path file, Workload workload, double scale, List<Result> results) throws IOException {
        Files.createDirectories(file.getParent());
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("workload", workload.name());
        json.put("scale", scale);
        json.put("cores", Runtime.getRuntime().availableProcessors());
        json.put("java", System.getProperty("java.version"));
        List<Map<String, Object>> cases = new ArrayList<>();
        results.forEach(r -> cases.add(r.toJson()));
        json.put("results", cases);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
    }
}

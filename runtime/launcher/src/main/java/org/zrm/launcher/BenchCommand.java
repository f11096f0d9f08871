package org.zrm.launcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code zrm bench <workload>}: runs a benchmark of {@code docs/WORKLOADS.md} in its own JVM
 * ({@code runtime/bench/target/zrm-bench.jar}), which prints {@code RESULT} lines and writes
 * {@code target/bench/<workload>.json}. Benchmarks are never part of the test command.
 */
public final class BenchCommand implements Command {
    private final FolderResolver folders;
    private final Path java;
    private final Map<String, String> env;

    /**
     * @param folders finds the project
     * @param java the JVM binary to run the benchmark on
     * @param env the environment passed on (ZRM_PG_BIN, ZRM_HOME)
     */
    public BenchCommand(FolderResolver folders, Path java, Map<String, String> env) {
        this.folders = folders;
        this.java = java;
        this.env = env;
    }

    @Override
    public String name() {
        return "bench";
    }

    @Override
    public String arguments() {
        return "<workload> [--scale F] [--peer NAME]";
    }

    @Override
    public String summary() {
        return "run a benchmark against the limit measured in the same run (`zrm bench help` lists them)";
    }

    @Override
    public int run(List<String> args) {
        List<String> command = command(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(env);
        builder.environment().put("ZRM_HOME", folders.resolve().project().toString());
        return Foreground.run(builder, "the benchmark JVM");
    }

    /** The benchmark JVM's command line; fails with a build hint when the jar is missing. */
    List<String> command(List<String> args) {
        Path jar = folders.resolve().project().resolve("runtime/bench/target/zrm-bench.jar");
        if (!Files.isRegularFile(jar)) {
            throw new LaunchException(jar + " is missing; build it with `mvn -B -ntp install -DskipTests`");
        }
        // A fixed, pre-touched heap: on this class of VM a first touch of a heap page costs ~10 µs,
        // so a heap that grows (or shrinks after the quiescing System.gc() and grows again) puts
        // page faults inside whichever side's clock happens to allocate next; measured, a 4 MB COPY
        // batch took 11 ms to encode on fresh pages and 0.5 ms on touched ones.
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch",
                "-jar", jar.toString()));
        command.addAll(args);
        return command;
    }
}

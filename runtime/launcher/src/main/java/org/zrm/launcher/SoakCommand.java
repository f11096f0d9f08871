package org.zrm.launcher;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code zrm soak [--minutes N] [--fault-every M] [--seed S]}: the fault suite's load, subscribers
 * and whole-history check for N minutes, with a random fault every ~M minutes
 * ({@code integration-tests/src/test/java/org/zrm/it/SoakRun.java}, run through Maven because it
 * is built from the integration tests' harness). Never part of the test command.
 */
public final class SoakCommand implements Command {
    private final FolderResolver folders;
    private final Map<String, String> env;

    /**
     * @param folders finds the project
     * @param env the environment passed on (ZRM_PG_BIN, ZRM_HOME)
     */
    public SoakCommand(FolderResolver folders, Map<String, String> env) {
        this.folders = folders;
        this.env = env;
    }

    @Override
    public String name() {
        return "soak";
    }

    @Override
    public String arguments() {
        return "[--minutes N] [--fault-every M] [--seed S]";
    }

    @Override
    public String summary() {
        return "run the load with a random fault every few minutes and check that nothing is lost or duplicated"
                + " (default 30 minutes, a fault every ~3)";
    }

    @Override
    public int run(List<String> args) {
        ProcessBuilder builder = new ProcessBuilder(command(args)).directory(folders.resolve().project().toFile());
        builder.environment().putAll(env);
        return Foreground.run(builder, "Maven (mvn) for the soak");
    }

    /** The Maven command line; rejects unknown or malformed options with a one-line message. */
    List<String> command(List<String> args) {
        long minutes = 30;
        double faultEvery = 3;
        Long seed = null;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (i + 1 >= args.size() || !List.of("--minutes", "--fault-every", "--seed").contains(a)) {
                throw new LaunchException("zrm soak: unknown or incomplete option '" + a + "'; usage: zrm soak "
                        + arguments());
            }
            String v = args.get(++i);
            try {
                switch (a) {
                    case "--minutes" -> minutes = Long.parseLong(v);
                    case "--fault-every" -> faultEvery = Double.parseDouble(v);
                    default -> seed = Long.parseLong(v);
                }
            } catch (NumberFormatException e) {
                throw new LaunchException("zrm soak: " + a + " takes a number, got '" + v + "'");
            }
        }
        if (minutes < 1) {
            throw new LaunchException("zrm soak: --minutes must be at least 1, got " + minutes);
        }
        if (!(faultEvery > 0) || Double.isInfinite(faultEvery)) {
            throw new LaunchException("zrm soak: --fault-every must be a positive number of minutes, got " + faultEvery);
        }
        List<String> command = new ArrayList<>(List.of("mvn", "-B", "-ntp", "-q",
                "-pl", "examples/org.zrm.example.jsonl,integration-tests", "verify",
                "-Dtest=SoakRun", "-Dsurefire.failIfNoSpecifiedTests=false", "-Dzrm.test.redirectOutput=false",
                // The soak's own bound is its minutes; surefire's default has none, and none is added.
                "-Dzrm.soak.minutes=" + minutes, "-Dzrm.soak.faultEveryMinutes=" + faultEvery));
        if (seed != null) {
            command.add("-Dzrm.soak.seed=" + seed);
        }
        return command;
    }
}

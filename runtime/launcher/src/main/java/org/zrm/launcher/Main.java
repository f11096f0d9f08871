package org.zrm.launcher;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Entry point of {@code zrm-launcher.jar} ({@code ./zrm}). Wires the real environment, streams and
 * JVM into the commands; all logic lives in them.
 */
public final class Main {
    /** How long the runtime may take to stop on Ctrl-C/SIGTERM before it is killed. */
    static final Duration GRACE_PERIOD = Duration.ofSeconds(30);

    private Main() {}

    /** @param args {@code [command] [arguments]}; see {@code ./zrm help} */
    public static void main(String[] args) {
        Map<String, String> env = System.getenv();
        // The runtime runs on the launcher's own JVM binary, whatever `java` is on the PATH.
        Path java = ProcessHandle.current().info().command().map(Path::of)
                .orElseGet(() -> Path.of(System.getProperty("java.home"), "bin", "java"));
        FolderResolver folders = new FolderResolver(env, codeLocation(), Path.of("").toAbsolutePath());
        RunCommand run = new RunCommand(env, folders,
                new ChildCommand(java, System.console() != null),
                Runtime.getRuntime()::addShutdownHook, GRACE_PERIOD, System.out, System.err);
        Cli cli = new Cli(List.of(run, new EnvCommand(System.out), new BenchCommand(folders, java, env),
                new SoakCommand(folders, env)), "run", System.out, System.err);
        System.exit(cli.run(args));
    }

    private static Path codeLocation() {
        try {
            return Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("the launcher's own location is not a file: " + e.getMessage(), e);
        }
    }
}

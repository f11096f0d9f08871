package org.zrm.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code zrm run}: decides the folders, checks and derives the {@code ZERO_*} environment, starts
 * the embedded PostgreSQL when there is no {@code ZERO_UPSTREAM_DB}, prints the effective
 * configuration, then runs the OSGi runtime as a child process until it exits or the launcher is
 * stopped. Whatever happens, the embedded PostgreSQL is stopped last.
 */
public final class RunCommand implements Command {
    private final Map<String, String> env;
    private final FolderResolver folderResolver;
    private final ChildCommand childCommand;
    private final Consumer<Thread> shutdownHooks;
    private final Duration gracePeriod;
    private final PrintStream out;
    private final PrintStream err;
    private final ConfigSeeder seeder = new ConfigSeeder();
    private final EnvDerivation derivation = new EnvDerivation();
    private final EnvValidator validator = new EnvValidator();

    /**
     * @param env the launcher's environment; the runtime inherits it plus the derived variables
     * @param folderResolver decides the folders
     * @param childCommand builds the runtime's command line
     * @param shutdownHooks registers a JVM shutdown hook ({@code Runtime.getRuntime()::addShutdownHook})
     * @param gracePeriod how long the runtime may take to stop before it is killed
     * @param out progress and the launch report
     * @param err problems
     */
    public RunCommand(Map<String, String> env, FolderResolver folderResolver, ChildCommand childCommand,
            Consumer<Thread> shutdownHooks, Duration gracePeriod, PrintStream out, PrintStream err) {
        this.env = Map.copyOf(env);
        this.folderResolver = folderResolver;
        this.childCommand = childCommand;
        this.shutdownHooks = shutdownHooks;
        this.gracePeriod = gracePeriod;
        this.out = out;
        this.err = err;
    }

    @Override
    public String name() {
        return "run";
    }

    @Override
    public String arguments() {
        return "";
    }

    @Override
    public String summary() {
        return "start the replication manager (and an embedded PostgreSQL if ZERO_UPSTREAM_DB is unset)";
    }

    @Override
    public int run(List<String> args) {
        if (!args.isEmpty()) {
            err.println("zrm: `run` takes no arguments; configure it with ZERO_* variables (see `./zrm env`)");
            return Cli.USAGE_ERROR;
        }
        List<String> problems = new ArrayList<>(validator.validate(derivation.derive(env).environment()));
        List<String> javaOptions = List.of();
        try {
            javaOptions = ChildCommand.splitOptions(env.get(EnvRegistry.ZRM_JAVA_OPTS));
        } catch (LaunchException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            problems.forEach(p -> err.println("zrm: " + p));
            return Cli.USAGE_ERROR;
        }
        LaunchFolders folders = folderResolver.resolve();
        List<Path> seeded = seeder.seed(folders.shippedConfig(), folders.config());
        if (!Files.isRegularFile(folders.runtimeJar())) {
            throw new LaunchException(folders.runtimeJar() + " is missing; build the project first: cd "
                    + folders.project() + " && mvn -B install -DskipTests");
        }

        RuntimeSupervisor supervisor = new RuntimeSupervisor(gracePeriod, out);
        // Ctrl-C / SIGTERM: stop the runtime, then PostgreSQL, before the JVM goes.
        shutdownHooks.accept(new Thread(supervisor::close, "zrm-launcher-shutdown"));
        int exitCode;
        try {
            exitCode = launch(folders, seeded, javaOptions, supervisor);
        } catch (RuntimeException e) {
            try {
                supervisor.close();
            } catch (RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
        supervisor.close();
        return exitCode;
    }

    /**
     * Where a runtime that stops itself for a terminal reason (e.g. a wedged backup) writes that
     * reason before it stops the framework; keep in sync with the change streamer's
     * {@code FrameworkStop}.
     */
    static final String STOP_REASON_FILE = "runtime-stop-reason";
    /** The launcher's exit status when the runtime stopped itself, whatever the JVM's own status. */
    static final int RUNTIME_STOPPED = 1;

    private static java.util.Optional<String> stoppedItself(Path reasonFile) {
        try {
            return Files.isRegularFile(reasonFile)
                    ? java.util.Optional.of(Files.readString(reasonFile).strip())
                    : java.util.Optional.empty();
        } catch (IOException e) {
            return java.util.Optional.of("(the reason in " + reasonFile + " cannot be read: " + e.getMessage() + ")");
        }
    }

    private int launch(LaunchFolders folders, List<Path> seeded, List<String> javaOptions, RuntimeSupervisor supervisor) {
        Map<String, String> childEnv = new HashMap<>(env);
        EmbeddedPostgres embedded = null;
        if (EnvDerivation.isBlank(env.get(EnvRegistry.UPSTREAM_DB))) {
            out.println("zrm: ZERO_UPSTREAM_DB is not set: starting the embedded PostgreSQL in " + folders.embeddedPgData());
            embedded = EmbeddedPostgres.start(folders, env);
            supervisor.adoptPostgres(embedded);
            childEnv.put(EnvRegistry.UPSTREAM_DB, embedded.uri());
        }
        EnvDerivation.Result derived = derivation.derive(childEnv);
        int httpPort = Integer.parseInt(derived.environment().get(EnvRegistry.CHANGE_STREAMER_PORT));
        String bind = derived.environment().getOrDefault(EnvRegistry.BIND_ADDRESS, "");
        ClassDataArchive archive = new ClassDataArchive(folders.classDataFolder(), folders.runtimeJar(),
                ClassDataArchive.currentJvm(), ProcessHandle.current().pid());
        ClassDataArchive.Plan sharing = archive.plan(javaOptions);
        List<String> jvmOptions = new ArrayList<>(sharing.jvmOptions());
        jvmOptions.addAll(javaOptions); // the user's options come last and win
        List<String> command = childCommand.build(folders, jvmOptions, httpPort, bind);
        out.println("zrm: launch configuration");
        LaunchReport.lines(folders, seeded, derived, embedded, command).forEach(line -> out.println("zrm:   " + line));
        out.println("zrm:   class data     " + sharing.description());
        out.println("zrm: change streamer, /status and the status page listen on "
                + (bind.isBlank() ? "every interface (0.0.0.0)" : bind.strip()) + " port " + httpPort
                + (bind.isBlank() ? "; set ZRM_BIND_ADDRESS=127.0.0.1 to keep them local" : ""));
        PortCheck.requireFree(bind, httpPort);

        Path stopReason = folders.state().resolve(STOP_REASON_FILE);
        try {
            Files.deleteIfExists(stopReason); // a previous run's reason must not be taken for this one's
        } catch (IOException e) {
            throw new LaunchException("cannot remove " + stopReason + ": " + e.getMessage(), e);
        }
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO().directory(folders.state().toFile());
        builder.environment().clear();
        builder.environment().putAll(derived.environment());
        Process child;
        try {
            child = builder.start();
        } catch (IOException e) {
            throw new LaunchException("cannot start the runtime (" + command.get(0) + "): " + e.getMessage(), e);
        }
        supervisor.onChildExit(clean -> {
            String result = clean ? archive.publish(sharing) : archive.discard(sharing);
            if (result != null) {
                out.println("zrm: " + result);
            }
        });
        supervisor.adoptChild(child);
        try {
            int code = supervisor.awaitChild();
            out.println("zrm: the runtime exited with code " + code);
            return stoppedItself(stopReason).map(reason -> {
                err.println("zrm: the runtime stopped itself: " + reason);
                return RUNTIME_STOPPED;
            }).orElse(code);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LaunchException("interrupted while waiting for the runtime", e);
        }
    }
}

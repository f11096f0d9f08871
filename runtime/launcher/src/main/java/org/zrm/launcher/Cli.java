package org.zrm.launcher;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Dispatches {@code zrm [command] [args]} to a {@link Command}; prints usage and errors. */
public final class Cli {
    /** Exit code for a usage or configuration error. */
    public static final int USAGE_ERROR = 2;
    /** Exit code for a failed launch. */
    public static final int FAILURE = 1;

    private final Map<String, Command> commands = new LinkedHashMap<>();
    private final String defaultCommand;
    private final PrintStream out;
    private final PrintStream err;

    /**
     * @param commands the known commands, in usage order
     * @param defaultCommand the one run without arguments
     */
    public Cli(List<Command> commands, String defaultCommand, PrintStream out, PrintStream err) {
        commands.forEach(c -> this.commands.put(c.name(), c));
        if (!this.commands.containsKey(defaultCommand)) {
            throw new IllegalArgumentException("default command " + defaultCommand + " is not registered");
        }
        this.defaultCommand = defaultCommand;
        this.out = out;
        this.err = err;
    }

    /** @return the exit code */
    public int run(String[] args) {
        String name = args.length == 0 ? defaultCommand : args[0];
        List<String> rest = args.length == 0 ? List.of() : Arrays.asList(args).subList(1, args.length);
        if (name.equals("help") || name.equals("-h") || name.equals("--help")) {
            out.print(usage());
            return 0;
        }
        Command command = commands.get(name);
        if (command == null) {
            err.println("zrm: unknown command '" + name + "'; known commands: " + String.join(", ", commands.keySet())
                    + ", help");
            return USAGE_ERROR;
        }
        try {
            return command.run(rest);
        } catch (LaunchException e) {
            err.println("zrm: error: " + e.getMessage());
            return FAILURE;
        }
    }

    /** @return the usage text */
    public String usage() {
        StringBuilder text = new StringBuilder("Usage: ./zrm [command] [arguments]\n\nCommands:\n");
        for (Command c : commands.values()) {
            String head = c.name() + (c.arguments().isEmpty() ? "" : " " + c.arguments());
            text.append(String.format("  %-20s %s%s%n", head, c.summary(), c.name().equals(defaultCommand) ? " (default)" : ""));
        }
        text.append(String.format("  %-20s %s%n", "help", "show this text"));
        text.append("\nConfiguration comes from ZERO_* environment variables, as for zero-cache;"
                + " `./zrm env` lists them.\n");
        return text.toString();
    }
}

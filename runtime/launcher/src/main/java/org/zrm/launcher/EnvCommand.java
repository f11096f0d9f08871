package org.zrm.launcher;

import java.io.PrintStream;
import java.util.List;

/** {@code zrm env}: lists the environment variables ZRM reads, with defaults. */
public final class EnvCommand implements Command {
    private final PrintStream out;

    /** @param out where the table goes */
    public EnvCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public String name() {
        return "env";
    }

    @Override
    public String arguments() {
        return "";
    }

    @Override
    public String summary() {
        return "list the environment variables ZRM reads, with their defaults";
    }

    @Override
    public int run(List<String> args) {
        if (!args.isEmpty()) {
            throw new LaunchException("`zrm env` takes no arguments");
        }
        for (EnvVar v : EnvRegistry.all()) {
            out.printf("%-30s %-28s %s%s%n", v.name(), v.defaultValueIfAny().map(d -> "default " + d).orElse(""),
                    v.description(), v.secret() ? " (secret)" : "");
        }
        return 0;
    }
}
